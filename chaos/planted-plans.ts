// Each planted bug's plan (docs/testing.md): the lifecycles its bug lives in, the faults that give
// it its chance, and a seed. The planted-bug test runs these; `npm run chaos -- --plant <bug>` runs
// the whole workload with the bug instead.

import type { FaultKind, PaymentPlan, ProviderOp } from './plan.ts';
import { PARTIAL_CARD } from './plan.ts';
import type { PlantedBug } from './planted-bugs.ts';

/**
 * Each bug's plan: the lifecycles it lives in (`keep`: only those are driven, `payments` of them),
 * the faults that give it its chance (a bug in timeout handling needs timeouts), and a seed. A run
 * proves the invariant catches the bug, not that the gateway survives a long run (that is
 * `npm run chaos` and the quick pass), so it carries nothing its bug does not need.
 */
export interface Aim {
  readonly keep: (p: PaymentPlan) => boolean;
  readonly payments: number;
  readonly kinds: readonly FaultKind[];
  readonly rate: number;
  readonly accounts?: readonly string[];
  readonly ops?: readonly ProviderOp[];
  readonly webhookDelayMs?: number;
  /** Where the seed search starts. */
  readonly seed: number;
  /** How long to wait for quiescence (default 20 s). */
  readonly quiesceMs?: number;
  /** How long the driver waits for a payment to settle (default 30 s). */
  readonly settleTimeoutMs?: number;
  /** release_failure faults of one variant only. */
  readonly releaseMode?: 'refused' | 'fail_later';
  /** key_expiry runs: the share of refunding payments on the short-keys accounts (default the full workload's). */
  readonly shortKeysShare?: number;
  /** Of the approved payments, the share paid with a vaulted card (default 0: the other bugs' workloads as they were). */
  readonly vaultedShare?: number;
}

const APPROVED = '4242424242424242';
/** An approved card payment with no customer authentication (the challenge lifecycles wait out deadlines). */
const approved = (p: PaymentPlan): boolean => p.card === APPROVED && p.authentication === undefined;
/** Two refunds in flight together, where they stay in flight until a webhook settles them (Adyen: EUR). */
const asyncRefundPair = (p: PaymentPlan): boolean => approved(p) && p.currency === 'EUR' && p.steps.some((s) => s.kind === 'refund_pair');
const refundPair = (p: PaymentPlan): boolean => approved(p) && p.steps.some((s) => s.kind === 'refund_pair');
const refunded = (p: PaymentPlan): boolean => approved(p) && p.steps.some((s) => s.kind === 'refund' || s.kind === 'refund_pair');
/** An approved IDR payment: about half of them go to Adyen, where the bug charges 100 times the amount. */
const approvedIdr = (p: PaymentPlan): boolean => approved(p) && p.currency === 'IDR';
/** A partial approval on Stripe under automatic capture: its release is a refund, accepted as pending when the fault meets it. */
const partialAutomatic = (p: PaymentPlan): boolean => p.card === PARTIAL_CARD && p.captureMethod === 'automatic';
/** Customers who never come back before the deadline. */
const leavesTheCustomerWaiting = (p: PaymentPlan): boolean => p.authentication?.lifecycle === 'abandon' || p.authentication?.lifecycle === 'complete_late';
/** An approved manual-capture USD payment (Stripe first) that the driver voids or captures. */
const voidedOrCaptured = (p: PaymentPlan): boolean =>
  approved(p) && p.currency === 'USD' && p.captureMethod === 'manual' && p.steps.some((s) => s.kind === 'void' || s.kind === 'capture');
/** A challenged payment whose approval would be captured: automatic capture, or a capture step. */
const challengedAndCaptured = (p: PaymentPlan): boolean =>
  p.authentication !== undefined && (p.captureMethod === 'automatic' || p.steps.some((s) => s.kind === 'capture' || s.kind === 'race' || s.kind === 'over_capture'));

export const PLANTED_PLANS: Readonly<Record<PlantedBug, Aim>> = {
  // Authorizations whose answers are lost: the bug fails them over.
  failover_on_timeout: { keep: approved, payments: 10, kinds: ['latency_before', 'accept_then_drop'], rate: 0.5, ops: ['authorize'], seed: 1100 },
  // Answers lost after the provider acted, where a resend with another key makes it act again: Adyen
  // keeps no payment per merchant reference (EUR goes to Adyen first).
  // Webhooks late, so the worker's lost answer, not the provider's notification, decides what happens next.
  new_key_per_retry: { keep: (p) => approved(p) && p.currency === 'EUR', payments: 8, kinds: ['accept_then_drop', 'latency_before'], rate: 0.5, accounts: ['adyen_c'], ops: ['authorize', 'refund'], webhookDelayMs: 3000, seed: 1001 },
  // Events arriving while two refunds of the same amount are in flight (webhooks held 2 s: both
  // refunds of a pair are in flight when the first one's event arrives).
  stale_webhook: { keep: asyncRefundPair, payments: 8, kinds: ['webhook_duplicate', 'webhook_reorder'], rate: 0.2, webhookDelayMs: 2_000, seed: 1002 },
  // Lost updates need concurrent transitions of one payment: worker answers racing webhooks.
  skip_version_check: { keep: refundPair, payments: 12, kinds: ['webhook_duplicate', 'webhook_reorder'], rate: 0.2, seed: 1003 },
  // No faults needed: the over-refund step of an approved payment is accepted.
  refund_without_amount_check: { keep: (p) => approved(p) && p.steps.some((s) => s.kind === 'over_refund'), payments: 8, kinds: [], rate: 0, seed: 1004 },
  // No faults needed: IDR payments routed to Adyen are charged 100x there.
  adyen_amounts_in_iso_units: { keep: approvedIdr, payments: 8, kinds: [], rate: 0, seed: 1005 },
  // Refunds whose answers are lost and whose resends are replayed past a retention of seconds; the
  // held webhooks make the quiescence wait longer.
  // Every one of them on the short-keys accounts, where the faults wait for a refund.
  retention_not_checked_at_execution: { keep: refunded, payments: 12, kinds: ['key_expiry'], rate: 0.1, seed: 1006, quiesceMs: 15_000, shortKeysShare: 1 },
  // Authorizations refused in one execution while a second one of the same row is approved.
  superseded_refusal_as_proof: { keep: approved, payments: 10, kinds: ['duplicate_execution'], rate: 0.3, ops: ['authorize'], seed: 1007 },
  // Release refunds (USD, automatic capture, the partial-approval card on Stripe) that the sandbox
  // accepts as pending and fails later.
  // Release refunds (as above) performed, their answers lost, reversed at once, the failure events
  // ahead of the success.
  release_events_to_current_round: { keep: partialAutomatic, payments: 3, kinds: ['release_reversed_first'], rate: 0.5, accounts: ['stripe_c'], seed: 1012 },
  accepted_release_is_released: { keep: partialAutomatic, payments: 3, kinds: ['release_failure'], rate: 0.5, accounts: ['stripe_c'], releaseMode: 'fail_later', seed: 1009 },
  // One-call Stripe authorizations (USD goes to Stripe first) held by the sandbox past the client's
  // timeout (the key held, the create run later): the lookup runs while nothing is there yet.
  not_found_by_list_is_proof: { keep: (p) => approved(p) && p.currency === 'USD', payments: 16, kinds: ['latency_after'], rate: 0.5, accounts: ['stripe_c'], ops: ['authorize'], seed: 1010 },
  // Approved EUR payments (Adyen first), either capture method: the next /payments held past the
  // resends, fenced by technical cancel, failed over to Stripe, then authorised at Adyen after all.
  fenced_attempt_not_watched: { keep: (p) => approved(p) && p.currency === 'EUR', payments: 4, kinds: ['authorise_after_cancel'], rate: 0.05, accounts: ['adyen_c'], seed: 1081 },
  // Customers who leave the challenge page (or come back after the deadline): no faults needed; the
  // driver waits out each deadline, so a short quiescence wait. Their payments never settle under
  // the bug: the driver stops waiting for them a few seconds after the (8 s) deadline.
  expiry_never_abandons: { keep: leavesTheCustomerWaiting, payments: 3, kinds: [], rate: 0, seed: 1011, quiesceMs: 10_000, settleTimeoutMs: 12_000 },
  // Challenged payments the driver captures (or that capture automatically): no faults needed.
  action_required_as_approval: { keep: challengedAndCaptured, payments: 4, kinds: [], rate: 0, seed: 1012, quiesceMs: 10_000 },
  // Customers who leave (their attempts never cancelled) or complete after the deadline.
  abandonment_without_cancel: { keep: leavesTheCustomerWaiting, payments: 3, kinds: [], rate: 0, seed: 1011, quiesceMs: 10_000 },
  // Voids and captures on Stripe (USD goes to Stripe first) whose first answer is lost and whose
  // same-key resend (the SDK's own) is refused "already canceled / captured".
  already_done_as_refusal: { keep: voidedOrCaptured, payments: 16, kinds: ['already_done'], rate: 0.8, accounts: ['stripe_c'], ops: ['void', 'capture'], seed: 1013 },
  // Issue 41: database outages longer than the workers' retry budget, begun while jobs are in hand
  // (webhook events being applied, mostly). Under the bug a payment whose job failed never settles:
  // the driver stops waiting for it soon.
  // No faults needed: every payment is paid with a vaulted card, whose send the bug writes into its row.
  card_in_outbox_row: { keep: approved, payments: 3, kinds: [], rate: 0, seed: 1014, vaultedShare: 1, quiesceMs: 10_000 },
  failed_job_blocks_row: { keep: approved, payments: 6, kinds: ['pg_outage_long'], rate: 0.08, seed: 1013, quiesceMs: 10_000, settleTimeoutMs: 6_000 },
};
