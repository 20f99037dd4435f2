// `switchyard ledger check`: every ledger transaction balances per currency; for every payment
// the postings of its transitions agree with the payment (what the connector owes us on it =
// captured - refunded); and every dispute's postings agree with its status (withdrawn while
// opened or lost, held in the merchant's disputes account only while opened). Settlement
// postings move receivable to the bank; two checks bound them (issue 29, src/ledger/held-checks.ts):
// no attempt's settled gross exceeds the capture booked for it, and no held-for-release money
// stays open past the release bound.

import { sql } from 'drizzle-orm';
import type { Db } from '../store/db.ts';
import { heldPastBound, settledBeyondBooked } from './held-checks.ts';
import type { HeldCheckOptions, HeldProblemKind } from './held-checks.ts';

export interface LedgerProblem {
  readonly kind: 'unbalanced_transaction' | 'payment_mismatch' | 'dispute_mismatch' | HeldProblemKind;
  readonly id: string;
  readonly detail: string;
}

export interface LedgerCheckResult {
  readonly transactions: number;
  readonly payments: number;
  readonly disputes: number;
  readonly problems: readonly LedgerProblem[];
}

export async function checkLedger(db: Db, o: HeldCheckOptions = {}): Promise<LedgerCheckResult> {
  const unbalanced = await db.execute<{ id: string; currency: string; net: string }>(sql`
    SELECT transaction_id AS id, currency, sum(CASE direction WHEN 'debit' THEN amount ELSE -amount END) AS net
      FROM ledger_entries GROUP BY transaction_id, currency
    HAVING sum(CASE direction WHEN 'debit' THEN amount ELSE -amount END) <> 0`);
  const mismatched = await db.execute<{ id: string; expected: string; booked: string; currency: string }>(sql`
    SELECT p.id, p.currency, (p.amount_captured - p.amount_refunded) AS expected,
           coalesce(sum(CASE e.direction WHEN 'debit' THEN e.amount ELSE -e.amount END), 0) AS booked
      FROM payments p
      LEFT JOIN ledger_transactions t ON t.payment_id = p.id AND t.kind IN ('capture', 'capture_reversed', 'refund', 'refund_reversed')
      LEFT JOIN ledger_entries e ON e.transaction_id = t.id AND e.account LIKE 'connector:%:receivable'
     GROUP BY p.id, p.currency, p.amount_captured, p.amount_refunded
    HAVING (p.amount_captured - p.amount_refunded) <> coalesce(sum(CASE e.direction WHEN 'debit' THEN e.amount ELSE -e.amount END), 0)`);
  // Per dispute: the receivable moved by -amount while opened or lost; the disputes account holds amount while opened.
  const disputeRows = await db.execute<{ id: string; status: string; amount: string; currency: string; withdrawn: string; held: string }>(sql`
    SELECT d.id, d.status, d.amount, d.currency,
           coalesce(sum(CASE WHEN e.account LIKE 'connector:%:receivable' THEN (CASE e.direction WHEN 'credit' THEN e.amount ELSE -e.amount END) END), 0) AS withdrawn,
           coalesce(sum(CASE WHEN e.account LIKE 'merchant:%:disputes' THEN (CASE e.direction WHEN 'debit' THEN e.amount ELSE -e.amount END) END), 0) AS held
      FROM disputes d
      LEFT JOIN ledger_transactions t ON t.source IN ('dispute:' || d.id || ':opened', 'dispute:' || d.id || ':won', 'dispute:' || d.id || ':lost')
      LEFT JOIN ledger_entries e ON e.transaction_id = t.id
     GROUP BY d.id, d.status, d.amount, d.currency`);
  const disputeProblems: LedgerProblem[] = [];
  for (const d of disputeRows.rows) {
    const withdrawn = d.status === 'opened' || d.status === 'lost' ? Number(d.amount) : 0;
    const held = d.status === 'opened' ? Number(d.amount) : 0;
    if (Number(d.withdrawn) !== withdrawn || Number(d.held) !== held) {
      disputeProblems.push({ kind: 'dispute_mismatch', id: d.id, detail: `${d.status} ${d.amount} ${d.currency}: expected withdrawn ${withdrawn} / held ${held}, booked ${d.withdrawn} / ${d.held}` });
    }
  }
  const counts = await db.execute<{ transactions: string; payments: string }>(sql`
    SELECT (SELECT count(*) FROM ledger_transactions) AS transactions, (SELECT count(*) FROM payments) AS payments`);
  const problems: LedgerProblem[] = [
    ...unbalanced.rows.map((r) => ({ kind: 'unbalanced_transaction' as const, id: r.id, detail: `${r.currency} debits - credits = ${r.net}` })),
    ...mismatched.rows.map((r) => ({ kind: 'payment_mismatch' as const, id: r.id, detail: `captured - refunded = ${r.expected} ${r.currency}, receivable booked ${r.booked}` })),
    ...disputeProblems,
    ...(await settledBeyondBooked(db)),
    ...(await heldPastBound(db, o)),
  ];
  return { transactions: Number(counts.rows[0]?.transactions ?? 0), payments: Number(counts.rows[0]?.payments ?? 0), disputes: disputeRows.rows.length, problems };
}
