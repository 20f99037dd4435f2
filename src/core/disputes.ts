// A dispute as the gateway records it, whatever the provider: what the provider has withdrawn
// from us now, how far its lifecycle has gone, and whether it is decided. Each provider's own
// lifecycle (src/connectors/<provider>/dispute-lifecycle.ts) turns one of its events into a
// DisputeStep; planDispute() turns that step into the ledger postings and merchant events it
// causes. Pure: the caller reads the record and the postings already written, and writes the plan.
//
// Money is booked only when it moves at the provider: each movement has a key of the provider's
// own (a Stripe balance transaction, an Adyen event code), posted once whatever order events
// arrive in. A dispute decided `lost` writes what is still withdrawn off the merchant's payable.

import { ledgerAccounts } from './ledger.ts';
import type { LedgerLine, Posting } from './ledger.ts';

export const DISPUTE_STATUSES = ['opened', 'funds_withdrawn', 'funds_reinstated', 'won', 'lost', 'closed'] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];
/** How a dispute ends: won (funds with the merchant), lost (funds kept by the cardholder), closed (an inquiry or alert that moved nothing). */
export type DisputeOutcome = 'won' | 'lost' | 'closed';

export const isFinalDispute = (s: DisputeStatus): boolean => s === 'won' || s === 'lost' || s === 'closed';

export interface DisputeRecordState {
  readonly status: DisputeStatus;
  readonly amount: number;
  readonly currency: string;
  /** What the provider holds back from us for this dispute now (minor units, >= 0). */
  readonly withdrawn: number;
  /** The rank, in the provider's lifecycle, of the last event applied (an event ranked lower is stale). */
  readonly stage: number;
  /** The merchant can no longer defend (Adyen DISPUTE_DEFENSE_PERIOD_ENDED): a withdrawal then ends it lost. */
  readonly defenseEnded: boolean;
}

/** One movement of money at the provider: `delta` > 0 withdraws, < 0 reinstates; `fee` > 0 is charged, < 0 returned. */
export interface DisputeMove {
  readonly key: string;
  readonly delta: number;
  readonly fee: number;
  readonly currency: string;
}

/** What one provider event means for the dispute, as its lifecycle decides it. */
export type DisputeStep =
  | { readonly kind: 'stale'; readonly reason: string }
  | {
      readonly kind: 'step';
      readonly stage: number;
      readonly moves: readonly DisputeMove[];
      /** The provider says the funds were reinstated by this step (status funds_reinstated even if we never saw them go). */
      readonly reinstated: boolean;
      readonly outcome: DisputeOutcome | null;
      readonly defenseEnded?: boolean;
      /** The event is older than the stage applied: its money (if new) is booked, its status is not taken. */
      readonly behind?: boolean;
      /** The provider's own name for where the dispute is (Stripe status, Adyen eventCode/disputeStatus). */
      readonly providerStatus: string;
    };

export type DisputeEventType = 'dispute.opened' | 'dispute.funds_withdrawn' | 'dispute.funds_reinstated' | 'dispute.won' | 'dispute.lost' | 'dispute.closed';

export interface PlannedPosting {
  /** Unique per cause (ledger_transactions.source): a second write of it writes nothing. */
  readonly source: string;
  readonly posting: Posting;
}

export interface DisputePlan {
  readonly next: DisputeRecordState;
  readonly fees: number;
  readonly postings: readonly PlannedPosting[];
  readonly events: readonly DisputeEventType[];
  readonly providerStatus: string;
}

export interface DisputeAccounts {
  readonly disputeId: string;
  readonly connector: string;
  readonly merchantId: string;
}

function pair(debit: string, credit: string, amount: number, currency: string): LedgerLine[] {
  const [d, c] = amount >= 0 ? [debit, credit] : [credit, debit];
  const a = Math.abs(amount);
  return [
    { account: d, direction: 'debit', amount: a, currency },
    { account: c, direction: 'credit', amount: a, currency },
  ];
}

/** The source of a dispute's posting: `dispute:<id>:<key>`; ledger check reads them back by this prefix. */
export const disputeSource = (disputeId: string, key: string): string => `dispute:${disputeId}:${key}`;

/**
 * The postings and merchant events of one step. `posted` holds the sources already written for
 * this dispute (a movement seen before moves nothing again). `current` is null for a dispute
 * first heard of now.
 */
export function planDispute(current: DisputeRecordState | null, first: { amount: number; currency: string }, step: Extract<DisputeStep, { kind: 'step' }>, a: DisputeAccounts, posted: ReadonlySet<string>): DisputePlan {
  const base: DisputeRecordState = current ?? { status: 'opened', amount: first.amount, currency: first.currency, withdrawn: 0, stage: -1, defenseEnded: false };
  const receivable = ledgerAccounts.connectorReceivable(a.connector);
  const disputes = ledgerAccounts.disputes(a.merchantId);
  const payable = ledgerAccounts.merchantPayable(a.merchantId);
  const fees = ledgerAccounts.fees(a.connector);
  const postings: PlannedPosting[] = [];
  const events: DisputeEventType[] = current === null ? ['dispute.opened'] : [];
  let withdrawn = base.withdrawn;
  let feeTotal = 0;
  for (const m of step.moves) {
    const source = disputeSource(a.disputeId, m.key);
    if (posted.has(source)) continue;
    if (m.delta !== 0) {
      // Withdrawn: the provider owes us less and the merchant's disputes account holds it; reinstated: back.
      postings.push({ source, posting: { kind: m.delta > 0 ? 'dispute_withdrawn' : 'dispute_reinstated', lines: pair(disputes, receivable, m.delta, m.currency) } });
      // One event per movement seen (a Stripe event may carry the withdrawal and the reinstatement at once).
      if (withdrawn === 0 && withdrawn + m.delta > 0) events.push('dispute.funds_withdrawn');
      if (withdrawn > 0 && withdrawn + m.delta === 0) events.push('dispute.funds_reinstated');
      withdrawn += m.delta;
    }
    if (m.fee !== 0) {
      postings.push({ source: `${source}:fee`, posting: { kind: 'dispute_fee', lines: pair(fees, receivable, m.fee, m.currency) } });
      feeTotal += m.fee;
    }
  }
  if (withdrawn < 0) throw new RangeError(`dispute ${a.disputeId}: reinstated more than was withdrawn (${withdrawn})`);
  const lostSource = disputeSource(a.disputeId, 'lost');
  if (step.outcome === 'lost' && withdrawn > 0 && !posted.has(lostSource)) {
    // Lost: what the provider keeps is the merchant's loss, written off its payable.
    postings.push({ source: lostSource, posting: { kind: 'dispute_lost', lines: pair(payable, disputes, withdrawn, base.currency) } });
  }
  let status: DisputeStatus;
  if (step.outcome !== null) status = step.outcome;
  else if (withdrawn > 0) status = 'funds_withdrawn';
  else if (step.reinstated || base.status === 'funds_withdrawn' || base.status === 'funds_reinstated') status = 'funds_reinstated';
  else status = 'opened';
  if (step.outcome !== null) events.push(`dispute.${step.outcome}`);
  const next: DisputeRecordState = { ...base, status, withdrawn, stage: Math.max(base.stage, step.stage), defenseEnded: base.defenseEnded || step.defenseEnded === true };
  return { next, fees: feeTotal, postings, events, providerStatus: step.providerStatus };
}
