// The payment aggregate: the payment row with its attempts, captures and refunds.
// step() takes one and returns the next; the store persists it in one transaction.

import type { CallOutcomeKind, DeclineClass } from './outcome.ts';
import type { CaptureState, PaymentState, RefundState } from './states.ts';

export type CaptureMethod = 'manual' | 'automatic';

/** Why an attempt provably did not charge the customer. */
export type NotChargedProof = 'declined' | 'not_sent' | 'fenced';

export type AttemptStatus =
  | 'preparing' // preparatory call (no money) in flight
  | 'authorizing' // authorize call in flight
  | 'unknown' // sent, outcome not known: being resolved
  | 'fencing' // a fence (void / technical cancel) is in flight
  | 'authorized'
  | 'declined'
  | 'abandoned' // never reached the provider, or fenced: proof recorded
  | 'authenticating' // the provider asked for customer authentication: the customer is at its page, or the resume is in flight
  | 'releasing' // approved but not wanted (late or partial approval): being voided or refunded
  | 'released'
  | 'review'; // could not be settled automatically

export interface Attempt {
  readonly id: string;
  readonly no: number;
  readonly connector: string;
  readonly status: AttemptStatus;
  readonly providerRef: string | null;
  /** Provider idempotency key of the authorize call. */
  readonly authKey: string;
  /** When the authorize call first left the gateway (null while preparing). */
  readonly firstSentAt: string | null;
  /** Authorize calls made with authKey so far. */
  readonly sends: number;
  /** True once any authorize call may have reached the provider (an unknown): not_sent is then no proof. */
  readonly maybeReached: boolean;
  /** Send numbers answered not_sent: not_sent is proof only when every send is among them. */
  readonly notSentSends: readonly number[];
  readonly prepareCalls: number;
  readonly queries: number;
  readonly fenceCalls: number;
  /** The worker refused to resend this attempt's request (card_code_gone, key_expired): never resent; query and fence resolve it. */
  readonly resendBlocked: boolean;
  readonly lastOutcome: CallOutcomeKind | null;
  readonly proof: NotChargedProof | null;
  readonly declineCode: string | null;
  readonly declineClass: DeclineClass | null;
  readonly retryElsewhere: boolean;
  /** Why the last authorize call was not sent (breaker_open, connection_refused, ...). */
  readonly notSentReason: string | null;
  readonly amountAuthorized: number;
  readonly createdAt: string;
  /** The release of an approval we do not keep (late or partial): null for every other attempt. */
  readonly release: ReleaseOperation | null;
  /** Customer authentication on this attempt (3-D Secure, redirects); absent when none was asked for or forced. */
  readonly authentication?: AttemptAuthentication;
}

/** How the merchant wants customer authentication handled (`POST /v1/payments` `authentication`). */
export type AuthenticationMode = 'automatic' | 'challenge' | 'none';

/** The payment's side of customer authentication: set at creation, never changed by a step. */
export interface PaymentAuthentication {
  readonly mode: AuthenticationMode;
  /** The merchant's page the customer returns to; without one an issuer's challenge cannot be presented. */
  readonly returnUrl: string | null;
  /**
   * Where customers' browsers reach the gateway (its authentication page and return endpoint), as the
   * API that created the payment was configured; null: no redirect can be offered. The core ignores it.
   */
  readonly gatewayUrl?: string | null;
  /**
   * The payment's secret for its customer-facing URLs: each attempt's page and return tokens are
   * derived from it (src/resources/authentication-tokens.ts). Never served; absent on payments
   * created before it existed, which then offer no page. The core ignores it.
   */
  readonly tokenKey?: string;
}

/** Where the provider wants the customer's browser sent: a GET, or a POST of `data` as a form. */
export interface RedirectAction {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly data?: Readonly<Record<string, string>>;
}

/**
 * A decline that counts only once the provider confirms the attempt cancelled: after a failed
 * authentication a Stripe PaymentIntent returns to requires_payment_method, where it could still be
 * confirmed; an action the gateway cannot present (Adyen's threeDS2 token) leaves the payment open.
 */
export interface HeldDecline {
  readonly code: string;
  readonly providerCode: string;
  readonly class: DeclineClass;
  readonly retryElsewhere: boolean;
}

/**
 * requested: authentication forced (step-up), the provider has not asked yet; awaiting_customer: the customer is (or may be) at the provider's page; resuming: the customer came
 * back and the resume call (Stripe: retrieve the PaymentIntent; Adyen: /payments/details) is in
 * flight; completed: the provider's final word arrived; abandoned: the deadline passed and the
 * attempt is being (or was) cancelled; cancelling: a held decline waits for the confirmed cancel.
 */
export type AuthenticationStage = 'requested' | 'awaiting_customer' | 'resuming' | 'completed' | 'abandoned' | 'cancelling';

export interface AttemptAuthentication {
  /** Step-up: this attempt was sent with authentication forced (a new logical operation, new key). */
  readonly forced: boolean;
  readonly stage: AuthenticationStage;
  /** The provider's page, when there is one the gateway can present. */
  readonly action: RedirectAction | null;
  /** When the customer is given up on: the attempt is then cancelled at the provider. */
  readonly expiresAt: string | null;
  /** What the provider's page sent back (Adyen redirectResult), kept for resends of the resume call. */
  readonly returned: Readonly<Record<string, string>> | null;
  readonly returnedAt: string | null;
  /** Idempotency key of the resume call (`<payment>:resume:<attempt no>`), once the customer returned. */
  readonly resumeKey: string | null;
  /** Sends of the current resume call (same key). */
  readonly resumes: number;
  /** Resume operations started on this attempt (one per time the customer came back). */
  readonly rounds: number;
  readonly heldDecline: HeldDecline | null;
}

/**
 * Releasing an approval we do not keep: a void, or a refund under automatic capture. Each release
 * is a numbered operation with its own key (`<payment>:release:<no>`, numbered across the payment);
 * an unknown answer is resent with the same key, a release the provider confirms as failed is
 * followed by a new one (`round` + 1) with a new key, at most `CorePolicy.maxReleases` of them.
 * The attempt is `released` only once the provider confirms (the call's final answer, a webhook).
 */
export interface ReleaseOperation {
  readonly no: number;
  /** 1 for the first release of this attempt, +1 per release the provider confirmed failed. */
  readonly round: number;
  readonly kind: 'void' | 'refund';
  readonly amount: number;
  readonly providerKey: string;
  readonly status: 'requested' | 'pending' | 'succeeded' | 'failed' | 'review';
  /** The cancel's or refund's own reference at the provider (its events name it), once known. */
  readonly providerRef: string | null;
  /** The references of this attempt's earlier releases: their late events are old news. */
  readonly earlierRefs: readonly string[];
  /**
   * This attempt's earlier rounds, each by what names it: its key, our reference on its refund
   * (`releaseRefundId`), the provider's own id once an answer or event told it. A round ends only
   * when the provider confirmed it failed (or reversed it), so every one here is `failed`. Absent
   * on releases written before rounds were kept (their `earlierRefs` still name them).
   */
  readonly earlier?: readonly ReleaseRound[];
  readonly calls: number;
  /** A send may have reached the provider: a later refusal proves nothing. */
  readonly maybeReached: boolean;
  readonly requestedAt: string;
  readonly failure: OperationFailure | null;
  /** The payment's state when this release was parked for review (late proof returns it there). */
  readonly reviewFrom?: PaymentState;
  /**
   * What the ledger holds for release for this attempt (held_for_release, issue 29): the amount a
   * release refund must give back. Absent on releases started before it was booked (nothing to move out).
   */
  readonly held?: number;
}

/** An earlier round of an attempt's release (ReleaseOperation.earlier). */
export interface ReleaseRound {
  readonly round: number;
  readonly no: number;
  readonly providerKey: string;
  readonly providerRef: string | null;
  readonly status: 'failed';
}

/**
 * Our reference on a release round's object at the provider: the refund id a release refund is sent
 * with (Stripe's `metadata.refund_id`), the modification reference of an Adyen cancel or refund. Its
 * events echo it, so each names its round even when the call's answer was lost.
 */
export function releaseRefundId(attemptId: string, r: Pick<ReleaseOperation, 'round'>): string {
  return r.round === 1 ? `${attemptId}_release` : `${attemptId}_release_${r.round}`;
}

/**
 * Why a capture, refund or void did not happen, as the provider (or the lack of one) said it:
 * `declined` — the provider processed and refused it; `rejected` — the provider refused the request
 * as invalid before processing it (e.g. nothing left to capture there); `not_sent` — it never
 * reached the provider (after the resends the core allows).
 */
export interface OperationFailure {
  readonly kind: 'declined' | 'rejected' | 'not_sent';
  /** Ours: the normalized decline code (insufficient_funds, capture_failed, ...) or the not-sent reason (validation, connection_refused, ...). */
  readonly code: string;
  /** The provider's own code, when it gave one. */
  readonly providerCode: string | null;
  readonly declineClass: DeclineClass | null;
  readonly message: string | null;
}

export interface Capture {
  readonly id: string;
  readonly no: number;
  readonly amount: number;
  readonly final: boolean;
  readonly status: CaptureState;
  readonly providerKey: string;
  readonly providerRef: string | null;
  readonly calls: number;
  readonly failure: OperationFailure | null;
  readonly createdAt: string;
}

export interface Refund {
  readonly id: string;
  readonly no: number;
  readonly amount: number;
  readonly reason: string | null;
  readonly status: RefundState;
  readonly providerKey: string;
  readonly providerRef: string | null;
  readonly calls: number;
  readonly failure: OperationFailure | null;
  readonly createdAt: string;
}

export interface VoidOperation {
  readonly no: number;
  readonly providerKey: string;
  readonly calls: number;
  /** A send of this void may have reached the provider (an unknown answer): a later refusal proves nothing. */
  readonly maybeReached?: boolean;
  /** When the void was requested (absent on voids recorded before it was kept): bounds waiting on an open breaker. */
  readonly requestedAt?: string;
  /** Why this void did not happen (absent while it is in flight, when it succeeded, and on voids recorded before it was kept). */
  readonly failure?: OperationFailure;
  /**
   * requires_action: the void cancels the attempt the customer is authenticating on (`attemptId`),
   * and a refused cancel returns the payment there, never to authorized. Absent: a void of the authorization.
   */
  readonly from?: 'requires_action';
  readonly attemptId?: string;
  /**
   * Set on the cancel of the uncaptured remainder after a final partial capture, where the provider
   * keeps it authorized (Adyen with multiple partial captures): the amount it releases.
   */
  readonly remainder?: number;
  /** The provider confirmed the remainder's cancel (Adyen CANCELLATION success): `remainder` is released. */
  readonly released?: boolean;
}

export interface RoutingDecision {
  readonly snapshot: string;
  readonly rule: string;
  readonly candidates: readonly string[];
  readonly skipped: readonly { readonly connector: string; readonly reason: string }[];
}

export interface VaultedCardSummary {
  /** The vault's payment method (pmd_…). */
  readonly id: string;
  readonly brand: string;
  readonly last4: string;
  readonly expMonth: number;
  readonly expYear: number;
}

export interface Payment {
  readonly id: string;
  readonly merchantId: string;
  /** A live payment (made with a live key, or reaching a live account): test keys never see it, live keys never see a test one. */
  readonly livemode: boolean;
  readonly reference: string;
  readonly amount: number;
  readonly currency: string;
  readonly captureMethod: CaptureMethod;
  readonly allowPartialAuthorization: boolean;
  readonly state: PaymentState;
  readonly amountAuthorized: number;
  readonly amountCaptured: number;
  readonly amountRefunded: number;
  /** Multicapture: the uncaptured remainder may still be captured. */
  readonly captureOpen: boolean;
  readonly attempts: readonly Attempt[];
  readonly captures: readonly Capture[];
  readonly refunds: readonly Refund[];
  readonly voidOp: VoidOperation | null;
  readonly routing: RoutingDecision;
  readonly metadata: Readonly<Record<string, string>>;
  readonly version: number;
  readonly createdAt: string;
  /** After this instant an in-flight payment is fenced, then failed (or parked for review). */
  readonly deadlineAt: string;
  /** Customer authentication settings; absent on payments created before they existed (automatic, no return URL). */
  readonly authentication?: PaymentAuthentication;
  /** A vaulted card, as the merchant may see it (no number, no code); absent for tokens and test cards. */
  readonly vaultedCard?: VaultedCardSummary;
}

export function currentAttempt(p: Payment): Attempt | undefined {
  return p.attempts[p.attempts.length - 1];
}
