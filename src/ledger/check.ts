// `switchyard ledger check`: every ledger transaction balances per currency, and for every payment
// the books agree with the payment: what the connector owes us on it = captured - refunded.

import { sql } from 'drizzle-orm';
import type { Db } from '../store/db.ts';

export interface LedgerProblem {
  readonly kind: 'unbalanced_transaction' | 'payment_mismatch';
  readonly id: string;
  readonly detail: string;
}

export interface LedgerCheckResult {
  readonly transactions: number;
  readonly payments: number;
  readonly problems: readonly LedgerProblem[];
}

export async function checkLedger(db: Db): Promise<LedgerCheckResult> {
  const unbalanced = await db.execute<{ id: string; currency: string; net: string }>(sql`
    SELECT transaction_id AS id, currency, sum(CASE direction WHEN 'debit' THEN amount ELSE -amount END) AS net
      FROM ledger_entries GROUP BY transaction_id, currency
    HAVING sum(CASE direction WHEN 'debit' THEN amount ELSE -amount END) <> 0`);
  const mismatched = await db.execute<{ id: string; expected: string; booked: string; currency: string }>(sql`
    SELECT p.id, p.currency, (p.amount_captured - p.amount_refunded) AS expected,
           coalesce(sum(CASE e.direction WHEN 'debit' THEN e.amount ELSE -e.amount END), 0) AS booked
      FROM payments p
      LEFT JOIN ledger_transactions t ON t.payment_id = p.id
      LEFT JOIN ledger_entries e ON e.transaction_id = t.id AND e.account LIKE 'connector:%:receivable'
     GROUP BY p.id, p.currency, p.amount_captured, p.amount_refunded
    HAVING (p.amount_captured - p.amount_refunded) <> coalesce(sum(CASE e.direction WHEN 'debit' THEN e.amount ELSE -e.amount END), 0)`);
  const counts = await db.execute<{ transactions: string; payments: string }>(sql`
    SELECT (SELECT count(*) FROM ledger_transactions) AS transactions, (SELECT count(*) FROM payments) AS payments`);
  const problems: LedgerProblem[] = [
    ...unbalanced.rows.map((r) => ({ kind: 'unbalanced_transaction' as const, id: r.id, detail: `${r.currency} debits - credits = ${r.net}` })),
    ...mismatched.rows.map((r) => ({ kind: 'payment_mismatch' as const, id: r.id, detail: `captured - refunded = ${r.expected} ${r.currency}, receivable booked ${r.booked}` })),
  ];
  return { transactions: Number(counts.rows[0]?.transactions ?? 0), payments: Number(counts.rows[0]?.payments ?? 0), problems };
}
