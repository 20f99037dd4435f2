// What an operation handler gets: the state, the sandbox time, and a way to emit webhook events.

import type { StripeObject } from './objects.ts';
import type { StripeSandboxState } from './state.ts';

export interface OperationContext {
  readonly state: StripeSandboxState;
  /** Unix seconds on the sandbox clock. */
  readonly now: number;
  /** Queues a Stripe event about `object` (a snapshot taken now); sent after the state change. */
  emit(type: string, object: StripeObject): void;
}
