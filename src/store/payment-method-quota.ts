// SWITCHYARD_TOKENS_PER_HOUR: at most so many payment methods per merchant per clock hour (UTC),
// counted in the gateway's database so every API process shares one count. A slot is taken before
// the vault stores the card and given back when the vault refuses it (a bad number stores nothing,
// so it uses no quota). One row per merchant: the hour it counts and how many were stored in it.

import { sql } from 'drizzle-orm';
import type { DbOrTx } from './db.ts';

export const HOUR_MS = 3600_000;

export function quotaWindow(now: Date): Date {
  return new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
}

export type QuotaSlot = { readonly ok: true; readonly windowStart: Date } | { readonly ok: false; readonly retryAfterS: number };

/** Takes one slot of this hour's quota in one statement (no race between processes), or says when the next hour starts. */
export async function takeQuotaSlot(db: DbOrTx, merchantId: string, limit: number, now: Date): Promise<QuotaSlot> {
  const windowStart = quotaWindow(now);
  const at = windowStart.toISOString();
  const r = await db.execute<{ issued: number }>(sql`
    INSERT INTO payment_method_quota AS q (merchant_id, window_start, issued) VALUES (${merchantId}, ${at}::timestamptz, 1)
    ON CONFLICT (merchant_id) DO UPDATE
      SET window_start = EXCLUDED.window_start,
          issued = CASE WHEN q.window_start = EXCLUDED.window_start THEN q.issued + 1 ELSE 1 END
      WHERE q.window_start <> EXCLUDED.window_start OR q.issued < ${limit}
    RETURNING issued`);
  if (r.rows.length > 0) return { ok: true, windowStart };
  return { ok: false, retryAfterS: Math.max(1, Math.ceil((windowStart.getTime() + HOUR_MS - now.getTime()) / 1000)) };
}

/** Gives a slot back (the vault refused the card, or storing it failed). */
export async function returnQuotaSlot(db: DbOrTx, merchantId: string, windowStart: Date): Promise<void> {
  await db.execute(sql`
    UPDATE payment_method_quota SET issued = issued - 1
     WHERE merchant_id = ${merchantId} AND window_start = ${windowStart.toISOString()}::timestamptz AND issued > 0`);
}
