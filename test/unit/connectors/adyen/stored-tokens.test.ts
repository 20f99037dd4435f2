// Issue 43: a stored Adyen payment method is paid with its shopper. The customer is present, so the
// payment is Ecommerce with recurringProcessingModel CardOnFile (ContAuth is for merchant-initiated
// payments); a token without its shopper is refused before sending.
import { describe, expect, it } from 'vitest';
import { adyenTokenProblem, paymentRequest, resolvePaymentMethod } from '../../../../src/connectors/adyen/transformers.ts';
import type { AuthorizeRequest, PaymentToken } from '../../../../src/connectors/contract.ts';

const req = (token: PaymentToken): AuthorizeRequest => ({
  paymentId: 'pay_1', attemptId: 'att_1', amount: 1000, currency: 'EUR', captureMethod: 'manual', paymentMethod: { token }, idempotencyKey: 'k', providerRef: null,
});

function requestFor(token: PaymentToken) {
  const method = resolvePaymentMethod({ token }, true);
  if (!method.ok) throw new Error(method.outcome.detail);
  return paymentRequest(req(token), { value: 1000, currency: 'EUR' }, method.value, 'SwitchyardSandbox', 'https://gw.example/return');
}

describe('Adyen stored payment methods', () => {
  it('sends storedPaymentMethodId with shopperReference, shopperInteraction Ecommerce and recurringProcessingModel CardOnFile', () => {
    const body = requestFor({ stored_payment_method_id: '8316082917311234', shopper_reference: 'shopper-42' });
    expect(body).toMatchObject({
      paymentMethod: { type: 'scheme', storedPaymentMethodId: '8316082917311234' },
      shopperReference: 'shopper-42',
      shopperInteraction: 'Ecommerce',
      recurringProcessingModel: 'CardOnFile',
    });
  });

  it('a test card payment names no shopper and no recurring model', () => {
    const method = resolvePaymentMethod({ testCard: '4242424242424242' }, true);
    if (!method.ok) throw new Error('refused');
    const body = paymentRequest(req('x'), { value: 1000, currency: 'EUR' }, method.value, 'SwitchyardSandbox', 'https://gw.example/return');
    expect(body).not.toHaveProperty('shopperReference');
    expect(body).not.toHaveProperty('recurringProcessingModel');
  });

  it('says what a token lacks, and the connector refuses it before sending', () => {
    expect(adyenTokenProblem({ stored_payment_method_id: 'x', shopper_reference: 'shopper-42' })).toBeNull();
    expect(adyenTokenProblem('8316082917311234')).toContain('only under its shopper');
    expect(adyenTokenProblem({ stored_payment_method_id: 'x' })).toContain('shopper_reference is missing');
    expect(adyenTokenProblem({ shopper_reference: 'shopper-42' })).toContain('stored_payment_method_id is missing');
    expect(adyenTokenProblem({ stored_payment_method_id: 'x', shopper_reference: 'ab' })).toContain('at least 3 characters');
    expect(adyenTokenProblem({ payment_method: 'pm_1', customer: 'cus_1' })).toContain("not Stripe's");
    expect(resolvePaymentMethod({ token: { stored_payment_method_id: 'x' } }, true)).toMatchObject({ ok: false, outcome: { kind: 'not_sent', reason: 'local_validation' } });
  });
});
