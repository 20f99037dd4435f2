import { describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import type { AttemptResult } from '../../../../src/connectors/stripe/attempt-recorder.ts';
import { STRIPE_DEFAULT_DECLINES } from '../../../../src/connectors/stripe/defaults.ts';
import { outcomeForFailure, STRIPE_ERROR_CLASSIFICATION } from '../../../../src/connectors/stripe/error-classification.ts';

const ctx = { declineTable: STRIPE_DEFAULT_DECLINES, providerRef: 'pi_1' };
const refused: AttemptResult = { kind: 'error', code: 'ECONNREFUSED' };
const reset: AttemptResult = { kind: 'error', code: 'ECONNRESET' };
const E = Stripe.errors;

function connectionError(code: string): InstanceType<typeof E.StripeConnectionError> {
  const detail = Object.assign(new Error(code), { code });
  return new E.StripeConnectionError({ message: 'An error occurred with our connection to Stripe.', detail });
}

describe('Stripe failure classification', () => {
  it('not_sent{connection_refused} only when every attempt was refused', () => {
    expect(outcomeForFailure(connectionError('ECONNREFUSED'), [refused], ctx)).toMatchObject({ kind: 'not_sent', reason: 'connection_refused' });
    expect(outcomeForFailure(connectionError('ENOTFOUND'), [{ kind: 'error', code: 'ENOTFOUND' }], ctx)).toMatchObject({ kind: 'not_sent' });
  });

  it('a reset retried into a refusal is unknown: the SDK reports only the last error', () => {
    expect(outcomeForFailure(connectionError('ECONNREFUSED'), [reset, refused], ctx)).toMatchObject({ kind: 'unknown', reason: 'connection_reset' });
  });

  it('a refusal without recorded attempts proves nothing', () => {
    expect(outcomeForFailure(connectionError('ECONNREFUSED'), [], ctx)).toMatchObject({ kind: 'unknown' });
  });

  it('a 400/401/403/429 after a reset is unknown too', () => {
    const e = new E.StripeRateLimitError({ message: 'slow down', type: 'invalid_request_error' } as never);
    expect(outcomeForFailure(e, [reset, { kind: 'response', status: 429 }], ctx)).toMatchObject({ kind: 'unknown', reason: 'connection_reset' });
    expect(outcomeForFailure(e, [{ kind: 'response', status: 429 }], ctx)).toMatchObject({ kind: 'not_sent', reason: 'rate_limited' });
  });

  it.each([
    [new E.StripeInvalidRequestError({ message: 'bad' }), { kind: 'not_sent', reason: 'validation' }],
    [new E.StripeAuthenticationError({ message: 'key' }), { kind: 'not_sent', reason: 'authentication' }],
    [new E.StripePermissionError({ message: 'perm' }), { kind: 'not_sent', reason: 'permission' }],
    [new E.StripeIdempotencyError({ message: 'same key' }), { kind: 'unknown', reason: 'idempotency_mismatch', alert: true }],
    [new E.StripeAPIError({ message: 'conflict', statusCode: 409 }), { kind: 'unknown', reason: 'in_progress' }],
    [new E.StripeAPIError({ message: 'boom', statusCode: 503 }), { kind: 'unknown', reason: 'server_error' }],
    [new E.StripeAPIError({ message: 'Invalid JSON received from the Stripe API' }), { kind: 'unknown', reason: 'unparseable' }],
    [new TypeError('not a Stripe error'), { kind: 'unknown', reason: 'unexpected' }],
  ])('%s -> %j', (error, expected) => {
    expect(outcomeForFailure(error, [{ kind: 'response', status: 400 }], ctx)).toMatchObject(expected);
  });

  it('a timeout or a reset with no answer is unknown', () => {
    expect(outcomeForFailure(connectionError('ETIMEDOUT'), [{ kind: 'error', code: 'ETIMEDOUT' }], ctx)).toMatchObject({ kind: 'unknown', reason: 'timeout' });
    expect(outcomeForFailure(connectionError('ECONNRESET'), [reset, reset], ctx)).toMatchObject({ kind: 'unknown', reason: 'connection_reset' });
  });

  it('a body cut after the headers is unknown{truncated_body}', () => {
    expect(outcomeForFailure(connectionError('ECONNRESET'), [{ kind: 'response', status: 200 }], ctx)).toMatchObject({ kind: 'unknown', reason: 'truncated_body' });
  });

  it('a card error is a decline classified by the table, naming the PaymentIntent', () => {
    const e = new E.StripeCardError({ message: 'declined', code: 'card_declined', decline_code: 'processing_error', payment_intent: { id: 'pi_9', status: 'requires_payment_method' } } as never);
    expect(outcomeForFailure(e, [{ kind: 'response', status: 402 }], ctx)).toMatchObject({
      kind: 'declined', code: 'processing_error', class: 'soft', retryElsewhere: true, providerRef: 'pi_9', providerStatus: 'requires_payment_method',
    });
  });

  it("a 402 of type invalid_request_error (raw card data from an account without it) is not_sent{permission}, not a decline", () => {
    // stripe-node makes every 402 a StripeCardError; the body's type says the card was never looked at.
    const e = new E.StripeCardError({ type: 'invalid_request_error', message: 'Sending credit card numbers directly to the Stripe API is generally unsafe.' } as never);
    expect(outcomeForFailure(e, [{ kind: 'response', status: 402 }], ctx)).toMatchObject({ kind: 'not_sent', reason: 'permission' });
    const afterReset = outcomeForFailure(e, [reset, { kind: 'response', status: 402 }], ctx);
    expect(afterReset).toMatchObject({ kind: 'unknown', reason: 'connection_reset' });
  });

  describe('already done (issue 41 §4): matched on the code and the embedded object, never the message', () => {
    const unexpectedState = (status: string, message = `This PaymentIntent's cancel could not be performed because it has a status of ${status}.`) =>
      new E.StripeInvalidRequestError({ type: 'invalid_request_error', message, code: 'payment_intent_unexpected_state', payment_intent: { id: 'pi_1', object: 'payment_intent', status } } as never);
    const answered: AttemptResult = { kind: 'response', status: 400 };

    it('a cancel refused because the PaymentIntent is canceled is unknown{already_done}, even after a reset', () => {
      expect(outcomeForFailure(unexpectedState('canceled'), [answered], { ...ctx, operation: 'cancel' })).toMatchObject({ kind: 'unknown', reason: 'already_done', providerRef: 'pi_1' });
      expect(outcomeForFailure(unexpectedState('canceled'), [reset, answered], { ...ctx, operation: 'cancel' })).toMatchObject({ kind: 'unknown', reason: 'already_done' });
    });

    it('a capture refused because the PaymentIntent has succeeded is unknown{already_done}', () => {
      expect(outcomeForFailure(unexpectedState('succeeded'), [answered], { ...ctx, operation: 'capture' })).toMatchObject({ kind: 'unknown', reason: 'already_done' });
    });

    it('the same code with the object in any other state stays a refusal', () => {
      expect(outcomeForFailure(unexpectedState('requires_payment_method'), [answered], { ...ctx, operation: 'cancel' })).toMatchObject({ kind: 'not_sent', reason: 'validation' });
      expect(outcomeForFailure(unexpectedState('succeeded'), [answered], { ...ctx, operation: 'cancel' })).toMatchObject({ kind: 'not_sent', reason: 'validation' });
      expect(outcomeForFailure(unexpectedState('canceled'), [answered], { ...ctx, operation: 'capture' })).toMatchObject({ kind: 'not_sent', reason: 'validation' });
      expect(outcomeForFailure(unexpectedState('canceled'), [answered], ctx)).toMatchObject({ kind: 'not_sent', reason: 'validation' });
    });

    it('the message is never read: another text with the same code and object is the same answer, the text alone is nothing', () => {
      expect(outcomeForFailure(unexpectedState('canceled', 'anything at all'), [answered], { ...ctx, operation: 'cancel' })).toMatchObject({ kind: 'unknown', reason: 'already_done' });
      const textOnly = new E.StripeInvalidRequestError({ type: 'invalid_request_error', message: 'it has a status of canceled', code: 'parameter_invalid' } as never);
      expect(outcomeForFailure(textOnly, [answered], { ...ctx, operation: 'cancel' })).toMatchObject({ kind: 'not_sent', reason: 'validation' });
    });

    it('charge_already_refunded is already done for a refund only', () => {
      const e = new E.StripeInvalidRequestError({ type: 'invalid_request_error', message: 'Charge ch_1 has already been refunded.', code: 'charge_already_refunded' } as never);
      expect(outcomeForFailure(e, [answered], { ...ctx, operation: 'refund' })).toMatchObject({ kind: 'unknown', reason: 'already_done' });
      expect(outcomeForFailure(e, [answered], { ...ctx, operation: 'capture' })).toMatchObject({ kind: 'not_sent', reason: 'validation' });
    });
  });

  it('the table names every row once', () => {
    const situations = STRIPE_ERROR_CLASSIFICATION.map((r) => r.situation);
    expect(new Set(situations).size).toBe(situations.length);
  });
});
