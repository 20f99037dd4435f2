// How a failed Stripe call becomes a CallOutcome. The table below is normative: docs/connectors.md
// copies it and the conformance kit drives every row against the sandbox. not_sent is a proof of
// no charge, so it is given only when every attempt provably never reached Stripe, or Stripe
// refused the request before processing it and no earlier attempt could have reached it.

import type { CallOutcome } from '../../core/outcome.ts';
import { assertNever } from '../../core/states.ts';
import type { DeclineTable, ErrorClassificationRow, FailureSituation } from '../contract.ts';
import { declinedOutcome } from '../decline-table.ts';
import type { AttemptResult } from './attempt-recorder.ts';
import { attemptNeverConnected, NEVER_CONNECTED_CODES } from './attempt-recorder.ts';
import { stripeDeclineFacts } from './status-map.ts';

export const STRIPE_ERROR_CLASSIFICATION: readonly ErrorClassificationRow[] = Object.freeze([
  { situation: 'connection_refused', signal: 'StripeConnectionError, every attempt ECONNREFUSED/ENOTFOUND/EAI_AGAIN/TLS', outcome: 'not_sent', reason: 'connection_refused' },
  { situation: 'validation', signal: 'StripeInvalidRequestError (400/404 invalid_request_error)', outcome: 'not_sent', reason: 'validation' },
  { situation: 'authentication', signal: 'StripeAuthenticationError (401)', outcome: 'not_sent', reason: 'authentication' },
  { situation: 'permission', signal: 'StripePermissionError (403); or a 402 whose error type is invalid_request_error, not card_error (stripe-node makes every 402 a StripeCardError): raw card data sent by an account without raw card data APIs', outcome: 'not_sent', reason: 'permission' },
  { situation: 'rate_limited', signal: 'StripeRateLimitError (429, or 400 code rate_limit)', outcome: 'not_sent', reason: 'rate_limited' },
  { situation: 'card_declined', signal: 'StripeCardError (402), PaymentIntent embedded', outcome: 'declined', reason: 'decline_table' },
  { situation: 'idempotency_mismatch', signal: 'StripeIdempotencyError (400 idempotency_error): same key, other params', outcome: 'unknown', reason: 'idempotency_mismatch', alert: true },
  { situation: 'in_progress', signal: 'StripeAPIError 409: the same key is executing', outcome: 'unknown', reason: 'in_progress' },
  { situation: 'server_error', signal: 'StripeAPIError 5xx', outcome: 'unknown', reason: 'server_error' },
  { situation: 'connection_reset', signal: 'StripeConnectionError ECONNRESET/EPIPE on any attempt (retried once by the SDK)', outcome: 'unknown', reason: 'connection_reset' },
  { situation: 'timeout', signal: 'StripeConnectionError, detail.code ETIMEDOUT', outcome: 'unknown', reason: 'timeout' },
  { situation: 'truncated_body', signal: 'StripeConnectionError, detail HttpClientResponseBodyError', outcome: 'unknown', reason: 'truncated_body' },
  { situation: 'unparseable', signal: 'StripeAPIError without status (invalid JSON) or a non-error status with an error body', outcome: 'unknown', reason: 'unparseable' },
  {
    situation: 'already_done',
    signal: 'StripeInvalidRequestError 400 code payment_intent_unexpected_state whose error.payment_intent is already in the target state (cancel: canceled; capture: succeeded), or code charge_already_refunded on a refund: matched on the code and the object, never the message',
    outcome: 'unknown', reason: 'already_done',
  },
] satisfies ErrorClassificationRow[]);

/** The operation a failed call was, for the rows that depend on it (already_done). */
export type StripeOperation = 'capture' | 'cancel' | 'refund' | 'other';

/** The PaymentIntent status a successful call of the operation leaves: the object is "already there" in it. */
const TARGET_STATUS: Readonly<Partial<Record<StripeOperation, string>>> = { cancel: 'canceled', capture: 'succeeded' };

interface StripeErrorShape {
  readonly type?: unknown;
  readonly statusCode?: unknown;
  readonly detail?: unknown;
  readonly code?: unknown;
  readonly message?: unknown;
  readonly payment_intent?: unknown;
  readonly raw?: unknown;
  /** The body's error.type, which stripe-node keeps beside its own class name. */
  readonly rawType?: unknown;
}

function field<K extends string>(o: unknown, k: K): unknown {
  return typeof o === 'object' && o !== null && k in o ? (o as Record<K, unknown>)[k] : undefined;
}

function constructorName(o: unknown): string | undefined {
  return typeof o === 'object' && o !== null ? (o.constructor as { name?: string } | undefined)?.name : undefined;
}

/**
 * Stripe refused the operation because its object is already where the operation would put it: a
 * 400 whose code says so and whose embedded PaymentIntent (the SDK's error.payment_intent, from the
 * body's error.payment_intent) has the operation's target status. The message is never read.
 */
function alreadyDone(e: StripeErrorShape, operation: StripeOperation): boolean {
  if (e.code === 'charge_already_refunded') return operation === 'refund';
  if (e.code !== 'payment_intent_unexpected_state') return false;
  const target = TARGET_STATUS[operation];
  const pi = e.payment_intent ?? field(e.raw, 'payment_intent');
  return target !== undefined && field(pi, 'status') === target;
}

/** Which row a failure falls in, or null when it is not a Stripe error at all. */
export function failureSituation(error: unknown, attempts: readonly AttemptResult[], operation: StripeOperation = 'other'): FailureSituation | null {
  const e = error as StripeErrorShape;
  switch (e.type) {
    // Live Stripe refuses raw card data from an account without it with a 402 of type
    // invalid_request_error ("Sending credit card numbers directly to the Stripe API is generally
    // unsafe…"): the account may not do this, the card was never looked at. Not a decline.
    case 'StripeCardError': return e.rawType === 'invalid_request_error' ? 'permission' : 'card_declined';
    case 'StripeIdempotencyError': return 'idempotency_mismatch';
    case 'StripeRateLimitError': return 'rate_limited';
    case 'StripeInvalidRequestError': return alreadyDone(e, operation) ? 'already_done' : 'validation';
    case 'StripeAuthenticationError': return 'authentication';
    case 'StripePermissionError': return 'permission';
    case 'StripeAPIError': {
      const status = typeof e.statusCode === 'number' ? e.statusCode : null;
      if (status === 409) return 'in_progress';
      if (status !== null && status >= 500) return 'server_error';
      return 'unparseable';
    }
    case 'StripeConnectionError': {
      const detail = e.detail;
      // The SDK's HttpClientResponseBodyError keeps name 'Error'; its class name and our own record
      // (the last attempt did get a status line) both say the headers arrived and the body did not.
      const last = attempts[attempts.length - 1];
      if (constructorName(detail) === 'HttpClientResponseBodyError' || last?.kind === 'response') return 'truncated_body';
      const code = field(detail, 'code');
      if (code === 'ETIMEDOUT') return 'timeout';
      const refusedNow = typeof code === 'string' && NEVER_CONNECTED_CODES.has(code);
      if (refusedNow && attempts.length > 0 && attempts.every(attemptNeverConnected)) return 'connection_refused';
      return 'connection_reset';
    }
    default:
      return null;
  }
}

function rowFor(situation: FailureSituation): ErrorClassificationRow {
  const row = STRIPE_ERROR_CLASSIFICATION.find((r) => r.situation === situation);
  if (row === undefined) throw new Error(`no classification row for ${situation}`);
  return row;
}

function describe(error: unknown): string {
  const message = field(error, 'message');
  const type = field(error, 'type');
  return `${typeof type === 'string' ? type : 'Error'}: ${typeof message === 'string' ? message : String(error)}`;
}

export interface FailureContext {
  readonly declineTable: DeclineTable;
  /** The reference the call was about, when known (the PaymentIntent id). */
  readonly providerRef?: string;
  /** What the call was (default other): an "already there" refusal is only recognised for capture, cancel and refund. */
  readonly operation?: StripeOperation;
}

/** Turns a failed SDK call and its recorded attempts into an outcome, following the table. */
export function outcomeForFailure(error: unknown, attempts: readonly AttemptResult[], ctx: FailureContext): CallOutcome {
  const ref = ctx.providerRef !== undefined ? { providerRef: ctx.providerRef } : {};
  const situation = failureSituation(error, attempts, ctx.operation);
  if (situation === null) return { kind: 'unknown', reason: 'unexpected', ...ref, detail: describe(error) };
  const row = rowFor(situation);
  switch (row.outcome) {
    case 'declined':
      return declinedOutcome(ctx.declineTable, stripeDeclineFacts(error, ctx.providerRef));
    case 'not_sent': {
      // A refusal on the last attempt says nothing about an earlier attempt that connected and was reset.
      const earlierMayHaveReached = attempts.slice(0, -1).some((a) => !attemptNeverConnected(a));
      if (!earlierMayHaveReached) return { kind: 'not_sent', reason: row.reason, ...ref, detail: describe(error) };
      return { kind: 'unknown', reason: 'connection_reset', ...ref, detail: `an earlier attempt may have reached Stripe; last: ${describe(error)}` };
    }
    case 'unknown':
      return { kind: 'unknown', reason: row.reason, ...ref, detail: describe(error), ...(row.alert === true ? { alert: true } : {}) };
    default:
      return assertNever(row, 'classification row');
  }
}
