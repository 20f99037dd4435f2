// POST /v1/tokens with the publishable key: the masked payment method, refusals naming the field
// with nothing stored, the publishable key refused everywhere else, CORS for the merchant's origins
// only, rate limits per client address and per key, the hourly quota, the admission bound, and no
// card number or code in any answer or log line.
import { captureStdio } from '../helpers/capture-stdio.ts';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiApp } from '../../../src/api/app.ts';
import { DEFAULT_RATE_LIMITS } from '../../../src/api/rate-limit-policy.ts';
import type { ApiOptions } from '../../../src/api/app.ts';
import { paymentMethodResource } from '../../../src/api/payment-method-schemas.ts';
import { listenApi } from '../../../src/api/server.ts';
import { startApiGateway } from '../api/helpers.ts';
import type { ApiAnswer, ApiGateway } from '../api/helpers.ts';
import { allowOrigins, CARD, vaultRows } from './helpers.ts';

const SHOP = 'https://shop.example';
const OTHER_SHOP = 'https://other-shop.example';

let api: ApiGateway;
let other: { id: string; apiKey: string; publishableKey: string };
const written: string[] = [];
beforeAll(async () => {
  captureStdio(written);
  api = await startApiGateway('tokens_api', { rateLimits: null });
  other = await api.newMerchant('other shop');
  await allowOrigins(api, api.merchantId, [SHOP]);
  await allowOrigins(api, other.id, [OTHER_SHOP]);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await api?.close();
});

const tokenize = (card: Record<string, unknown> = { ...CARD }, o: { key?: string | null; headers?: Record<string, string> } = {}): Promise<ApiAnswer> =>
  api.call('POST', '/v1/tokens', { key: o.key === undefined ? api.publishableKey : o.key, idem: null, body: { card }, ...(o.headers === undefined ? {} : { headers: o.headers }) });

/** A second API app over the same runtime, with other options (limits, quota, admission). */
async function withApp<T>(opts: ApiOptions, run: (url: string) => Promise<T>): Promise<T> {
  const server = await listenApi(0, '127.0.0.1');
  server.attach(createApiApp(api.gw.rt, { log: (l) => api.logs.push(l), ...opts }));
  try {
    return await run(`http://127.0.0.1:${server.port}`);
  } finally {
    await server.close(500);
  }
}

const post = (url: string, key: string, body: unknown = { card: CARD }, headers: Record<string, string> = {}) =>
  fetch(`${url}/v1/tokens`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('POST /v1/tokens', () => {
  it('answers 201 with the masked payment method, which the secret key reads back; the number and code are in no answer', async () => {
    const before = await vaultRows(api);
    const created = await tokenize({ ...CARD, number: '4000 0566 5566 5556', holder_name: 'Ada Lovelace' });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const pm = paymentMethodResource.parse(created.json);
    expect(pm).toMatchObject({ object: 'payment_method', type: 'card', card: { brand: 'visa', last4: '5556', exp_month: 12, exp_year: 2039 } });
    expect(pm.id).toMatch(/^pmd_/);
    expect(pm.card.fingerprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created.text).not.toContain(CARD.number);
    expect(created.text).not.toContain('0566 5566');
    expect(created.text).not.toContain(CARD.cvc);
    expect(await vaultRows(api)).toBe(before + 1);

    const read = await api.call('GET', `/v1/payment_methods/${pm.id}`);
    expect([read.status, read.json]).toEqual([200, pm]);
    // The same card gives the same fingerprint for this merchant, another for another merchant.
    const again = await tokenize();
    expect(again.json['card']).toMatchObject({ fingerprint: pm.card.fingerprint });
    const theirs = await tokenize({ ...CARD }, { key: other.publishableKey });
    expect(theirs.status).toBe(201);
    expect((theirs.json['card'] as { fingerprint: string }).fingerprint).not.toBe(pm.card.fingerprint);
    expect((await api.call('GET', `/v1/payment_methods/${theirs.json.id}`)).status).toBe(404);
  });

  it('refuses a bad number, a past expiry or a malformed code with a 400 naming the field, and stores nothing', async () => {
    const before = await vaultRows(api);
    const cases: [Record<string, unknown>, string][] = [
      [{ ...CARD, number: '4000056655665557' }, 'card.number'],
      [{ ...CARD, number: '4000-0566-5566-555x' }, 'card.number'],
      [{ ...CARD, exp_year: 2020 }, 'card.exp_year'],
      [{ ...CARD, exp_month: 13 }, 'card.exp_month'],
      [{ ...CARD, cvc: '73' }, 'card.cvc'],
      [{ ...CARD, cvc: '7a7' }, 'card.cvc'],
      [{ ...CARD, number: 4000056655665556 }, 'card.number'],
      [{ exp_month: 12, exp_year: 2039, cvc: '737' }, 'card.number'],
      [{ ...CARD, cvc: undefined }, 'card.cvc'],
      [{ ...CARD, [CARD.number]: 'x' }, 'card.[card]'],
    ];
    for (const [card, field] of cases) {
      const r = await tokenize(card);
      expect([r.status, r.json.code, r.json.errors[0]?.path], JSON.stringify(field)).toEqual([400, 'validation_error', field]);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.text).not.toContain(CARD.number);
      expect(r.text).not.toContain('055665566555');
    }
    const notJson = await api.call('POST', '/v1/tokens', { key: api.publishableKey, idem: null, body: `{"card": {"number": "${CARD.number}"` });
    expect([notJson.status, notJson.json.code]).toEqual([400, 'malformed_json']);
    expect(notJson.text).not.toContain(CARD.number);
    expect(await vaultRows(api)).toBe(before);
  });

  it('is the only route a publishable key opens, and takes no secret key', async () => {
    const pk = api.publishableKey;
    const pmd = (await tokenize()).json.id;
    const elsewhere: [string, string, unknown?][] = [
      ['GET', '/v1/payments'], ['POST', '/v1/payments', {}], ['GET', '/v1/balances'], ['GET', `/v1/payment_methods/${pmd}`],
      ['POST', '/v1/payment_methods', { card: CARD }], ['GET', '/v1/webhook_endpoints'], ['GET', '/v1/tokens'], ['GET', '/v1/refunds/ref_x'],
    ];
    for (const [method, path, body] of elsewhere) {
      const r = await api.call(method, path, { key: pk, ...(body === undefined ? {} : { body }) });
      expect([method, path, r.status, r.json.code]).toEqual([method, path, 401, 'unauthorized']);
      expect(r.json['detail']).toMatch(/publishable key opens only POST \/v1\/tokens/);
    }
    const secret = await tokenize({ ...CARD }, { key: api.apiKey });
    expect([secret.status, secret.json.code]).toEqual([401, 'unauthorized']);
    expect(secret.json['detail']).toMatch(/takes the publishable key/);
    expect((await tokenize({ ...CARD }, { key: null })).status).toBe(401);
    expect((await tokenize({ ...CARD }, { key: 'pk_sy_notakeynotakeynotakey' })).status).toBe(401);
  });

  it('has CORS for the merchant\'s allowed origins only', async () => {
    const preflight = (origin: string) => fetch(`${api.url}/v1/tokens`, {
      method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    const ok = await preflight(SHOP);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(ok.headers.get('access-control-allow-methods')).toBe('POST');
    expect(ok.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    const refused = await preflight('https://evil.example');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();

    const before = await vaultRows(api);
    const fromShop = await tokenize({ ...CARD }, { headers: { origin: SHOP } });
    expect(fromShop.status).toBe(201);
    expect(fromShop.headers.get('access-control-allow-origin')).toBe(SHOP);
    // A page of the shop reads the 400 too (the field to fix).
    const badFromShop = await tokenize({ ...CARD, cvc: '1' }, { headers: { origin: SHOP } });
    expect([badFromShop.status, badFromShop.headers.get('access-control-allow-origin')]).toEqual([400, SHOP]);
    // Another merchant's origin passes the preflight, but not with this merchant's key: refused, nothing stored.
    const fromOtherShop = await tokenize({ ...CARD }, { headers: { origin: OTHER_SHOP } });
    expect([fromOtherShop.status, fromOtherShop.json.code, fromOtherShop.headers.get('access-control-allow-origin')]).toEqual([403, 'origin_not_allowed', null]);
    const fromEvil = await tokenize({ ...CARD }, { headers: { origin: 'https://evil.example' } });
    expect([fromEvil.status, fromEvil.json.code]).toEqual([403, 'origin_not_allowed']);
    expect(await vaultRows(api)).toBe(before + 1);
    // The gateway's own pages (the hosted form) post from its origin; a server sends no Origin.
    const sameOrigin = await tokenize({ ...CARD }, { headers: { origin: api.url } });
    expect([sameOrigin.status, sameOrigin.headers.get('access-control-allow-origin')]).toEqual([201, null]);
    expect((await tokenize()).status).toBe(201);
  });

  it('is rate-limited per client address, before any lookup, and per publishable key (429 + Retry-After), on buckets every API process shares', async () => {
    const perClient = { ...DEFAULT_RATE_LIMITS, client: { quota: 3, windowS: 300 }, publishableKey: null };
    await withApp({ rateLimits: perClient }, async (url) => {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await post(url, 'pk_sy_wrongwrongwrongwrong'));
      expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 429]);
      expect(answers.map((a) => a.headers.get('ratelimit'))).toEqual(['"client";r=2;t=100', '"client";r=1;t=100', '"client";r=0;t=100', '"client";r=0;t=100']);
      expect(answers[0]!.headers.get('ratelimit-policy')).toBe('"client";q=3;w=300');
      expect(Number(answers[3]!.headers.get('retry-after'))).toBe(100);
      expect(((await answers[3]!.json()) as { code: string }).code).toBe('rate_limited');
      // The address is spent for every key, the right one included.
      expect((await post(url, api.publishableKey)).status).toBe(429);
    });
    // Another API app (as another process) over the same Redis: the address is spent there too, the hosted form included.
    await withApp({ rateLimits: perClient }, async (url) => {
      expect((await post(url, api.publishableKey)).status).toBe(429);
      const form = await fetch(`${url}/elements/card?key=${api.publishableKey}`);
      expect([form.status, form.headers.get('retry-after')]).toEqual([429, '100']);
    });
    await withApp({ rateLimits: { ...DEFAULT_RATE_LIMITS, client: null, publishableKey: { quota: 2, windowS: 300 } } }, async (url) => {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await post(url, api.publishableKey));
      expect(answers.map((a) => a.status)).toEqual([201, 201, 429]);
      expect(answers[2]!.headers.get('ratelimit')).toBe('"publishable_key";r=0;t=150');
      expect(answers[2]!.headers.get('retry-after')).toBe('150');
      expect(((await answers[2]!.json()) as { detail: string }).detail).toMatch(/"publishable_key" \(2 requests per 300 s\) limit with this publishable key/);
      // Another merchant's key has its own bucket.
      expect((await post(url, other.publishableKey)).status).toBe(201);
    });
  });

  it(`stores at most SWITCHYARD_TOKENS_PER_HOUR payment methods per merchant; a refused card uses none`, async () => {
    const fresh = await api.newMerchant('quota shop');
    const second = await api.newMerchant('second quota shop');
    await withApp({ rateLimits: null, tokens: { perHour: 2 } }, async (url) => {
      expect((await post(url, fresh.publishableKey, { card: { ...CARD, cvc: '1' } })).status).toBe(400);
      const before = await vaultRows(api);
      const statuses = [];
      for (let i = 0; i < 2; i++) statuses.push((await post(url, fresh.publishableKey)).status);
      const over = await post(url, fresh.publishableKey);
      expect([...statuses, over.status]).toEqual([201, 201, 429]);
      const body = (await over.json()) as { code: string; detail: string };
      expect(body.code).toBe('payment_method_quota_exceeded');
      expect(body.detail).toContain('SWITCHYARD_TOKENS_PER_HOUR');
      const retryAfter = Number(over.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(await vaultRows(api)).toBe(before + 2);
      // Per merchant: another merchant still stores.
      expect((await post(url, second.publishableKey)).status).toBe(201);
    });
  });

  it('counts in the admission bound', async () => {
    await withApp({ rateLimits: null, admission: { maxInFlight: 1, retryAfterS: 3 } }, async (url) => {
      // A token request whose body never ends holds the only place.
      const { port } = new URL(url);
      const held = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/tokens', headers: { authorization: `Bearer ${api.publishableKey}`, 'content-type': 'application/json', 'content-length': '500' } });
      held.on('error', () => undefined);
      held.write('{"card":');
      await sleep(300);
      const shed = await post(url, api.publishableKey);
      expect([shed.status, shed.headers.get('retry-after'), ((await shed.json()) as { code: string }).code]).toEqual([503, '3', 'overloaded']);
      held.destroy();
      await sleep(200);
      expect((await post(url, api.publishableKey)).status).toBe(201);
    });
  });

  it('writes the number and the code to no log line', () => {
    const everything = [...api.logs, ...written].join('\n');
    expect(api.logs.some((l) => l.includes('"path":"/v1/tokens"') && l.includes('"status":201'))).toBe(true);
    expect(everything).not.toContain(CARD.number);
    expect(everything).not.toContain('4000 0566 5566 5556');
    expect(everything).not.toMatch(/"cvc"/);
  });
});
