// Payment states and the table of legal edges. This table is the single source of truth:
// step() never takes an edge outside it, and the database trigger is generated from it.

export const PAYMENT_STATES = [
  'created',
  'authorizing',
  'auth_unknown',
  'requires_action', // the customer is at the provider's authentication page
  'authorized',
  'capturing',
  'captured',
  'voiding',
  'voided',
  'declined',
  'expired',
  'failed',
  'needs_review',
] as const;

export type PaymentState = (typeof PAYMENT_STATES)[number];

/** States a payment never leaves, except by the reversal edges listed in REVERSAL_EDGES. */
export const TERMINAL_STATES: ReadonlySet<PaymentState> = new Set<PaymentState>([
  'captured',
  'voided',
  'declined',
  'expired',
  'failed',
]);

/** States a payment may rest in after faults stop: terminal, awaiting the merchant, or parked for a person. */
export const RESTING_STATES: ReadonlySet<PaymentState> = new Set<PaymentState>([
  ...TERMINAL_STATES,
  'authorized',
  'needs_review',
]);

export const LEGAL_EDGES: Readonly<Record<PaymentState, readonly PaymentState[]>> = {
  created: ['authorizing', 'failed'],
  // authorized|captured: approval (captured directly with automatic capture); declined: definitive no;
  // auth_unknown: outcome unknown; failed: every candidate proved uncharged and none is left.
  authorizing: ['authorized', 'captured', 'declined', 'auth_unknown', 'requires_action', 'failed', 'needs_review'],
  // authorizing: the unknown was resolved to not-charged (fenced) and another candidate is tried.
  // requires_action: a query (or late answer) found the attempt waiting for customer authentication.
  auth_unknown: ['authorizing', 'authorized', 'captured', 'declined', 'requires_action', 'failed', 'needs_review'],
  // authorizing: the customer came back and the resume call is in flight (or a step-up / failover after proof);
  // failed: the attempt was cancelled (confirmed) after the customer abandoned the page.
  // authorized|captured|declined: the provider's word arrived by webhook while the customer was away;
  // needs_review: the cancel after abandonment was refused or stayed unconfirmed;
  // voiding: the merchant voids the payment while the customer is (or may be) at the page.
  requires_action: ['authorizing', 'authorized', 'captured', 'declined', 'failed', 'needs_review', 'voiding'],
  // needs_review: the release of another attempt's unwanted approval failed past its bound.
  authorized: ['capturing', 'voiding', 'expired', 'needs_review'],
  // authorized: the capture was refused before anything was captured; captured: confirmed.
  capturing: ['captured', 'authorized', 'needs_review'],
  // capturing: a further capture while multicapture keeps the remainder open;
  // failed / needs_review: a capture rejected by the scheme after success (reversal edges).
  captured: ['capturing', 'failed', 'needs_review'],
  // authorized: the void was refused or never sent; the authorization still stands.
  // requires_action: the cancel of an attempt awaiting the customer was refused (the customer may still finish).
  voiding: ['voided', 'authorized', 'requires_action', 'needs_review'],
  // needs_review (all four): the release of an unwanted approval failed past its bound (reversal edges).
  voided: ['needs_review'],
  declined: ['needs_review'],
  expired: ['needs_review'],
  failed: ['needs_review'],
  // An operator (or late proof from the provider) settles a payment parked for review.
  needs_review: ['authorized', 'captured', 'voided', 'failed', 'declined', 'expired'],
};

/**
 * Edges that leave a terminal state: a capture reversed by the scheme after success, and a payment
 * parked because the release of an approval it did not keep failed past its bound (the customer
 * may still be charged: a person must look).
 */
export const REVERSAL_EDGES: readonly (readonly [PaymentState, PaymentState])[] = [
  ['captured', 'capturing'],
  ['captured', 'failed'],
  ['captured', 'needs_review'],
  ['voided', 'needs_review'],
  ['declined', 'needs_review'],
  ['expired', 'needs_review'],
  ['failed', 'needs_review'],
];

export function isLegalEdge(from: PaymentState, to: PaymentState): boolean {
  return LEGAL_EDGES[from].includes(to);
}

export function isPaymentState(value: unknown): value is PaymentState {
  return typeof value === 'string' && (PAYMENT_STATES as readonly string[]).includes(value);
}

export function legalEdgeList(): [PaymentState, PaymentState][] {
  const out: [PaymentState, PaymentState][] = [];
  for (const from of PAYMENT_STATES) for (const to of LEGAL_EDGES[from]) out.push([from, to]);
  return out;
}

// Refund sub-machine: requested -> pending -> succeeded | failed; succeeded -> reversed.
export const REFUND_STATES = ['requested', 'pending', 'succeeded', 'failed', 'reversed'] as const;
export type RefundState = (typeof REFUND_STATES)[number];
export const REFUND_EDGES: Readonly<Record<RefundState, readonly RefundState[]>> = {
  requested: ['pending', 'succeeded', 'failed'],
  pending: ['succeeded', 'failed'],
  succeeded: ['reversed'],
  failed: [],
  reversed: [],
};

// Capture sub-machine: requested -> pending -> succeeded | failed; succeeded -> reversed (failed after success).
export const CAPTURE_STATES = ['requested', 'pending', 'succeeded', 'failed', 'reversed'] as const;
export type CaptureState = (typeof CAPTURE_STATES)[number];
export const CAPTURE_EDGES: Readonly<Record<CaptureState, readonly CaptureState[]>> = {
  requested: ['pending', 'succeeded', 'failed'],
  pending: ['succeeded', 'failed'],
  succeeded: ['reversed'],
  failed: [],
  reversed: [],
};

export function assertNever(x: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(x)}`);
}
