// How each connector puts a vaulted card on the wire (issue 44): deterministic in the card, the code
// only while the vault has it, the holder's name only when known, never a PaymentMethod id beside it.

import { describe, expect, it } from 'vitest';
import { rawCardDetails, resolvePaymentMethod as resolveAdyen } from '../../../src/connectors/adyen/transformers.ts';
import type { ConnectorCard } from '../../../src/connectors/contract.ts';
import { withRawCard } from '../../../src/connectors/stripe/card-data.ts';
import { authorizeCreateParams, resolvePaymentMethod as resolveStripe } from '../../../src/connectors/stripe/transformers.ts';

const CARD: ConnectorCard = { paymentMethodId: 'pmd_1', number: '4242424242424242', expMonth: 3, expYear: 2031, cvc: '123', holderName: 'Ada Lovelace' };
const REQ = { paymentId: 'pay_1', attemptId: 'att_1', amount: 1000, currency: 'EUR', captureMethod: 'manual' as const, paymentMethod: { card: CARD }, idempotencyKey: 'pay_1:auth:1' };

describe('Stripe: payment_method_data[card] (card-data.ts)', () => {
  it('replaces payment_method with the card, its code and the holder name', () => {
    const params = withRawCard({ amount: 1000, currency: 'eur', payment_method: 'pm_card_visa' }, CARD);
    expect(params).toEqual({
      amount: 1000, currency: 'eur',
      payment_method_data: { type: 'card', card: { number: '4242424242424242', exp_month: 3, exp_year: 2031, cvc: '123' }, billing_details: { name: 'Ada Lovelace' } },
    });
  });

  it('leaves out the code once the vault forgot it, and a name it never had', () => {
    const data = withRawCard({ amount: 1000, currency: 'eur' }, { ...CARD, cvc: null, holderName: null }).payment_method_data;
    expect(data).toEqual({ type: 'card', card: { number: '4242424242424242', exp_month: 3, exp_year: 2031 } });
  });

  it('a vaulted card wins over nothing else and gives the same authorization params every time (a same-key resend is the same request)', () => {
    const pm = resolveStripe({ card: CARD }, false);
    expect(pm).toEqual({ ok: true, card: CARD });
    if (!pm.ok) throw new Error('unreachable');
    const wire = { amount: 1000, currency: 'eur' };
    const first = authorizeCreateParams(REQ, wire, pm);
    expect(JSON.stringify(authorizeCreateParams(REQ, wire, pm))).toBe(JSON.stringify(first));
    expect(first).not.toHaveProperty('payment_method');
    expect(first).toMatchObject({ confirm: true, error_on_requires_action: true, metadata: { attempt_id: 'att_1' }, payment_method_data: { type: 'card' } });
  });
});

describe('Adyen: paymentMethod scheme with raw card data', () => {
  it('sends the expiry as Adyen reads it ("03", "2031"), the code and the holder name', () => {
    expect(rawCardDetails(CARD)).toEqual({ type: 'scheme', number: '4242424242424242', expiryMonth: '03', expiryYear: '2031', cvc: '123', holderName: 'Ada Lovelace' });
  });

  it('leaves out the code once the vault forgot it; a live account takes the card too', () => {
    expect(rawCardDetails({ ...CARD, expMonth: 11, cvc: null, holderName: null })).toEqual({ type: 'scheme', number: '4242424242424242', expiryMonth: '11', expiryYear: '2031' });
    expect(resolveAdyen({ card: CARD }, false)).toMatchObject({ ok: true, value: { paymentMethod: { number: '4242424242424242' }, additionalData: {} } });
  });
});
