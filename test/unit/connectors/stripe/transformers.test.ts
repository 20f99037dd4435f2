import { describe, expect, it } from 'vitest';
import { TEST_CARD_SCENARIOS, testCardNumber } from '../../../../src/connectors/test-cards.ts';
import {
  authorizeCreateParams, captureParams, fromStripeAmount, integrityProblem, paymentIntentCreateParams, reconciliationRecord, refundParams,
  resolvePaymentMethod, stripeTestPaymentMethod, stripeTokenProblem, toStripeAmount,
} from '../../../../src/connectors/stripe/transformers.ts';
import { pi } from './fixtures.ts';

describe('Stripe amounts', () => {
  it.each([
    ['JPY', 500, 500, 'jpy'],
    ['EUR', 1234, 1234, 'eur'],
    ['KWD', 12340, 12340, 'kwd'],
    ['ISK', 5, 500, 'isk'], // ISO zero-decimal, Stripe still two-decimal
    ['MGA', 1500, 15, 'mga'], // ISO two-decimal, on Stripe's zero-decimal list
    ['CLP', 5000, 5000, 'clp'], // zero-decimal at both
    ['IDR', 1234550, 1234550, 'idr'], // two-decimal at both: Stripe takes what Adyen cannot
  ])('%s %i minor units go on the wire as %i %s and come back unchanged', (currency, amount, wire, wireCurrency) => {
    expect(toStripeAmount(amount, currency)).toEqual({ ok: true, amount: wire, currency: wireCurrency });
    expect(fromStripeAmount(wire, wireCurrency)).toEqual({ amount, currency });
  });

  it('refuses an MGA amount with a remainder below the ariary, naming it; and a fractional ISK on the way back', () => {
    expect(toStripeAmount(1550, 'MGA')).toEqual({ ok: false, problem: expect.stringContaining('1550 MGA (ISO minor units) cannot be sent to Stripe') as unknown });
    expect(fromStripeAmount(550, 'isk')).toBeNull();
  });

  it('refuses the ISO three- and four-decimal currencies not on Stripe\'s lists', () => {
    for (const c of ['IQD', 'LYD', 'CLF', 'UYI']) expect(toStripeAmount(1000, c)).toMatchObject({ ok: false, problem: expect.stringContaining(`Stripe does not take ${c}`) as unknown });
  });

  it('refuses a three-decimal amount Stripe cannot take instead of rounding it', () => {
    expect(toStripeAmount(12345, 'KWD')).toMatchObject({ ok: false });
  });

  it.each([[-1], [10.5], [Number.NaN], [2 ** 60]])('refuses the amount %d', (amount) => {
    expect(toStripeAmount(amount, 'EUR').ok).toBe(false);
  });

  it('refuses currencies the gateway does not know, and lower-case input', () => {
    expect(toStripeAmount(100, 'XYZ').ok).toBe(false);
    expect(toStripeAmount(100, 'eur').ok).toBe(false);
    expect(fromStripeAmount(100, 'xyz')).toBeNull();
  });
});

describe('test cards', () => {
  it('translates every gateway test card to a Stripe test PaymentMethod on a sandbox account', () => {
    for (const scenario of TEST_CARD_SCENARIOS) {
      const r = resolvePaymentMethod({ testCard: testCardNumber(scenario) }, true);
      expect(r).toEqual({ ok: true, paymentMethod: stripeTestPaymentMethod(scenario) });
    }
    expect(stripeTestPaymentMethod('insufficient_funds')).toBe('pm_card_visa_chargeDeclinedInsufficientFunds');
    expect(stripeTestPaymentMethod('expired_card')).toBe('pm_card_chargeDeclinedExpiredCard');
  });

  it('refuses test cards and magic test PaymentMethods on a live account, before sending', () => {
    expect(resolvePaymentMethod({ testCard: '4242424242424242' }, false)).toMatchObject({ ok: false, outcome: { kind: 'not_sent', reason: 'local_validation' } });
    expect(resolvePaymentMethod({ token: 'pm_card_visa' }, false).ok).toBe(false);
    expect(resolvePaymentMethod({ token: 'pm_1Real' }, false)).toEqual({ ok: true, paymentMethod: 'pm_1Real' });
  });

  it('refuses unknown card numbers and an empty payment method', () => {
    expect(resolvePaymentMethod({ testCard: '4111111111111111' }, true).ok).toBe(false);
    expect(resolvePaymentMethod({}, true).ok).toBe(false);
  });
});

describe('request params', () => {
  const VISA = { paymentMethod: 'pm_card_visa' };
  const req = {
    paymentId: 'pay_1', attemptId: 'att_1', amount: 1000, currency: 'EUR', captureMethod: 'manual' as const,
    paymentMethod: { testCard: '4242424242424242' }, idempotencyKey: 'pay_1:prepare:1',
  };

  it('prepares without confirming, names the payment and attempt, and asks for multicapture on manual capture', () => {
    const p = paymentIntentCreateParams(req, { amount: 1000, currency: 'eur' }, VISA);
    expect(p).toMatchObject({
      amount: 1000, currency: 'eur', confirm: false, capture_method: 'manual', payment_method: 'pm_card_visa',
      allowed_payment_method_types: ['card'], metadata: { payment_id: 'pay_1', attempt_id: 'att_1' },
      payment_method_options: { card: { request_multicapture: 'if_available' } },
    });
    expect(paymentIntentCreateParams({ ...req, captureMethod: 'automatic' }, { amount: 1000, currency: 'eur' }, VISA).payment_method_options).toBeUndefined();
  });

  it('authorizes in one call: the same create, confirmed, and failing instead of waiting for customer authentication', () => {
    const p = authorizeCreateParams(req, { amount: 1000, currency: 'eur' }, VISA);
    expect(p).toEqual({ ...paymentIntentCreateParams(req, { amount: 1000, currency: 'eur' }, VISA), confirm: true, error_on_requires_action: true });
    // Deterministic: a same-key resend is the same request (anything else is Stripe's idempotency_error).
    expect(authorizeCreateParams(req, { amount: 1000, currency: 'eur' }, VISA)).toEqual(p);
  });

  it('a saved card goes with its Customer: {payment_method, customer} sends customer; a bare PaymentMethod sends none', () => {
    const saved = resolvePaymentMethod({ token: { payment_method: 'pm_1Saved', customer: 'cus_1' } }, false);
    expect(saved).toEqual({ ok: true, paymentMethod: 'pm_1Saved', customer: 'cus_1' });
    expect(authorizeCreateParams(req, { amount: 1000, currency: 'eur' }, saved as { paymentMethod: string; customer: string })).toMatchObject({ payment_method: 'pm_1Saved', customer: 'cus_1', confirm: true });
    expect(authorizeCreateParams(req, { amount: 1000, currency: 'eur' }, VISA)).not.toHaveProperty('customer');
  });

  it("refuses a token without payment_method, or with Adyen's fields, before sending (local validation)", () => {
    expect(stripeTokenProblem('pm_1')).toBeNull();
    expect(stripeTokenProblem({ payment_method: 'pm_1' })).toBeNull();
    expect(stripeTokenProblem({ customer: 'cus_1' })).toContain('needs payment_method');
    expect(stripeTokenProblem({ stored_payment_method_id: 'x', shopper_reference: 'shopper-1' })).toContain('not Adyen');
    expect(resolvePaymentMethod({ token: { customer: 'cus_1' } }, true)).toMatchObject({ ok: false, outcome: { kind: 'not_sent', reason: 'local_validation' } });
  });

  it('sends final_capture only when false', () => {
    const base = { paymentId: 'p', attemptId: 'a', captureId: 'c', providerRef: 'pi_1', amount: 5, currency: 'EUR', idempotencyKey: 'k' };
    expect(captureParams({ ...base, final: true }, 5)).not.toHaveProperty('final_capture');
    expect(captureParams({ ...base, final: false }, 5)).toMatchObject({ final_capture: false, amount_to_capture: 5 });
  });

  it('passes only the refund reasons Stripe knows', () => {
    const base = { paymentId: 'p', attemptId: 'a', refundId: 'r', providerRef: 'pi_1', amount: 5, currency: 'EUR', idempotencyKey: 'k' };
    expect(refundParams({ ...base, reason: 'duplicate' }, 5)).toMatchObject({ reason: 'duplicate', payment_intent: 'pi_1', metadata: { refund_id: 'r' } });
    expect(refundParams({ ...base, reason: 'customer changed mind' }, 5)).not.toHaveProperty('reason');
  });
});

describe('integrity', () => {
  it('is silent when Stripe echoes what was asked and alerts otherwise', () => {
    expect(integrityProblem({ amount: 1000, currency: 'EUR' }, { amount: 1000, currency: 'eur' }, 'pi_1')).toBeNull();
    expect(integrityProblem({ amount: 1000, currency: 'EUR' }, { amount: 999, currency: 'eur' }, 'pi_1')).toMatchObject({ kind: 'unknown', reason: 'integrity_mismatch', alert: true });
    expect(integrityProblem({ amount: 1000, currency: 'EUR' }, { amount: 1000, currency: 'usd' }, 'pi_1')).toMatchObject({ reason: 'integrity_mismatch' });
  });
});

describe('reconciliation records', () => {
  it('reports amounts in gateway units with the attempt from metadata', () => {
    const r = reconciliationRecord(pi({ status: 'succeeded', amount_received: 600, latest_charge: { id: 'ch_1', amount_refunded: 100 } }));
    expect(r).toEqual({
      providerRef: 'pi_1', attemptId: 'att_1', status: 'succeeded', amount: 1000, currency: 'EUR',
      authorized: 600, captured: 600, refunded: 100, createdAt: new Date(1_800_000_000_000).toISOString(),
    });
  });
});
