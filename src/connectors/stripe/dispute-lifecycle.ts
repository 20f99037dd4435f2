// Stripe's dispute lifecycle (stripe@23.1.0 Dispute.Status): every charge.dispute.* event carries
// the whole dispute object, and its `balance_transactions` are the money that moved — withdrawn
// (amount < 0) and reinstated (amount > 0), each with the `fee` Stripe charged or returned.
// Inquiries (warning_*) withdraw nothing: they have no balance transactions until they escalate to
// a chargeback (needs_response). Funds are posted per balance transaction, once, so any order of
// events books the same money; the status only moves forward (stage), and a final one ends it.

import type { DisputeBalanceTransaction } from '../contract.ts';
import type { DisputeOutcome, DisputeRecordState, DisputeStep } from '../../core/disputes.ts';

export interface StripeDisputeRow {
  readonly stage: number;
  readonly final: DisputeOutcome | null;
  /** Whether Stripe moves funds in this status (inquiries never do). */
  readonly inquiry: boolean;
}

export const STRIPE_DISPUTE_LIFECYCLE: Readonly<Record<string, StripeDisputeRow>> = {
  warning_needs_response: { stage: 0, final: null, inquiry: true },
  warning_under_review: { stage: 1, final: null, inquiry: true },
  warning_closed: { stage: 9, final: 'closed', inquiry: true },
  needs_response: { stage: 2, final: null, inquiry: false },
  under_review: { stage: 3, final: null, inquiry: false },
  appeal_needs_response: { stage: 4, final: null, inquiry: false },
  appeal_under_review: { stage: 5, final: null, inquiry: false },
  won: { stage: 9, final: 'won', inquiry: false },
  lost: { stage: 9, final: 'lost', inquiry: false },
  // Prevented before it became a chargeback (e.g. a network pre-dispute resolution): nothing kept.
  prevented: { stage: 9, final: 'closed', inquiry: false },
};

/** One Stripe dispute object (as an event carried it) against the dispute as recorded. */
export function stripeDisputeStep(current: DisputeRecordState | null, status: string, transactions: readonly DisputeBalanceTransaction[]): DisputeStep {
  const row = STRIPE_DISPUTE_LIFECYCLE[status];
  if (row === undefined) return { kind: 'stale', reason: `dispute status ${status} is not one stripe@23.1.0 documents` };
  // The money is what Stripe booked, whatever the status says: an older object has a subset of the
  // same balance transactions, each posted once by its id.
  const moves = transactions.map((t) => ({ key: t.id, delta: -t.amount, fee: t.fee, currency: t.currency }));
  if (current !== null && row.stage < current.stage) {
    return { kind: 'step', stage: current.stage, moves, reinstated: false, outcome: null, providerStatus: status, behind: true };
  }
  return { kind: 'step', stage: row.stage, moves, reinstated: transactions.some((t) => t.amount > 0), outcome: row.final, providerStatus: status };
}
