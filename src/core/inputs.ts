// Everything that can happen to a payment, as data. Origins (api, worker, webhook, poll, timer,
// operator, reconcile) are recorded by the store; the core only sees the input.

import type { CallOutcome } from './outcome.ts';

/** Provider operations the core asks for. Each names one logical operation with its own key. */
export type ProviderOperation = 'prepare' | 'authorize' | 'resume' | 'query' | 'fence' | 'release' | 'capture' | 'void' | 'refund' | 'lookup';

/**
 * What a lookup (op `lookup`) reads back: the provider's object of one capture, void, refund, release
 * or fence, after the provider answered that it was already done (unknown{already_done}). `key`: the
 * operation's own idempotency key, so a lookup for void N (or release N) is never applied to N+1.
 */
export type LookupSubject =
  | { readonly op: 'capture'; readonly captureId: string }
  | { readonly op: 'refund'; readonly refundId: string }
  | { readonly op: 'void'; readonly key: string }
  | { readonly op: 'release'; readonly attemptId: string; readonly key: string }
  | { readonly op: 'fence'; readonly attemptId: string };

/** Which logical operation an answer belongs to. */
export type OperationRef =
  | { readonly op: 'prepare' | 'query' | 'fence' | 'resume'; readonly attemptId: string }
  /** providerKey: which release operation this answers (a failed one's late answer is not the current one's). */
  | { readonly op: 'release'; readonly attemptId: string; readonly providerKey?: string }
  /** sendNo: which send of the authorize call this answers (from the effect), so duplicates count once. */
  | { readonly op: 'authorize'; readonly attemptId: string; readonly sendNo?: number }
  | { readonly op: 'capture'; readonly captureId: string }
  /** n: which void of the payment this answers (from the effect): a late answer to void n is not void n+1's. Absent: the current one (recovery, rows written before). */
  | { readonly op: 'void'; readonly n?: number }
  | { readonly op: 'refund'; readonly refundId: string }
  /** n: which lookup of this operation answered (1 = the first), bounded by CorePolicy.maxQueries. */
  | { readonly op: 'lookup'; readonly about: LookupSubject; readonly n: number };

/** Facts a provider tells us on its own (webhooks, reports), already verified and normalized. */
export type ProviderFact =
  | { readonly fact: 'authorization'; readonly attemptId: string; readonly outcome: CallOutcome }
  /**
   * providerRef: the provider's object the cancel reached (Adyen's originalReference, Stripe's
   * PaymentIntent); absent when it names none (a technical cancel of a reference Adyen had not seen).
   * The fence is proof about that object only: an approval of any other is live money.
   */
  | { readonly fact: 'fence_confirmed'; readonly attemptId: string; readonly providerRef?: string }
  | { readonly fact: 'fence_refused'; readonly attemptId: string }
  | { readonly fact: 'capture_succeeded'; readonly captureId: string; readonly providerRef?: string }
  | { readonly fact: 'capture_failed'; readonly captureId: string }
  /** The scheme rejected a capture after it had succeeded (Adyen CAPTURE_FAILED). */
  | { readonly fact: 'capture_reversed'; readonly captureId: string }
  | { readonly fact: 'void_succeeded' }
  | { readonly fact: 'void_failed' }
  /**
   * The provider's event says the capture or void was already done (Adyen: a failed CAPTURE or
   * CANCELLATION whose reason says so): the operation's answer is unknown{already_done}, looked up.
   */
  | { readonly fact: 'capture_already_done'; readonly captureId: string; readonly detail: string }
  | { readonly fact: 'void_already_done'; readonly detail: string }
  | { readonly fact: 'refund_succeeded'; readonly refundId: string; readonly providerRef?: string }
  | { readonly fact: 'refund_failed'; readonly refundId: string }
  /** A refund returned by the scheme after it had succeeded (Adyen REFUNDED_REVERSED, Stripe refund failure). */
  | { readonly fact: 'refund_reversed'; readonly refundId: string }
  | { readonly fact: 'authorization_expired' }
  /**
   * The provider confirmed (or failed) the void or refund releasing an approval we do not keep.
   * providerRef: the cancel's or refund's own id at the provider; reference: ours on it, as the
   * provider echoes it (`releaseRefundId`: which round it is); reversal: the provider says it had
   * succeeded before it failed (a refund returned), not that it never happened.
   */
  | { readonly fact: 'release_succeeded' | 'release_failed'; readonly attemptId: string; readonly providerRef?: string; readonly reference?: string; readonly reversal?: boolean }
  /**
   * The scheme rejected the capture of an automatic-capture approval (Adyen CAPTURE_FAILED): no
   * capture record exists, the approval itself captured. providerRef: the failed capture's reference.
   */
  | { readonly fact: 'auto_capture_reversed'; readonly attemptId: string; readonly amount: number; readonly providerRef: string };

/** What an operator may settle a parked payment as. `captured`: keep what was captured (it is the merchant's). */
export type OperatorResolution = 'authorized' | 'captured' | 'failed' | 'voided';

/**
 * What the provider's records showed the operator for one attempt before resolving (looked up by
 * the ops layer: Stripe's PaymentIntent, Adyen's report rows and verified notifications we hold).
 * `nothing_found`: no record — which proves nothing (a record may be late or out of reach).
 */
export interface ProviderView {
  readonly attemptId: string;
  readonly shows: 'authorized' | 'captured' | 'not_charged' | 'nothing_found' | 'unknown';
  readonly detail?: string;
}

/** authentication_expiry: the customer's time at the authentication page is over (Attempt.authentication.expiresAt). */
/** parked_recheck: the recovery sweeper asks the provider again about a payment parked for review (step-parked.ts). */
export type TimerKind = 'resend' | 'query' | 'fence_retry' | 'hold_expiry' | 'max_lifetime' | 'authentication_expiry' | 'resume_retry' | 'parked_recheck';

export type PaymentInput =
  | { readonly type: 'submit' }
  | { readonly type: 'call_result'; readonly ref: OperationRef; readonly outcome: CallOutcome }
  | { readonly type: 'provider_fact'; readonly fact: ProviderFact }
  | { readonly type: 'capture_requested'; readonly captureId: string; readonly amount: number; readonly final: boolean }
  | { readonly type: 'void_requested' }
  /** The merchant's change to the metadata (issue 48): a key set to null is removed. The state never changes. */
  | { readonly type: 'metadata_updated'; readonly metadata: Readonly<Record<string, string | null>> }
  | { readonly type: 'refund_requested'; readonly refundId: string; readonly amount: number; readonly reason: string | null }
  | { readonly type: 'timer_fired'; readonly timer: TimerKind; readonly attemptId?: string }
  /**
   * The customer's browser came back from the provider's authentication page (the gateway's return
   * endpoint). `returned`: only the fields the resume call needs (Adyen redirectResult), never
   * Stripe's payment_intent_client_secret. Proves nothing by itself: the resume call asks the provider.
   */
  | { readonly type: 'customer_returned'; readonly attemptId: string; readonly returned: Readonly<Record<string, string>> }
  /**
   * operator: who resolved it; override: why a refused resolution is taken anyway (with operator,
   * kept in this input on the transition row for audit); provider: what the provider's records showed.
   */
  | {
      readonly type: 'operator_resolved';
      readonly as: OperatorResolution;
      readonly note: string;
      readonly operator?: string;
      readonly override?: string;
      readonly provider?: readonly ProviderView[];
    };

export type PaymentInputType = PaymentInput['type'];
