// Effects are recorded, not run: the store writes them as outbox rows in the transition's
// transaction, and workers execute them after the commit.

import type { LookupSubject, ProviderOperation, TimerKind } from './inputs.ts';

export interface ProviderCallEffect {
  readonly type: 'provider_call';
  readonly op: ProviderOperation;
  readonly connector: string;
  readonly attemptId: string;
  /** Idempotency key of the logical operation; null for reads (query). */
  readonly providerKey: string | null;
  readonly amount: number;
  readonly currency: string;
  readonly captureId?: string;
  readonly refundId?: string;
  /** For void: the payment's void number (VoidOperation.no), returned with the answer. */
  readonly voidNo?: number;
  /** For release: our reference on the round's object at the provider (`releaseRefundId`), which its events echo. */
  readonly reference?: string;
  /** For authorize: the send number, returned with the answer. */
  readonly sendNo?: number;
  /** For capture: keep the remainder capturable (multicapture). */
  readonly final?: boolean;
  /** Not before this instant (ISO 8601); absent = now. */
  readonly runAt?: string;
  /** For authorize: ask the provider to authenticate the customer whatever its own rules say (step-up). */
  readonly forceAuthentication?: boolean;
  /** For lookup: the operation whose provider object is read, and which lookup of it this is (1, 2, …). */
  readonly lookup?: LookupSubject & { readonly n: number };
}

export interface TimerEffect {
  readonly type: 'timer';
  readonly timer: TimerKind;
  readonly attemptId?: string;
  readonly runAt: string;
}

export const MERCHANT_EVENT_TYPES = [
  'payment.requires_action',
  'payment.authorized',
  'payment.declined',
  'payment.failed',
  'payment.captured',
  'payment.capture_failed',
  'payment.voided',
  'payment.expired',
  'payment.needs_review',
  'payment.updated',
  'refund.succeeded',
  'refund.failed',
  'refund.reversed',
  'dispute.opened',
  'dispute.funds_withdrawn',
  'dispute.funds_reinstated',
  'dispute.won',
  'dispute.lost',
  'dispute.closed',
] as const;
export type MerchantEventType = (typeof MERCHANT_EVENT_TYPES)[number];

export interface MerchantEventEffect {
  readonly type: 'merchant_event';
  readonly event: MerchantEventType;
  readonly refundId?: string;
  readonly captureId?: string;
}

export type DiscrepancyKind =
  | 'late_approval' // an approval for a payment that had already failed, voided, expired or declined: live money
  | 'late_authentication' // an authentication completed after its attempt was cancelled for abandonment: live money
  | 'release_failed' // voiding / refunding an unwanted approval did not succeed
  | 'refund_unresolved'
  | 'capture_unresolved'
  | 'refunds_exceed_captured'
  | 'fence_after_approval' // the provider confirmed our fence of an attempt after its approval, with money moved since
  | 'fact_after_resolution' // a provider fact (a capture confirmed, ...) that the payment's resolved state cannot take
  | 'operator_override'; // an operator resolved a payment the guards refused, naming the reason

export interface DiscrepancyEffect {
  readonly type: 'discrepancy';
  readonly kind: DiscrepancyKind;
  readonly attemptId?: string;
  /**
   * What the finding is about (a capture or refund id) when the same condition may be met again
   * (a parked operation swept again): with it the row has a dedupe key, so one open row stands
   * for it however many times it is found.
   */
  readonly subject?: string;
  readonly detail: string;
}

/** Money movements the ledger posts (issue: ledger). Amounts are minor units of the payment's currency. */
export interface LedgerEffect {
  readonly type: 'ledger';
  /**
   * held_for_release: captured money that is not the merchant's (a late or partial approval under
   * automatic capture, being refunded); release_refunded: its release confirmed, moved out.
   */
  readonly posting: 'capture' | 'capture_reversed' | 'refund' | 'refund_reversed' | 'held_for_release' | 'release_refunded';
  readonly amount: number;
  readonly currency: string;
  readonly connector: string;
  /** The attempt whose money moves (kept on the ledger transaction for the per-attempt checks). */
  readonly attemptId?: string;
  readonly captureId?: string;
  readonly refundId?: string;
}

/**
 * The provider answered what an open discrepancy asked (issue 41 §6): a capture or refund whose
 * outcome was unknown (`capture_unresolved`, `refund_unresolved`) is confirmed or failed after all,
 * or the live money of a late approval (`late_approval`, `late_authentication`) is given back (its
 * release confirmed; subject: the attempt).
 * The open row with this kind and subject is resolved with what the provider said, so a person is
 * not asked about a question the provider has answered. Nothing happens when no such row is open.
 */
export interface DiscrepancySettledEffect {
  readonly type: 'discrepancy_settled';
  readonly kind: 'capture_unresolved' | 'refund_unresolved' | 'late_approval' | 'late_authentication';
  readonly attemptId: string;
  readonly subject: string;
  readonly resolution: string;
}

export type Effect = ProviderCallEffect | TimerEffect | MerchantEventEffect | DiscrepancyEffect | DiscrepancySettledEffect | LedgerEffect;
