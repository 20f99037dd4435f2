// What an operation handler gets: the state, the sandbox time, and a way to emit webhook events.

import type { StripeObject } from './objects.ts';
import type { StripeSandboxState } from './state.ts';

export interface OperationContext {
  readonly state: StripeSandboxState;
  /** Unix seconds on the sandbox clock. */
  readonly now: number;
  /**
   * Queues a Stripe event about `object` (a snapshot taken now); sent after the state change.
   * `previous`: what the changed fields were before (required for `*.updated`: previous_attributes).
   */
  emit(type: string, object: StripeObject, previous?: StripeObject): void;
  /** Fault release_fail_later: a refund is answered pending, not performed, and its event says it failed. */
  readonly failModification?: boolean;
  /** The sandbox's own base URL (the hosted authentication page lives there); absent: no page to offer. */
  readonly publicUrl?: string;
  /** How long after its creation a PaymentIntent becomes searchable (search.ts); absent: Stripe's minute. */
  readonly searchLagMs?: number;
  /** Raw card data (payment_method_data[card]) is enabled on the account; absent: not enabled. */
  readonly rawCardData?: boolean;
  /** The account's card fingerprint of a number (keyed, so the sandbox database never holds the number or an unkeyed hash of it). */
  readonly cardFingerprint?: (number: string) => string;
}
