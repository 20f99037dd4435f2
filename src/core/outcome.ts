// CallOutcome: the only thing a connector returns. Business results are values; only programming
// errors throw. Every variant may carry the provider reference so it is persisted as soon as known.

export type DeclineClass = 'hard' | 'soft';

/** Why a request provably never reached the provider (or reached it and was refused before any processing). */
export type NotSentReason =
  | 'connection_refused' // ECONNREFUSED / ENOTFOUND / EAI_AGAIN / TLS failure before the request was written
  | 'breaker_open'
  | 'validation' // 400/422 validation: the provider refused the request before processing it
  | 'authentication' // 401
  | 'permission' // 403
  | 'rate_limited' // 429
  | 'local_validation'; // our own checks refused to send

/** Why the result is unknown: the request may or may not have been processed. */
export type UnknownReason =
  | 'timeout'
  | 'connection_reset'
  | 'truncated_body'
  | 'server_error' // 5xx
  | 'in_progress' // the provider says the same key is still being processed (Stripe 409, Adyen 704)
  | 'idempotency_mismatch' // same key, other parameters: our own keys are wrong; alert
  | 'integrity_mismatch' // the provider echoed another amount or currency than we asked
  | 'not_found' // a query found no trace: not proof, a request may still be in flight
  | 'earlier_execution' // refused this time, but an earlier execution of the same call (a crashed worker's) may have reached the provider
  | 'superseded_execution' // refused, but another execution claimed the same call since this one did and may have reached the provider
  | 'stalled' // no answer and nothing pending long past the operation's normal lifetime (the recovery sweeper): may have been processed
  | 'key_expired' // not sent: the provider may have forgotten the key (past its retention), so a send could be a second operation
  | 'card_code_gone' // not sent: the request was first sent with the card's code, which the vault has destroyed; resent without it, it would be another request under the key
  // The provider refused the request because its object is already in the state the operation would
  // put it in (Stripe: cancel of a canceled PaymentIntent, capture of a succeeded one, refund of a
  // charge already refunded; Adyen: a CANCELLATION / CAPTURE notification saying so). An answer, not
  // a refusal: our earlier send (or someone else) did it. The core looks the object up and applies
  // what it finds; a same-key resend would only be refused the same way.
  | 'already_done'
  | 'unparseable'
  | 'unexpected';

export interface Succeeded {
  readonly kind: 'succeeded';
  readonly providerRef: string;
  /** The amount the provider confirmed, in minor units (for authorize: may be less than asked). */
  readonly amount: number;
  readonly currency?: string;
  readonly providerStatus?: string;
}

export interface Declined {
  readonly kind: 'declined';
  readonly class: DeclineClass;
  readonly retryElsewhere: boolean;
  /** Our normalized code (e.g. insufficient_funds). */
  readonly code: string;
  /** The provider's own code (e.g. Adyen refusalReasonCode "12"). */
  readonly providerCode: string;
  readonly providerRef?: string;
  readonly providerStatus?: string;
  readonly message?: string;
  /**
   * The provider's object stays open and could still be confirmed (a Stripe PaymentIntent back in
   * requires_payment_method after a failed authentication): the decline is proof only once a cancel
   * is confirmed.
   */
  readonly stillOpen?: boolean;
}

export interface NotSent {
  readonly kind: 'not_sent';
  readonly reason: NotSentReason;
  readonly providerRef?: string;
  readonly detail?: string;
}

export interface Pending {
  readonly kind: 'pending';
  readonly providerRef: string;
  readonly providerStatus?: string;
}

export interface ActionRequired {
  readonly kind: 'action_required';
  readonly action: string;
  readonly providerRef?: string;
  /**
   * Where to send the customer's browser. Absent when the provider's action is one the gateway cannot
   * present (Adyen's threeDS2 token for its JavaScript component): the attempt is then cancelled.
   */
  readonly redirect?: { readonly url: string; readonly method: 'GET' | 'POST'; readonly data?: Readonly<Record<string, string>> };
}

export interface Unknown {
  readonly kind: 'unknown';
  readonly reason: UnknownReason;
  readonly providerRef?: string;
  readonly detail?: string;
  /** Set when the outcome means our own configuration or keys are wrong: raise an alert. */
  readonly alert?: boolean;
}

export type CallOutcome = Succeeded | Declined | NotSent | Pending | ActionRequired | Unknown;
export type CallOutcomeKind = CallOutcome['kind'];

export const CALL_OUTCOME_KINDS: readonly CallOutcomeKind[] = [
  'succeeded',
  'declined',
  'not_sent',
  'pending',
  'action_required',
  'unknown',
];

export function providerRefOf(o: CallOutcome): string | undefined {
  return 'providerRef' in o ? o.providerRef : undefined;
}
