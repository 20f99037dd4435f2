import { describe, expect, it } from 'vitest';
import { STRIPE_DEFAULT_DECLINES } from '../../../../src/connectors/stripe/defaults.ts';
import { capturedOutcome, paymentIntentOutcome, preparedOutcome, refundOutcome, voidedOutcome } from '../../../../src/connectors/stripe/status-map.ts';
import { pi, refundObject } from './fixtures.ts';

const asked = { amount: 1000, currency: 'EUR' };
const table = STRIPE_DEFAULT_DECLINES;

describe('PaymentIntent status -> outcome', () => {
  it.each([
    [{ status: 'requires_capture', amount_capturable: 1000 }, { kind: 'succeeded', amount: 1000, providerRef: 'pi_1' }],
    [{ status: 'succeeded', amount_received: 1000 }, { kind: 'succeeded', amount: 1000 }],
    [{ status: 'processing' }, { kind: 'pending', providerRef: 'pi_1' }],
    [{ status: 'requires_action', next_action: { type: 'use_stripe_sdk' } }, { kind: 'action_required', action: 'use_stripe_sdk' }],
    [{ status: 'requires_confirmation' }, { kind: 'unknown', reason: 'not_found' }],
    [{ status: 'requires_payment_method' }, { kind: 'unknown', reason: 'not_found' }],
    [{ status: 'some_future_status' }, { kind: 'unknown', reason: 'unexpected' }],
  ])('%j -> %j', (fields, expected) => {
    expect(paymentIntentOutcome(pi(fields), asked, table)).toMatchObject(expected);
  });

  it('a failed confirm is a decline classified by the table', () => {
    const o = paymentIntentOutcome(pi({ status: 'requires_payment_method', last_payment_error: { code: 'card_declined', decline_code: 'stolen_card' } }), asked, table);
    expect(o).toMatchObject({ kind: 'declined', class: 'hard', retryElsewhere: false, code: 'stolen_card', providerCode: 'card_declined', providerRef: 'pi_1' });
  });

  it('a cancelled, never-collected PaymentIntent is fenced: declined, safe to try elsewhere', () => {
    const o = paymentIntentOutcome(pi({ status: 'canceled', cancellation_reason: 'abandoned' }), asked, table);
    expect(o).toMatchObject({ kind: 'declined', code: 'payment_intent_canceled', retryElsewhere: true, providerCode: 'canceled:abandoned' });
  });

  it('never reports success or failure when the echoed amount differs from what was asked', () => {
    expect(paymentIntentOutcome(pi({ status: 'requires_capture', amount: 999, amount_capturable: 999 }), asked, table)).toMatchObject({ kind: 'unknown', reason: 'integrity_mismatch', alert: true });
  });

  it('a prepared PaymentIntent carries amount 0: no money moved', () => {
    expect(preparedOutcome(pi(), asked)).toMatchObject({ kind: 'succeeded', amount: 0, providerRef: 'pi_1' });
    expect(preparedOutcome(pi({ status: 'requires_capture' }), asked)).toMatchObject({ kind: 'unknown', alert: true });
  });
});

describe('capture, void, refund', () => {
  it('checks the cumulative amount_received against earlier captures', () => {
    expect(capturedOutcome(pi({ status: 'requires_capture', amount_received: 500 }), { amount: 200, currency: 'EUR' }, 300)).toMatchObject({ kind: 'succeeded', amount: 200 });
    expect(capturedOutcome(pi({ status: 'succeeded', amount_received: 600 }), { amount: 600, currency: 'EUR' }, 0)).toMatchObject({ kind: 'succeeded', amount: 600 });
    expect(capturedOutcome(pi({ status: 'succeeded', amount_received: 700 }), { amount: 600, currency: 'EUR' }, 0)).toMatchObject({ kind: 'unknown', reason: 'integrity_mismatch' });
  });

  it('void succeeds only on a cancelled PaymentIntent', () => {
    expect(voidedOutcome(pi({ status: 'canceled' }), asked)).toMatchObject({ kind: 'succeeded', amount: 1000 });
    expect(voidedOutcome(pi({ status: 'requires_capture' }), asked)).toMatchObject({ kind: 'unknown' });
  });

  it.each([
    [{ status: 'succeeded' }, { kind: 'succeeded', providerRef: 're_1', amount: 300 }],
    [{ status: 'pending' }, { kind: 'pending', providerRef: 're_1' }],
    [{ status: 'failed', failure_reason: 'expired_or_canceled_card' }, { kind: 'declined', code: 'expired_or_canceled_card' }],
    [{ status: 'new_status' }, { kind: 'unknown', reason: 'unexpected' }],
    [{ amount: 301 }, { kind: 'unknown', reason: 'integrity_mismatch' }],
  ])('refund %j -> %j', (fields, expected) => {
    expect(refundOutcome(refundObject(fields), { amount: 300, currency: 'EUR' }, table)).toMatchObject(expected);
  });
});
