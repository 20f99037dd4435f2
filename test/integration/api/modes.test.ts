// Issue 47, test and live modes, through the HTTP API: a test key reaches only test accounts and a
// live key only live ones (routing says which it skipped and why); every payment, refund and event
// says whether it is live; a key never sees an object of the other mode (404, lists and balances
// leave them out, an idempotency key reused across modes replays nothing); a legacy key (mode any)
// reaches and sees both. The live account is a Stripe account on an sk_live_ key whose endpoint is a
// Stripe sandbox this file starts at http://0.0.0.0:<port>: not a loopback name, so not a sandbox
// to the gateway (src/routing/sandbox-endpoint.ts), while Linux connects 0.0.0.0 to this machine.
// The real PostgreSQL and Redis, the official Stripe SDK over real sockets to both sandboxes.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentResource, refundResource } from '../../../src/resources/schemas.ts';
import { newId } from '../../../src/core/ids.ts';
import { startStripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { hashApiKey } from '../../../src/store/api-keys.ts';
import { createSandboxTestDatabase } from '../helpers/sandbox-db.ts';
import type { TestSandboxDatabase } from '../helpers/sandbox-db.ts';
import { newKey, paymentBody, rowCounts, startApiGateway } from './helpers.ts';
import type { ApiGateway, Body } from './helpers.ts';

const LIVE_STRIPE_KEY = `sk_live_${randomBytes(12).toString('hex')}`;

let sandboxDb: TestSandboxDatabase;
let liveProvider: StripeSandbox;
let api: ApiGateway;
/** The merchant's keys: test (made by createMerchant), live (POST /v1/api_keys) and legacy (as migration 0022 left them). */
const keys = { test: '', live: '', legacy: '' };

const both = { stripe_live: 'pm_card_visa', stripe_sb: 'pm_card_visa' };
const tokensBody = (tokens: Record<string, string>, over: Record<string, unknown> = {}) => paymentBody({ payment_method: { type: 'card', tokens }, ...over });
/** A customer's card in the vault (POST /v1/tokens): any account that takes card data may charge it, the live one too (Stripe's pm_card_ tokens are refused there). */
let card = '';
const cardBody = (over: Record<string, unknown> = {}) => paymentBody({ payment_method: { type: 'card', id: card }, ...over });

beforeAll(async () => {
  sandboxDb = await createSandboxTestDatabase('api_modes_live');
  liveProvider = await startStripeSandbox({ database: sandboxDb, account: 'stripe_live', secretKey: LIVE_STRIPE_KEY, port: 0 });
  api = await startApiGateway('api_modes', {}, `
connectors:
  stripe_live: { type: stripe, endpoint: "http://0.0.0.0:${liveProvider.port}", secret_key: ${LIVE_STRIPE_KEY}, webhook_secrets: [whsec_${randomBytes(12).toString('hex')}], timeout_ms: 1500 }
  stripe_sb: { type: stripe, endpoint: sandbox, secret_key: sk_test_sb, webhook_secrets: [whsec_sb], timeout_ms: 1500 }
routing:
  default: { priority: [stripe_live, stripe_sb] }
`);
  keys.test = api.apiKey;
  const token = await api.call('POST', '/v1/tokens', { key: api.publishableKey, idem: null, body: { card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } } });
  expect(token.status).toBe(201);
  card = token.json.id;
  const live = await api.call('POST', '/v1/api_keys', { body: { role: 'full', mode: 'live', name: 'live' } });
  expect(live.status).toBe(201);
  keys.live = String(live.json['secret']);
  // A key from before modes: a row as migration 0022 makes it (no id in the key, found by its hash).
  keys.legacy = `sk_sy_${randomBytes(32).toString('base64url')}`;
  await api.gw.db.pool.query(
    `INSERT INTO api_keys (id, merchant_id, kind, role, mode, name, hash, legacy, created_at) VALUES ($1, $2, 'secret', 'full', 'any', 'secret key', $3, true, now())`,
    [newId('key'), api.merchantId, hashApiKey(keys.legacy)],
  );
});
afterAll(async () => {
  await api?.close();
  await liveProvider?.close();
  await sandboxDb?.drop();
});

/** The payments the live provider holds. */
async function liveIntents(): Promise<number> {
  return (await liveProvider.ledger()).length;
}

describe('routing by the key\'s mode', () => {
  it('a test key reaches only the test account, skipping the live one and saying so; its payment is a test payment', async () => {
    const before = await liveIntents();
    const r = await api.call('POST', '/v1/payments', { key: keys.test, body: paymentBody() });
    expect(r.status).toBe(201);
    const p = paymentResource.parse(r.json);
    expect([p.status, p.livemode, p.connector]).toEqual(['authorized', false, 'stripe_sb']);
    expect(p.routing.candidates).toEqual(['stripe_sb']);
    expect(p.routing.skipped).toEqual([{ connector: 'stripe_live', reason: 'a live account: a test key reaches only test accounts' }]);
    // A token for the live account changes nothing: the test key never reaches it.
    const tokens = await api.call('POST', '/v1/payments', { key: keys.test, body: tokensBody(both) });
    expect([tokens.status, tokens.json['livemode'], tokens.json['connector']]).toEqual([201, false, 'stripe_sb']);
    expect(await liveIntents()).toBe(before);
  });

  it('a live key reaches only the live account; its payment is live and the live provider has it', async () => {
    const before = await liveIntents();
    const r = await api.call('POST', '/v1/payments', { key: keys.live, body: cardBody() });
    expect(r.status).toBe(201);
    const p = paymentResource.parse(r.json);
    expect([p.status, p.livemode, p.connector]).toEqual(['authorized', true, 'stripe_live']);
    expect(p.routing.skipped).toEqual([{ connector: 'stripe_sb', reason: 'a test account: a live key reaches only live accounts' }]);
    expect(await liveIntents()).toBe(before + 1);
  });

  it('a live key with only a test account\'s token has no candidate: the payment is recorded failed, live', async () => {
    const r = await api.call('POST', '/v1/payments', { key: keys.live, body: tokensBody({ stripe_sb: 'pm_card_visa' }) });
    expect([r.status, r.json.status, r.json['livemode'], r.json.attempts.length]).toEqual([201, 'failed', true, 0]);
  });

  it('a test card with a live key is a 400 on payment_method.test_card, nothing written', async () => {
    const before = await rowCounts(api.gw);
    const r = await api.call('POST', '/v1/payments', { key: keys.live, body: paymentBody() });
    expect([r.status, r.json.code, r.json.errors[0]?.path]).toEqual([400, 'validation_error', 'payment_method.test_card']);
    expect(r.json['detail']).toContain('only with a test key');
    expect(await rowCounts(api.gw)).toEqual(before);
  });

  it('a legacy key reaches every account, as before modes: live when a candidate is live, test when none is', async () => {
    const mixed = await api.call('POST', '/v1/payments', { key: keys.legacy, body: cardBody() });
    expect([mixed.status, mixed.json['livemode'], mixed.json['connector'], mixed.json['routing']]).toMatchObject([201, true, 'stripe_live', { candidates: ['stripe_live', 'stripe_sb'], skipped: [] }]);
    const test = await api.call('POST', '/v1/payments', { key: keys.legacy, body: tokensBody({ stripe_sb: 'pm_card_visa' }) });
    expect([test.status, test.json['livemode'], test.json['connector']]).toEqual([201, false, 'stripe_sb']);
    // Its test card still needs every account of the route to be a sandbox (stripe_live is not).
    const card = await api.call('POST', '/v1/payments', { key: keys.legacy, body: paymentBody() });
    expect([card.status, card.json.errors[0]?.path]).toEqual([400, 'payment_method.test_card']);
  });
});

describe('a key sees only objects of its mode', () => {
  let testPay: Body;
  let livePay: Body;
  let liveRefund: Body;

  beforeAll(async () => {
    testPay = (await api.call('POST', '/v1/payments', { key: keys.test, body: paymentBody({ amount: 3000 }) })).json;
    livePay = (await api.call('POST', '/v1/payments', { key: keys.live, body: cardBody({ amount: 7000 }) })).json;
    expect([testPay.status, livePay.status]).toEqual(['authorized', 'authorized']);
    const captured = await api.call('POST', `/v1/payments/${livePay.id}/capture`, { key: keys.live, body: {} });
    expect([captured.status, captured.json['livemode']]).toEqual([200, true]);
    const refund = await api.call('POST', `/v1/payments/${livePay.id}/refunds`, { key: keys.live, body: { amount: 1000 } });
    expect(refund.status).toBe(201);
    liveRefund = refund.json;
  });

  it('the refund says it is live', () => {
    expect(refundResource.parse(liveRefund)).toMatchObject({ payment_id: livePay.id, livemode: true, status: 'succeeded' });
  });

  it('reads of the other mode\'s objects are 404; the legacy key reads both', async () => {
    const reads = (p: Body) => [`/v1/payments/${p.id}`, `/v1/payments/${p.id}/timeline`];
    for (const path of [...reads(livePay), `/v1/refunds/${liveRefund.id}`]) {
      expect([path, (await api.call('GET', path, { key: keys.test })).status]).toEqual([path, 404]);
      expect([path, (await api.call('GET', path, { key: keys.live })).status]).toEqual([path, 200]);
      expect([path, (await api.call('GET', path, { key: keys.legacy })).status]).toEqual([path, 200]);
    }
    for (const path of reads(testPay)) {
      expect([path, (await api.call('GET', path, { key: keys.live })).status]).toEqual([path, 404]);
      expect([path, (await api.call('GET', path, { key: keys.test })).status]).toEqual([path, 200]);
    }
    const seen = await api.call('GET', `/v1/payments/${testPay.id}`, { key: keys.legacy });
    expect([seen.status, seen.json['livemode']]).toEqual([200, false]);
  });

  it('writes to the other mode\'s payments are 404 and change nothing', async () => {
    const before = await rowCounts(api.gw);
    const writes: [string, string, unknown][] = [
      [keys.test, `/v1/payments/${livePay.id}/refunds`, { amount: 100 }],
      [keys.test, `/v1/payments/${livePay.id}`, { metadata: { a: 'b' } }],
      [keys.live, `/v1/payments/${testPay.id}/capture`, {}],
      [keys.live, `/v1/payments/${testPay.id}/void`, {}],
    ];
    for (const [key, path, body] of writes) {
      const r = await api.call('POST', path, { key, body });
      expect([path, r.status, r.json.code]).toEqual([path, 404, 'not_found']);
    }
    const after = await rowCounts(api.gw);
    // The 404s are stored with their keys (as any 404), and nothing else is written.
    expect({ ...after, idempotency_records: 0 }).toEqual({ ...before, idempotency_records: 0 });
    expect((await api.call('GET', `/v1/payments/${testPay.id}`, { key: keys.test })).json.status).toBe('authorized');
  });

  it('lists hold the key\'s mode only; the legacy key\'s holds both', async () => {
    const list = async (key: string) => (await api.call('GET', '/v1/payments?limit=100', { key })).json.data;
    const test = await list(keys.test);
    const live = await list(keys.live);
    const legacy = await list(keys.legacy);
    expect(test.length).toBeGreaterThan(0);
    expect(live.length).toBeGreaterThan(0);
    expect(test.every((p) => p['livemode'] === false)).toBe(true);
    expect(live.every((p) => p['livemode'] === true)).toBe(true);
    expect(test.map((p) => p.id)).toContain(testPay.id);
    expect(live.map((p) => p.id)).toContain(livePay.id);
    expect(new Set(legacy.map((p) => p.id))).toEqual(new Set([...test, ...live].map((p) => p.id)));
    // A filter keeps the mode.
    const byReference = await api.call('GET', `/v1/payments?reference=${String(livePay['reference'])}`, { key: keys.test });
    expect(byReference.json.data).toEqual([]);
  });

  it('events say their mode and are 404 to a key of the other mode, for reads and redeliveries', async () => {
    const events = await api.gw.db.pool.query<{ id: string; payment_id: string; payload: { livemode: boolean } }>(
      `SELECT id, payment_id, payload FROM merchant_events WHERE payment_id = ANY($1) ORDER BY created_at`, [[testPay.id, livePay.id]],
    );
    const liveEvent = events.rows.find((e) => e.payment_id === livePay.id)!;
    const testEvent = events.rows.find((e) => e.payment_id === testPay.id)!;
    expect([liveEvent.payload.livemode, testEvent.payload.livemode]).toEqual([true, false]);
    expect((await api.call('GET', `/v1/events/${liveEvent.id}`, { key: keys.test })).status).toBe(404);
    expect((await api.call('GET', `/v1/events/${testEvent.id}`, { key: keys.live })).status).toBe(404);
    const read = await api.call('GET', `/v1/events/${liveEvent.id}`, { key: keys.live });
    expect([read.status, (read.json['body'] as { livemode: boolean }).livemode]).toEqual([200, true]);
    expect((await api.call('GET', `/v1/events/${liveEvent.id}`, { key: keys.legacy })).status).toBe(200);
    expect((await api.call('POST', `/v1/events/${liveEvent.id}/redeliver`, { key: keys.test, body: {} })).status).toBe(404);
    expect((await api.call('POST', `/v1/events/${liveEvent.id}/redeliver`, { key: keys.live, body: {} })).status).toBe(202);
  });

  it('balances count the key\'s mode only', async () => {
    const eur = async (key: string) => ((await api.call('GET', '/v1/balances', { key })).json.data.find((b) => b['currency'] === 'EUR')?.['payable'] ?? 0) as number;
    // Only the live payment was captured (7000) and refunded (1000).
    expect(await eur(keys.live)).toBe(6000);
    expect(await eur(keys.test)).toBe(0);
    expect(await eur(keys.legacy)).toBe(await eur(keys.live));
  });

  it('an Idempotency-Key a live key used replays nothing to a test key (and the other way round)', async () => {
    const idem = newKey();
    const body = cardBody();
    const first = await api.call('POST', '/v1/payments', { key: keys.live, idem, body });
    expect([first.status, first.json['livemode']]).toEqual([201, true]);
    const other = await api.call('POST', '/v1/payments', { key: keys.test, idem, body });
    expect([other.status, other.json.code]).toEqual([422, 'idempotency_key_reused']);
    expect(other.text).not.toContain(first.json.id);
    const again = await api.call('POST', '/v1/payments', { key: keys.live, idem, body });
    expect([again.status, again.json.id, again.headers.get('idempotent-replayed')]).toEqual([201, first.json.id, 'true']);
  });
});
