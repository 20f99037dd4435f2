// Issue 43: stored provider tokens as objects. A saved Stripe card is paid with its Customer, a
// stored Adyen method with its shopper; a token lacking what its provider needs is a 400 naming
// the account, nothing written; the sandboxes refuse such payments as live does.
// The shipped config: stripe_eu and adyen_eu sandboxes, EUR >= 100,000 to Adyen first.
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentResource } from '../../../src/api/resource-schemas.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { paymentBody, rowCounts, startApiGateway } from './helpers.ts';

// Rows a refused create could write. Transitions and outbox rows are left out: an earlier payment's
// webhook may write them at any moment.
async function createdRows(): Promise<Record<string, number>> {
  const { payments, payment_attempts, captures, refunds, idempotency_records } = await rowCounts(api.gw);
  return { payments: payments!, payment_attempts: payment_attempts!, captures: captures!, refunds: refunds!, idempotency_records: idempotency_records! };
}
import type { ApiGateway } from './helpers.ts';

let api: ApiGateway;
let stripe: Stripe;
let adyenSandbox: SandboxControl;

beforeAll(async () => {
  api = await startApiGateway('stored_tokens', { authorizationWaitMs: 8000, log: () => undefined }, readFileSync('config/switchyard.yaml', 'utf8'), {}, true);
  const stripeSandbox = api.gw.rt.sandboxes.find((s) => s.account === 'stripe_eu')!;
  adyenSandbox = api.gw.rt.sandboxes.find((s) => s.account === 'adyen_eu')!;
  const u = new URL(stripeSandbox.url);
  stripe = new Stripe('sk_test_sandbox', { host: u.hostname, port: Number(u.port), protocol: 'http', maxNetworkRetries: 0, telemetry: false });
});
afterAll(async () => api?.close());

/** A card saved as live saves one: a Customer, and a test PaymentMethod attached to it (a new pm_ id). */
async function savedCard(): Promise<{ customer: string; paymentMethod: string }> {
  const customer = await stripe.customers.create({ email: 'shopper@example.com' });
  const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer: customer.id });
  expect(pm.id).not.toBe('pm_card_visa');
  expect(pm.customer).toBe(customer.id);
  return { customer: customer.id, paymentMethod: pm.id };
}

function adyenPayments(body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const url = new URL(`${adyenSandbox.url}/v72/payments`);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method: 'POST', ca: adyenSandbox.caPem, headers: { 'content-type': 'application/json', 'x-api-key': 'sandbox' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ merchantAccount: 'SwitchyardSandbox', amount: { value: 1000, currency: 'EUR' }, reference: 'direct-1', returnUrl: 'https://shop.example/return', ...body }));
  });
}

describe('stored tokens reach the provider with their owner', () => {
  it('Stripe {payment_method, customer}: authorized, the PaymentIntent carries the Customer', async () => {
    const card = await savedCard();
    const a = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', tokens: { stripe_eu: { payment_method: card.paymentMethod, customer: card.customer } } } }) });
    expect(a.status, a.text).toBe(201);
    const p = paymentResource.parse(a.json);
    expect([p.status, p.connector]).toEqual(['authorized', 'stripe_eu']);
    const pi = await stripe.paymentIntents.retrieve(p.attempts[0]!.provider_reference!);
    expect([pi.customer, pi.payment_method]).toEqual([card.customer, card.paymentMethod]);
  });

  it('a bare string still works for a one-off Stripe PaymentMethod', async () => {
    const a = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', tokens: { stripe_eu: 'pm_card_visa' } } }) });
    expect(paymentResource.parse(a.json).status).toBe('authorized');
  });

  it('Adyen {stored_payment_method_id, shopper_reference}: authorized at Adyen', async () => {
    const a = await api.call('POST', '/v1/payments', {
      body: paymentBody({ amount: 100_000, payment_method: { type: 'card', tokens: { adyen_eu: { stored_payment_method_id: '8316082917311234', shopper_reference: 'shopper-42' } } } }),
    });
    expect(a.status, a.text).toBe(201);
    const p = paymentResource.parse(a.json);
    expect([p.status, p.connector]).toEqual(['authorized', 'adyen_eu']);
  });
});

describe('a token lacking what its provider needs: 400 on payment_method.tokens.<account>, nothing written', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['an Adyen bare string (no shopper)', { adyen_eu: '8316082917311234' }, 'only under its shopper'],
    ['an Adyen object without shopper_reference', { adyen_eu: { stored_payment_method_id: '8316082917311234' } }, 'shopper_reference is missing'],
    ['a Stripe object without payment_method', { stripe_eu: { customer: 'cus_1' } }, 'needs payment_method'],
    ["Adyen's fields for a Stripe account", { stripe_eu: { stored_payment_method_id: 'x', shopper_reference: 'shopper-42' } }, "not Adyen's"],
  ];
  it.each(cases)('%s', async (_name, tokens, says) => {
    const before = await createdRows();
    const a = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', tokens } }) });
    expect(a.status, a.text).toBe(400);
    const account = Object.keys(tokens)[0]!;
    expect(a.json.errors).toEqual([{ path: `payment_method.tokens.${account}`, message: expect.stringContaining(says) as unknown }]);
    expect(await createdRows()).toEqual(before);
  });

  it('a token of another type (a number) is a 400 naming the account', async () => {
    const a = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', tokens: { stripe_eu: 42 } } }) });
    expect(a.status).toBe(400);
    expect(a.json.errors.map((e) => e.path)).toEqual(['payment_method.tokens.stripe_eu']);
  });
});

describe('the sandboxes refuse what live refuses', () => {
  it('Stripe: a saved card without its Customer, or with another, is a 400 before anything is charged', async () => {
    const card = await savedCard();
    const other = await stripe.customers.create({});
    const without = await stripe.paymentIntents.create({ amount: 1000, currency: 'eur', payment_method: card.paymentMethod, confirm: true }).then(() => null, (e: unknown) => e);
    expect(without).toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400, param: 'customer', message: expect.stringContaining('Please include the Customer in the `customer` parameter') as unknown });
    const wrong = await stripe.paymentIntents.create({ amount: 1000, currency: 'eur', payment_method: card.paymentMethod, customer: other.id, confirm: true }).then(() => null, (e: unknown) => e);
    expect(wrong).toMatchObject({ statusCode: 400, message: `The customer does not have a payment method with the ID ${card.paymentMethod}. The payment method must be attached to the customer.` });
    const unknownCustomer = await stripe.paymentIntents.create({ amount: 1000, currency: 'eur', payment_method: 'pm_card_visa', customer: 'cus_nobody', confirm: true }).then(() => null, (e: unknown) => e);
    expect(unknownCustomer).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'customer' });
    const ok = await stripe.paymentIntents.create({ amount: 1000, currency: 'eur', payment_method: card.paymentMethod, customer: card.customer, confirm: true, capture_method: 'manual' });
    expect(ok.status).toBe('requires_capture');
  });

  it("Adyen: a storedPaymentMethodId without shopperReference is 422 130 \"Required field 'shopperReference' is not provided.\"", async () => {
    const stored = { paymentMethod: { type: 'scheme', storedPaymentMethodId: '8316082917311234' } };
    const without = await adyenPayments({ ...stored, shopperInteraction: 'Ecommerce', recurringProcessingModel: 'CardOnFile' });
    expect(without).toMatchObject({ status: 422, body: { status: 422, errorCode: '130', message: "Required field 'shopperReference' is not provided.", errorType: 'validation' } });
    const short = await adyenPayments({ ...stored, reference: 'direct-2', shopperReference: 'ab' });
    expect(short.status).toBe(422);
    const ok = await adyenPayments({ ...stored, reference: 'direct-3', shopperReference: 'shopper-42', shopperInteraction: 'Ecommerce', recurringProcessingModel: 'CardOnFile' });
    expect(ok).toMatchObject({ status: 200, body: { resultCode: 'Authorised' } });
  });
});
