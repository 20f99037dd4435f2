// `switchyard ledger check`: every ledger transaction balances per currency; for every payment
// the postings of its transitions agree with the payment (what the connector owes us on it =
// captured - refunded); and every dispute's postings agree with its record (what the provider
// withdrew, held in the merchant's disputes account until lost, then written off; its fees).
// Settlement postings move receivable to the bank; two checks bound them (issue 29,
// src/ledger/held-checks.ts): no attempt's settled gross exceeds the capture booked for it, and no
// held-for-release money stays open past the release bound.

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
  // Per dispute (its postings are sourced dispute:<id>:…): the receivable moved by what the provider
  // withdrew (fees apart); the disputes account holds it until the dispute is lost (then written
  // off the payable); the fees account has the dispute fees charged.
  const disputeRows = await db.execute<{ id: string; status: string; withdrawn: string; fees: string; currency: string; moved: string; held: string; written_off: string; fees_booked: string }>(sql`
    SELECT d.id, d.status, d.withdrawn, d.fees, d.currency,
           coalesce(sum(CASE WHEN t.kind <> 'dispute_fee' AND e.account LIKE 'connector:%:receivable' THEN (CASE e.direction WHEN 'credit' THEN e.amount ELSE -e.amount END) END), 0) AS moved,
           coalesce(sum(CASE WHEN e.account LIKE 'merchant:%:disputes' THEN (CASE e.direction WHEN 'debit' THEN e.amount ELSE -e.amount END) END), 0) AS held,
           coalesce(sum(CASE WHEN e.account LIKE 'merchant:%:payable' THEN (CASE e.direction WHEN 'debit' THEN e.amount ELSE -e.amount END) END), 0) AS written_off,
           coalesce(sum(CASE WHEN t.kind = 'dispute_fee' AND e.account LIKE 'connector:%:fees' THEN (CASE e.direction WHEN 'debit' THEN e.amount ELSE -e.amount END) END), 0) AS fees_booked
      FROM disputes d
      LEFT JOIN ledger_transactions t ON t.source LIKE 'dispute:%' AND split_part(t.source, ':', 2) = d.id
      LEFT JOIN ledger_entries e ON e.transaction_id = t.id
     GROUP BY d.id, d.status, d.withdrawn, d.fees, d.currency`);
  const disputeProblems: LedgerProblem[] = [];
  for (const d of disputeRows.rows) {
    const withdrawn = Number(d.withdrawn);
    const lost = d.status === 'lost';
    const expected = { moved: withdrawn, held: lost ? 0 : withdrawn, writtenOff: lost ? withdrawn : 0, fees: Number(d.fees) };
    const booked = { moved: Number(d.moved), held: Number(d.held), writtenOff: Number(d.written_off), fees: Number(d.fees_booked) };
    if (JSON.stringify(expected) !== JSON.stringify(booked)) {
      disputeProblems.push({ kind: 'dispute_mismatch', id: d.id, detail: `${d.status} ${d.currency}: expected withdrawn ${expected.moved} / held ${expected.held} / written off ${expected.writtenOff} / fees ${expected.fees}, booked ${booked.moved} / ${booked.held} / ${booked.writtenOff} / ${booked.fees}` });
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
