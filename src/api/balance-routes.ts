// GET /v1/balances: the authenticated merchant's balance per currency, summed from the ledger
// (never from payment rows: the ledger is what `ledger check` proves and what settlement uses).

import { sql } from 'drizzle-orm';
import express from 'express';
import type { Router } from 'express';
import type { z } from 'zod';
import { ledgerAccounts } from '../core/ledger.ts';
import type { Db } from '../store/db.ts';
import { safeBigint } from '../store/safe-bigint.ts';
import type { ApiContext } from './api-context.ts';
import { encodeResult, livemodeScopeOf, merchantIdOf, sendEncoded } from './http.ts';
import type { balanceList, balanceResource } from './resource-schemas.ts';

type Balance = z.infer<typeof balanceResource>;

/** `livemode`: the key's mode (the ledger of its payments only); null: every payment's, as before modes. */
export async function merchantBalances(db: Db, merchantId: string, livemode: boolean | null = null): Promise<Balance[]> {
  const payable = ledgerAccounts.merchantPayable(merchantId);
  const disputes = ledgerAccounts.disputes(merchantId);
  // Payable is a liability (credit-normal); the disputes account holds what was withdrawn (debit-normal).
  const result = await db.execute<{ currency: string; payable: string; disputed: string }>(sql`
    SELECT currency,
           COALESCE(SUM(CASE WHEN account = ${payable} THEN (CASE direction WHEN 'credit' THEN amount ELSE -amount END) END), 0)::bigint AS payable,
           COALESCE(SUM(CASE WHEN account = ${disputes} THEN (CASE direction WHEN 'debit' THEN amount ELSE -amount END) END), 0)::bigint AS disputed
      FROM ledger_entries e
     WHERE account IN (${payable}, ${disputes})
       AND (${livemode}::boolean IS NULL OR EXISTS (
             SELECT 1 FROM ledger_transactions t JOIN payments p ON p.id = t.payment_id
              WHERE t.id = e.transaction_id AND p.livemode = ${livemode}::boolean))
     GROUP BY currency
     ORDER BY currency`);
  return result.rows.map((r) => ({ object: 'balance', currency: r.currency, payable: safeBigint(r.payable, 'payable'), disputed: safeBigint(r.disputed, 'disputed') }));
}

export function balanceRoutes(ctx: ApiContext): Router {
  const router = express.Router();
  router.get('/v1/balances', async (_req, res) => {
    const data = await merchantBalances(ctx.rt.database.db, merchantIdOf(res), livemodeScopeOf(res));
    const body: z.infer<typeof balanceList> = { object: 'list', data, has_more: false, next_cursor: null };
    sendEncoded(res, encodeResult({ status: 200, body }));
  });
  return router;
}
