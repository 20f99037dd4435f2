// Two ledger checks for money that is not the merchant's (issue 29):
// - settled_exceeds_booked: the capture gross a provider settled for an attempt (its settlement
//   rows that settle a capture or take one back: Adyen `Settled` and `CaptureFailed`) exceeds the
//   capture booked for it (captures and held-for-release, less capture reversals). That is customer money at the provider the books do not know of — a late
//   approval's capture nobody booked. Refunds and disputes are booked at confirmation, days before
//   their settlement rows, so a receivable briefly negative is normal and not checked here.
//   Transactions written before migration 0015 name no attempt: a payment with any of those is
//   compared as a whole.
// - held_past_bound: money held for release on an attempt (held_for_release credits less
//   release_refunded debits) still open longer than the release bound after it was booked.

import { sql } from 'drizzle-orm';
import type { Db } from '../store/db.ts';

/**
 * Settlement row types that settle a capture or take one back (Adyen settlement details). A
 * settlement posting's description starts with its row's type (settlementDescription).
 */
export const CAPTURE_ROW_TYPES = ['Settled', 'CaptureFailed'] as const;

export type HeldProblemKind = 'settled_exceeds_booked' | 'held_past_bound';

export interface HeldProblem {
  readonly kind: HeldProblemKind;
  readonly id: string;
  readonly detail: string;
}

/** How long a release may keep money held before the check fails. 72 h: a payment's own lifetime bound. */
export const DEFAULT_HELD_BOUND_MS = 72 * 3_600_000;

export interface HeldCheckOptions {
  readonly now?: Date;
  readonly heldBoundMs?: number;
}

export async function settledBeyondBooked(db: Db): Promise<HeldProblem[]> {
  const types = sql`(${sql.join(CAPTURE_ROW_TYPES.map((t) => sql`${t}`), sql`, `)})`;
  const r = await db.execute<{ key: string; currency: string; booked: string; settled: string }>(sql`
    WITH tx AS (
      SELECT t.id, t.payment_id, t.attempt_id,
             CASE WHEN t.kind <> 'settlement' THEN t.kind WHEN split_part(t.description, ' ', 1) IN ${types} THEN 'settled_capture' END AS kind,
             bool_or(t.attempt_id IS NULL) OVER (PARTITION BY t.payment_id) AS legacy
        FROM ledger_transactions t
       WHERE t.payment_id IS NOT NULL AND t.kind IN ('capture', 'capture_reversed', 'held_for_release', 'settlement')
    )
    SELECT CASE WHEN tx.legacy THEN 'payment ' || tx.payment_id ELSE 'attempt ' || tx.attempt_id END AS key, e.currency,
           sum(CASE WHEN tx.kind IN ('capture', 'held_for_release') AND e.direction = 'debit' THEN e.amount
                    WHEN tx.kind = 'capture_reversed' AND e.direction = 'credit' THEN -e.amount ELSE 0 END) AS booked,
           sum(CASE WHEN tx.kind = 'settled_capture' THEN (CASE e.direction WHEN 'credit' THEN e.amount ELSE -e.amount END) ELSE 0 END) AS settled
      FROM tx JOIN ledger_entries e ON e.transaction_id = tx.id AND e.account LIKE 'connector:%:receivable'
     GROUP BY 1, e.currency
    HAVING sum(CASE WHEN tx.kind = 'settled_capture' THEN (CASE e.direction WHEN 'credit' THEN e.amount ELSE -e.amount END) ELSE 0 END)
         > sum(CASE WHEN tx.kind IN ('capture', 'held_for_release') AND e.direction = 'debit' THEN e.amount
                    WHEN tx.kind = 'capture_reversed' AND e.direction = 'credit' THEN -e.amount ELSE 0 END)
     ORDER BY 1`);
  return r.rows.map((x) => ({
    kind: 'settled_exceeds_booked' as const,
    id: x.key.replace(/^(payment|attempt) /, ''),
    detail: `${x.key}: the provider settled ${x.settled} ${x.currency} gross, the books hold a capture of ${x.booked}`,
  }));
}

export async function heldPastBound(db: Db, o: HeldCheckOptions): Promise<HeldProblem[]> {
  const now = (o.now ?? new Date()).toISOString();
  const bound = o.heldBoundMs ?? DEFAULT_HELD_BOUND_MS;
  const r = await db.execute<{ attempt_id: string; payment_id: string; currency: string; open: string; since: string | Date }>(sql`
    SELECT t.attempt_id, t.payment_id, e.currency,
           sum(CASE e.direction WHEN 'credit' THEN e.amount ELSE -e.amount END) AS open,
           max(t.created_at) FILTER (WHERE t.kind = 'held_for_release') AS since
      FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id AND e.account LIKE 'connector:%:held_for_release'
     WHERE t.kind IN ('held_for_release', 'release_refunded')
     GROUP BY t.attempt_id, t.payment_id, e.currency
    HAVING sum(CASE e.direction WHEN 'credit' THEN e.amount ELSE -e.amount END) > 0
       AND max(t.created_at) FILTER (WHERE t.kind = 'held_for_release') <= ${now}::timestamptz - ${bound} * interval '1 millisecond'
     ORDER BY t.attempt_id`);
  return r.rows.map((x) => ({
    kind: 'held_past_bound' as const,
    id: x.attempt_id,
    detail: `payment ${x.payment_id}: ${x.open} ${x.currency} held for release since ${new Date(x.since).toISOString()}, past the ${Math.round(bound / 3_600_000)} h bound: the release was never confirmed`,
  }));
}
