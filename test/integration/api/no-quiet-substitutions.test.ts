// Issue 43, "Merchants: no quiet substitutions": what the merchant asked for that the gateway
// cannot do is refused at once, naming the field, with nothing written — never accepted, waited on
// and quietly failed; and a finished operation repeated with a new key is answered one way.
// The shipped config: stripe_eu and adyen_eu sandboxes, EUR >= 100,000 to Adyen first, USD split.
import { readFileSync } from 'node:fs';
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
let stripeSandbox: SandboxControl;

beforeAll(async () => {
  api = await startApiGateway('no_quiet', { authorizationWaitMs: 8000, modificationWaitMs: 8000, log: () => undefined }, readFileSync('config/switchyard.yaml', 'utf8'), {}, true);
  stripeSandbox = api.gw.rt.sandboxes.find((s) => s.account === 'stripe_eu')!;
});
afterAll(async () => api?.close());

/** POSTs a payment and checks it was refused 400 on `path` with nothing written; returns the answer. */
async function refusedOn(path: string, body: Record<string, unknown>) {
  const before = await createdRows();
  const started = Date.now();
  const a = await api.call('POST', '/v1/payments', { body });
  expect(a.status, a.text).toBe(400);
  expect(a.json.code).toBe('validation_error');
  expect(a.json.errors.map((e) => e.path)).toEqual([path]);
  // At once, not after the authorization wait.
  expect(Date.now() - started).toBeLessThan(3000);
  expect(await createdRows()).toEqual(before);
  return a;
}

describe('refused at once, naming the field, nothing written', () => {
  it('an unknown test_card (Adyen\'s usual 4111 1111 1111 1111): 400 on payment_method.test_card listing the accepted cards, without echoing the number', async () => {
    const a = await refusedOn('payment_method.test_card', paymentBody({ payment_method: { type: 'card', test_card: '4111111111111111' } }));
    const message = a.json.errors[0]!.message;
    expect(message).toContain('4242424242424242 (approved)');
    expect(message).toContain('4000002760003184 (authentication_challenge)');
    expect(a.text).not.toContain('4111111111111111');
  });

  it('tokens naming only accounts the config does not have: 400 on payment_method.tokens naming them', async () => {
    const a = await refusedOn('payment_method.tokens', paymentBody({ payment_method: { type: 'card', tokens: { stripe_us: 'pm_card_visa' } } }));
    expect(a.json.errors[0]!.message).toBe('tokens name no configured connector account (stripe_us); configured: adyen_eu, stripe_eu');
  });

  it('an amount no candidate can take (above Stripe\'s maximum, no whole rupiah for Adyen): 400 on amount with each reason', async () => {
    const a = await refusedOn('amount', paymentBody({ amount: 10_000_000_050, currency: 'IDR' }));
    expect(a.json.errors[0]!.message).toContain("stripe_eu: 10000000050 IDR is above the provider's maximum");
    expect(a.json.errors[0]!.message).toContain('adyen_eu: 10000000050 IDR (ISO minor units) cannot be sent to Adyen');
  });
});

describe("amounts above a provider's maximum", () => {
  it("routing skips Stripe above its 8 digits and Adyen (no documented maximum) takes the payment", async () => {
    const a = await api.call('POST', '/v1/payments', { body: paymentBody({ amount: 100_000_000, currency: 'USD' }) });
    expect(a.status, a.text).toBe(201);
    const p = paymentResource.parse(a.json);
    expect(p.status).toBe('authorized');
    expect(p.connector).toBe('adyen_eu');
    expect(p.routing.skipped).toEqual([{ connector: 'stripe_eu', reason: expect.stringContaining("above the provider's maximum") as unknown }]);
  });

  it('the Stripe sandbox refuses more than 8 digits as live Stripe does (400 amount_too_large) and takes 99999999', async () => {
    const u = new URL(stripeSandbox.url);
    const stripe = new Stripe('sk_test_sandbox', { host: u.hostname, port: Number(u.port), protocol: 'http', maxNetworkRetries: 0, telemetry: false });
    const err = await stripe.paymentIntents.create({ amount: 100_000_000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, capture_method: 'manual' }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(err).toMatchObject({ statusCode: 400, code: 'amount_too_large', param: 'amount', message: 'Amount must be no more than $999,999.99' });
    const ok = await stripe.paymentIntents.create({ amount: 99_999_999, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, capture_method: 'manual' });
    expect(ok.status).toBe('requires_capture');
  });
});

describe('a finished operation repeated with a new key', () => {
  it('a void of a voided payment and a capture of a captured payment both answer 409 invalid_state naming the state', async () => {
    const voided = paymentResource.parse((await api.call('POST', '/v1/payments', { body: paymentBody() })).json);
    expect((await api.call('POST', `/v1/payments/${voided.id}/void`, { body: {} })).status).toBe(200);
    const again = await api.call('POST', `/v1/payments/${voided.id}/void`, { body: {} });
    expect(again.status, again.text).toBe(409);
    expect(again.json).toMatchObject({ code: 'invalid_state', detail: 'cannot void a payment that is voided' });

    const captured = paymentResource.parse((await api.call('POST', '/v1/payments', { body: paymentBody() })).json);
    expect((await api.call('POST', `/v1/payments/${captured.id}/capture`, { body: {} })).status).toBe(200);
    const twice = await api.call('POST', `/v1/payments/${captured.id}/capture`, { body: {} });
    expect(twice.status, twice.text).toBe(409);
    expect(twice.json).toMatchObject({ code: 'invalid_state', detail: 'cannot capture a payment that is captured' });
  });

  it('the same key still replays the first answer', async () => {
    const p = paymentResource.parse((await api.call('POST', '/v1/payments', { body: paymentBody() })).json);
    const first = await api.call('POST', `/v1/payments/${p.id}/void`, { body: {}, idem: `void-${p.id}` });
    const replay = await api.call('POST', `/v1/payments/${p.id}/void`, { body: {}, idem: `void-${p.id}` });
    expect([first.status, replay.status]).toEqual([200, 200]);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });
});
