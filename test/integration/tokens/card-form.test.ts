// The hosted card form in Debian's Chromium: a merchant's page on its own origin (localhost, another
// port) frames GET /elements/card, the customer types a card, and the page receives the pmd_ id by
// postMessage — the gateway's origin as the sender. A page on an origin the merchant did not allow
// cannot frame the form (CSP frame-ancestors) and receives nothing. Then: the full number is in no
// request URL, no log line and no table of the gateway's database. And the form's HTTP contract:
// its CSP, a bad key (401), a merchant without origins (403), `origin=` narrowing it.
import { captureStdio } from '../helpers/capture-stdio.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { paymentMethodResource } from '../../../src/api/payment-method-schemas.ts';
import { startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { launchChromium } from '../helpers/browser.ts';
import type { TestBrowser } from '../helpers/browser.ts';
import { allowOrigins, CARD, gatewayTablesHolding, startShop, vaultRows } from './helpers.ts';
import type { Received, ShopPage } from './helpers.ts';

let api: ApiGateway;
let chromium: TestBrowser;
let shop: ShopPage;
let elsewhere: ShopPage;
const written: string[] = [];
const requested: string[] = [];

beforeAll(async () => {
  captureStdio(written);
  api = await startApiGateway('tokens_card_form', { rateLimits: null });
  const formUrl = () => `${api.url}/elements/card?key=${api.publishableKey}`;
  shop = await startShop(formUrl);
  elsewhere = await startShop(formUrl);
  await allowOrigins(api, api.merchantId, [shop.origin]);
  chromium = await launchChromium();
  chromium.context.on('request', (r) => requested.push(r.url()));
});
afterAll(async () => {
  vi.restoreAllMocks();
  await chromium?.close();
  await shop?.close();
  await elsewhere?.close();
  await api?.close();
});

describe('the hosted card form in Chromium', () => {
  it('framed by the merchant\'s page: the customer types a card, the page receives the pmd_ id from the gateway\'s origin', async () => {
    const before = await vaultRows(api);
    const page = await chromium.context.newPage();
    await page.goto(shop.origin);
    const form = page.frameLocator('#card');
    await form.locator('#sy-number').fill('4000 0566 5566 5556');
    await form.locator('#sy-exp_month').fill('12');
    await form.locator('#sy-exp_year').fill('2039');
    await form.locator('#sy-cvc').fill(CARD.cvc);
    await form.locator('#sy-holder_name').fill('Ada Lovelace');
    await form.locator('#sy-save').click();
    await page.waitForFunction(() => (globalThis as unknown as { received: Received[] }).received.some((m) => m.data.type === 'switchyard.payment_method'), undefined, { timeout: 15_000 });
    const received = await page.evaluate(() => (globalThis as unknown as { received: Received[] }).received);
    const saved = received.find((m) => m.data.type === 'switchyard.payment_method')!;
    expect(saved.origin).toBe(api.url);
    const pm = paymentMethodResource.parse(saved.data.payment_method);
    expect(pm.id).toMatch(/^pmd_/);
    expect(pm.card).toMatchObject({ brand: 'visa', last4: '5556', exp_month: 12, exp_year: 2039 });
    expect(received.map((m) => m.data.type)).toEqual(['switchyard.ready', 'switchyard.payment_method']);
    expect(JSON.stringify(received)).not.toContain(CARD.number);
    // The merchant's server reads it with the secret key; the form cleared itself.
    expect((await api.call('GET', `/v1/payment_methods/${pm.id}`)).json).toEqual(pm);
    expect(await form.locator('#sy-number').inputValue()).toBe('');
    await expect.poll(() => form.locator('#sy-status').textContent()).toBe('Card saved: visa ending 5556');
    expect(await vaultRows(api)).toBe(before + 1);

    // A refused card: the form names the field; the page is told the code and the field, never the value.
    await form.locator('#sy-number').fill('4000056655665557');
    await form.locator('#sy-exp_month').fill('12');
    await form.locator('#sy-exp_year').fill('2039');
    await form.locator('#sy-cvc').fill(CARD.cvc);
    await form.locator('#sy-save').click();
    await page.waitForFunction(() => (globalThis as unknown as { received: Received[] }).received.some((m) => m.data.type === 'switchyard.error'), undefined, { timeout: 15_000 });
    const refused = (await page.evaluate(() => (globalThis as unknown as { received: Received[] }).received)).find((m) => m.data.type === 'switchyard.error')!;
    expect(refused.data).toEqual({ type: 'switchyard.error', code: 'validation_error', field: 'card.number' });
    expect(await form.locator('#sy-number').getAttribute('aria-invalid')).toBe('true');
    expect(await vaultRows(api)).toBe(before + 1);
    await page.close();
  });

  it('cannot be framed by a page on an origin the merchant did not allow, which receives nothing', async () => {
    const page = await chromium.context.newPage();
    await page.goto(elsewhere.origin);
    await sleep(1_500);
    expect(await page.frameLocator('#card').locator('#sy-number').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { received: Received[] }).received)).toEqual([]);
    // Once the merchant allows that origin too, the same page frames it (the refusal was the origin, nothing else).
    await allowOrigins(api, api.merchantId, [shop.origin, elsewhere.origin]);
    await page.reload();
    await expect.poll(() => page.frameLocator('#card').locator('#sy-number').count(), { timeout: 10_000 }).toBe(1);
    // The form names each allowed origin as the target: the browser delivers only the one that is the parent's (once; '*' would deliver every copy).
    await expect.poll(() => page.evaluate(() => (globalThis as unknown as { received: Received[] }).received.length)).toBe(1);
    await sleep(300);
    expect(await page.evaluate(() => (globalThis as unknown as { received: Received[] }).received)).toEqual([{ origin: api.url, data: { type: 'switchyard.ready' } }]);
    await allowOrigins(api, api.merchantId, [shop.origin]);
    await page.close();
  });

  it('leaves the card number in no URL, log line or table of the gateway\'s database', async () => {
    const digits = CARD.number;
    expect(requested.some((u) => u.startsWith(`${api.url}/v1/tokens`))).toBe(true);
    for (const u of requested) {
      expect(u).not.toContain(digits);
      expect(decodeURIComponent(u)).not.toContain('0566 5566');
    }
    const logs = [...api.logs, ...written].join('\n');
    expect(api.logs.some((l) => l.includes('"path":"/v1/tokens"'))).toBe(true);
    expect(logs).not.toContain(digits);
    expect(logs).not.toContain('4000 0566 5566 5556');
    expect(logs).not.toContain('4000056655665557');
    expect(await gatewayTablesHolding(api, [digits, '4000 0566 5566 5556', '4000056655665557'])).toEqual([]);
  });
});

describe('GET /elements/card', () => {
  it('is sent with a strict CSP whose frame-ancestors are the merchant\'s origins, and its script from the same origin', async () => {
    const res = await fetch(`${api.url}/elements/card?key=${api.publishableKey}`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp.split('; ')).toEqual([
      "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "form-action 'none'", "base-uri 'none'", `frame-ancestors ${shop.origin}`,
    ]);
    expect(res.headers.get('x-frame-options')).toBeNull();
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toContain('<script src="/elements/card.js"></script>');
    // No inline script, no third-party resource, no input that a form submission could carry.
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toMatch(/<input[^>]*\bname=/);
    expect(html.match(/<input /g)).toHaveLength(5);
    expect(html).not.toMatch(/https?:\/\/(?!localhost)/);
    const script = await fetch(`${api.url}/elements/card.js`);
    expect([script.status, script.headers.get('content-type'), script.headers.get('x-content-type-options')]).toEqual([200, 'text/javascript; charset=utf-8', 'nosniff']);
    expect(await script.text()).not.toContain("'*'");
  });

  it('narrows to one allowed origin with origin=, and refuses a bad key, a merchant without origins, and an origin not allowed', async () => {
    const one = await fetch(`${api.url}/elements/card?key=${api.publishableKey}&origin=${encodeURIComponent(shop.origin)}`);
    expect(one.status).toBe(200);
    expect(one.headers.get('content-security-policy')).toContain(`frame-ancestors ${shop.origin}`);
    expect(await one.text()).toContain(`data-origins="[&#34;${shop.origin}&#34;]"`);
    const notAllowed = await fetch(`${api.url}/elements/card?key=${api.publishableKey}&origin=${encodeURIComponent('https://evil.example')}`);
    expect(notAllowed.status).toBe(403);
    const badKey = await fetch(`${api.url}/elements/card?key=pk_sy_notakeynotakey`);
    expect([badKey.status, badKey.headers.get('x-frame-options')]).toEqual([401, 'DENY']);
    expect((await fetch(`${api.url}/elements/card?key=${api.apiKey}`)).status).toBe(401);
    expect((await fetch(`${api.url}/elements/card`)).status).toBe(401);
    const noOrigins = await api.newMerchant('no origins');
    const refused = await fetch(`${api.url}/elements/card?key=${noOrigins.publishableKey}`);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('has not set the origins allowed');
  });
});
