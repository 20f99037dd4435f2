// Issue 44's proof, end to end in Chromium: a merchant's page on its own origin embeds the hosted
// card form, the customer types a card, the page receives pmd_…, the merchant creates a payment
// with it while Stripe is in outage, and the payment is authorized on Adyen with the card the vault
// revealed; then captured and refunded. Afterwards the card number and code are nowhere in the
// gateway: no table (idempotency records included), no Redis key, no log line, no merchant event.
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { scanForCardData } from '../../../src/ops/card-data-scan.ts';
import { startApiGateway } from '../api/helpers.ts';
import type { ApiGateway, Body } from '../api/helpers.ts';
import { launchChromium } from '../helpers/browser.ts';
import type { TestBrowser } from '../helpers/browser.ts';
import { REDIS_URL } from '../helpers/runtime.ts';
import { until } from '../helpers/until.ts';
import { allowOrigins, startShop } from '../tokens/helpers.ts';
import type { Received, ShopPage } from '../tokens/helpers.ts';

// Approved at both sandboxes (docs/sandbox.md, raw card data).
const NUMBER = '5555555555554444';
const CODE = '737';

let api: ApiGateway;
let chromium: TestBrowser;
let shop: ShopPage;
let stripe: SandboxControl;

beforeAll(async () => {
  // The shipped config: stripe_eu first for EUR below 100,000, adyen_eu behind it.
  api = await startApiGateway('hosted_form_failover', { authorizationWaitMs: 15_000, modificationWaitMs: 15_000, rateLimits: null }, readFileSync('config/switchyard.yaml', 'utf8'), {}, true);
  stripe = api.gw.rt.sandboxes.find((s) => s.account === 'stripe_eu')!;
  shop = await startShop(() => `${api.url}/elements/card?key=${api.publishableKey}`);
  await allowOrigins(api, api.merchantId, [shop.origin]);
  chromium = await launchChromium();
});
afterAll(async () => {
  await stripe?.outage(0);
  await chromium?.close();
  await shop?.close();
  await api?.close();
});

function paymentSettles(id: string, done: (p: Body) => boolean): Promise<Body> {
  return until(async () => (await api.call('GET', `/v1/payments/${id}`)).json, done, `payment ${id}`, 20_000);
}

describe('a card typed into the hosted form, charged where the first provider is down', () => {
  it('tokenized in the browser, authorized on Adyen while Stripe is in outage, captured and refunded; no card data left in the gateway', async () => {
    const page = await chromium.context.newPage();
    await page.goto(shop.origin);
    const form = page.frameLocator('#card');
    await form.locator('#sy-number').fill('5555 5555 5555 4444');
    await form.locator('#sy-exp_month').fill('11');
    await form.locator('#sy-exp_year').fill(String(new Date().getUTCFullYear() + 4));
    await form.locator('#sy-cvc').fill(CODE);
    await form.locator('#sy-holder_name').fill('Ada Lovelace');
    await form.locator('#sy-save').click();
    await page.waitForFunction(() => (globalThis as unknown as { received: Received[] }).received.some((m) => m.data.type === 'switchyard.payment_method'), undefined, { timeout: 15_000 });
    const received = await page.evaluate(() => (globalThis as unknown as { received: Received[] }).received);
    const pm = received.find((m) => m.data.type === 'switchyard.payment_method')!.data.payment_method as { id: string };
    expect(pm.id).toMatch(/^pmd_/);
    await page.close();

    await stripe.outage(60);
    const created = await api.call('POST', '/v1/payments', { body: { amount: 4200, currency: 'EUR', reference: 'hosted-form-1', capture_method: 'manual', payment_method: { type: 'card', id: pm.id } } });
    expect(created.status, created.text).toBe(201);
    expect(created.json.status).toBe('authorized');
    expect(created.json.attempts.map((a) => [a['connector'], a['status'], a['proof']])).toEqual([['stripe_eu', 'abandoned', 'not_sent'], ['adyen_eu', 'authorized', null]]);
    expect(created.json['payment_method']).toMatchObject({ type: 'card', id: pm.id, card: { brand: 'mastercard', last4: '4444' } });
    await stripe.outage(0);

    const id = created.json.id;
    const capture = await api.call('POST', `/v1/payments/${id}/capture`, { body: {} });
    expect([200, 202]).toContain(capture.status);
    await paymentSettles(id, (p) => p.status === 'captured');
    const refund = await api.call('POST', `/v1/payments/${id}/refunds`, { body: {} });
    expect([200, 201, 202]).toContain(refund.status);
    const refunded = await paymentSettles(id, (p) => p['amount_refunded'] === 4200);
    expect((refunded['refunds'] as Body[]).map((r) => r.status)).toEqual(['succeeded']);

    // The Adyen sandbox kept the last four and a fingerprint, never the number (its own test); the gateway kept nothing of it.
    const events = await api.gw.db.pool.query<{ body: string }>('SELECT payload::text AS body FROM merchant_events');
    const redis = new Redis(REDIS_URL);
    try {
      const findings = await scanForCardData({
        databaseUrl: api.gw.db.url, redis: { client: redis, prefix: api.gw.prefix },
        texts: [{ name: 'gateway log', lines: api.logs }, { name: 'merchant events', lines: events.rows.map((r) => r.body) }],
      }, [NUMBER]);
      expect(findings).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});
