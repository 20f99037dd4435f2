// GET /v1/payments, /v1/refunds and /v1/events over HTTP: every filter against what the resources
// themselves say, paging forwards and backwards across pages, two merchants that never see each
// other's rows, a key that sees only its own mode's, the 30-day window of the events list, and bad
// parameters refused by name. Every
// answer is checked against docs/openapi.json. The gateway's clock is moved forwards (only) so
// rows are created days apart.

import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventList, paymentList, refundList } from '../../../src/api/resource-schemas.ts';
import { CARD_OK, paymentBody, startApiGateway } from './helpers.ts';
import type { ApiAnswer, ApiGateway } from './helpers.ts';

const DAY = 86_400_000;
const CARD_DECLINED = '4000000000000002';
const CONFIG = `
connectors:
  stripe_a: { type: stripe, secret_key: sk_test_a, webhook_secrets: [whsec_a], timeout_ms: 1500 }
  stripe_b: { type: stripe, secret_key: sk_test_b, webhook_secrets: [whsec_b], timeout_ms: 1500 }
routing:
  rules:
    - name: usd
      when: { currency: [USD] }
      priority: [stripe_b, stripe_a]
  default: { priority: [stripe_a, stripe_b] }
  max_attempts: 3
`;

// ---- answers against the published document ---------------------------------------------------

type JsonSchema = Record<string, unknown>;
const openapi = JSON.parse(readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8')) as {
  components: { schemas: Record<string, JsonSchema> };
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }> }>>;
};
const ajv = new Ajv({ allErrors: true, nullable: true, unknownFormats: 'ignore' });
ajv.addSchema({ $id: 'openapi', components: openapi.components }, 'openapi');

function conforms(path: string, a: ApiAnswer): void {
  const schema = openapi.paths[path]?.['get']?.responses[String(a.status)]?.content?.[a.headers.get('content-type')?.split(';')[0] ?? '']?.schema;
  expect(schema, `GET ${path} documents no ${a.status} ${a.headers.get('content-type')}`).toBeDefined();
  const ok = ajv.validate({ $ref: String(schema!['$ref']).replace('#/components', 'openapi#/components') }, a.json);
  expect(ok, `GET ${path} ${a.status}: ${ajv.errorsText()}`).toBe(true);
}

// ---- the gateway and its rows ------------------------------------------------------------------

let api: ApiGateway;
let other: { id: string; apiKey: string };
let offsetMs = -40 * DAY;
const clock = (): Date => new Date(Date.now() + offsetMs);

interface Item { readonly id: string; readonly [k: string]: unknown }

/** GET a list as `key`'s merchant, checked against the document and its zod schema. */
async function list(path: string, query = '', key?: string): Promise<ApiAnswer & { items: Item[] }> {
  const a = await api.call('GET', `${path}${query === '' ? '' : `?${query}`}`, key === undefined ? {} : { key });
  conforms(path, a);
  if (a.status !== 200) return { ...a, items: [] };
  const schema = path === '/v1/payments' ? paymentList : path === '/v1/refunds' ? refundList : eventList;
  schema.parse(a.json);
  return { ...a, items: a.json.data as unknown as Item[] };
}

const ids = (items: readonly Item[]): string[] => items.map((i) => i.id);

async function create(over: Record<string, unknown>, key?: string): Promise<Item> {
  const r = await api.call('POST', '/v1/payments', { body: paymentBody(over), ...(key === undefined ? {} : { key }) });
  expect(r.status, r.text).toBe(201);
  return r.json;
}

async function refund(paymentId: string, amount: number, key?: string): Promise<ApiAnswer> {
  return api.call('POST', `/v1/payments/${paymentId}/refunds`, { body: { amount }, ...(key === undefined ? {} : { key }) });
}

const card = (number: string) => ({ type: 'card', test_card: number });
let sharedReference = '';
let oldPayment = '';

beforeAll(async () => {
  api = await startApiGateway('api_lists', { log: () => undefined }, CONFIG, { now: clock });
  other = await api.newMerchant('lists-other');
  sharedReference = `order-shared-${Date.now()}`;
  // Days apart, oldest first; the clock only moves forwards.
  oldPayment = (await create({ amount: 1000, capture_method: 'automatic' })).id;
  offsetMs = -20 * DAY;
  await create({ amount: 2500, capture_method: 'automatic', reference: sharedReference });
  offsetMs = -10 * DAY;
  await create({ amount: 4000, currency: 'USD', payment_method: card(CARD_DECLINED) });
  offsetMs = -5 * DAY;
  await create({ amount: 700, payment_method: card(CARD_DECLINED) });
  offsetMs = -1 * DAY;
  const usd = await create({ amount: 9000, currency: 'USD', capture_method: 'automatic' });
  expect((await refund(usd.id, 3000)).status).toBe(201);
  offsetMs = 0;
  const captured = await create({ amount: 5000 });
  expect((await api.call('POST', `/v1/payments/${captured.id}/capture`, { body: {} })).status).toBe(200);
  expect((await refund(captured.id, 2000)).status).toBe(201);
  // A refund that fails: the rest of the USD payment was refunded at the provider behind the gateway's back.
  const sandbox = api.gw.rt.sandboxes.find((s) => s.account === 'stripe_b')!;
  const u = new URL(sandbox.url);
  const stripe = new Stripe('sk_test_b', { host: u.hostname, port: Number(u.port), protocol: 'http', maxNetworkRetries: 0, telemetry: false });
  await stripe.refunds.create({ payment_intent: String((usd['attempts'] as Item[])[0]!['provider_reference']) });
  expect((await refund(usd.id, 1000)).status).toBe(409);
  await create({ amount: 3000, payment_method: card(CARD_OK) });
  // The other merchant: one captured and refunded payment, under the same reference as one of the first's.
  const theirs = await create({ amount: 5000, capture_method: 'automatic', reference: sharedReference }, other.apiKey);
  expect((await refund(theirs.id, 1000, other.apiKey)).status).toBe(201);
}, 120_000);
afterAll(async () => api?.close());

/** Walks the list forwards and backwards two at a time: both ways give `expected` (newest first), with has_more and next_cursor saying where the rest is. */
async function pagesBothWays(path: string, filter: string, expected: readonly string[]): Promise<void> {
  expect(expected.length, 'needs at least three rows to page').toBeGreaterThanOrEqual(3);
  const q = (more: string) => [filter, 'limit=2', more].filter((s) => s !== '').join('&');
  const forwards: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; ; page++) {
    expect(page).toBeLessThan(expected.length);
    const a = await list(path, q(cursor === null ? '' : `starting_after=${cursor}`));
    expect(a.status).toBe(200);
    forwards.push(...ids(a.items));
    const more = forwards.length < expected.length;
    expect([a.json['has_more'], a.json['next_cursor']]).toEqual([more, more ? forwards[forwards.length - 1] : null]);
    if (!more) break;
    cursor = a.json['next_cursor'];
  }
  expect(forwards).toEqual(expected);
  // Backwards from the oldest: each page is the rows just newer than the cursor, still newest first.
  const backwards: string[][] = [];
  cursor = expected[expected.length - 1]!;
  for (let page = 0; ; page++) {
    expect(page).toBeLessThan(expected.length);
    const a = await list(path, q(`ending_before=${cursor}`));
    expect(a.status).toBe(200);
    backwards.unshift(ids(a.items));
    const seen = backwards.flat().length;
    const more = seen < expected.length - 1;
    expect([a.json['has_more'], a.json['next_cursor']]).toEqual([more, more ? a.items[0]!.id : null]);
    if (!more) break;
    cursor = a.json['next_cursor'];
  }
  expect(backwards.flat()).toEqual(expected.slice(0, -1));
}

/** Checks one filter against the full list filtered by what the resources say; the filter must keep some rows and drop some. */
async function filterAgrees(path: string, query: string, all: readonly Item[], keep: (i: Item) => boolean): Promise<void> {
  const expected = ids(all.filter(keep));
  expect(expected.length, `${query} keeps some`).toBeGreaterThan(0);
  expect(expected.length, `${query} drops some`).toBeLessThan(all.length);
  const a = await list(path, `${query}&limit=100`);
  expect(a.status, a.text).toBe(200);
  expect(ids(a.items), query).toEqual(expected);
}

const at = (i: Item, field = 'created_at'): number => Date.parse(String(i[field]));

describe('GET /v1/payments', () => {
  it('lists the merchant\'s payments newest first; each filter keeps exactly the payments whose resource matches it', async () => {
    const all = (await list('/v1/payments', 'limit=100')).items;
    expect(all).toHaveLength(7);
    expect([...all].sort((a, b) => at(b) - at(a))).toEqual(all);
    const pivot = all[3]!; // created 10 days ago
    const pivotAt = at(pivot);
    const iso = String(pivot['created_at']);
    // The same instant written with another offset is the same bound.
    const shifted = new Date(pivotAt + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    const cases: [string, (i: Item) => boolean][] = [
      ['status=captured', (i) => i['status'] === 'captured'],
      ['status=declined&status=authorized', (i) => i['status'] === 'declined' || i['status'] === 'authorized'],
      [`created[gte]=${iso}`, (i) => at(i) >= pivotAt],
      [`created[gt]=${iso}`, (i) => at(i) > pivotAt],
      [`created[lte]=${iso}`, (i) => at(i) <= pivotAt],
      [`created[lt]=${encodeURIComponent(shifted)}`, (i) => at(i) < pivotAt],
      [`created[gte]=${String(all[5]!['created_at'])}&created[lt]=${String(all[1]!['created_at'])}`, (i) => at(i) >= at(all[5]!) && at(i) < at(all[1]!)],
      ['connector=stripe_b', (i) => i['connector'] === 'stripe_b'],
      ['currency=USD', (i) => i['currency'] === 'USD'],
      ['amount[gte]=2500', (i) => Number(i['amount']) >= 2500],
      ['amount[lte]=2500', (i) => Number(i['amount']) <= 2500],
      ['amount[gte]=2500&amount[lte]=5000', (i) => Number(i['amount']) >= 2500 && Number(i['amount']) <= 5000],
      [`reference=${sharedReference}`, (i) => i['reference'] === sharedReference],
      ['currency=EUR&status=captured&amount[gte]=2000', (i) => i['currency'] === 'EUR' && i['status'] === 'captured' && Number(i['amount']) >= 2000],
    ];
    for (const [q, keep] of cases) await filterAgrees('/v1/payments', q, all, keep);
    expect((await list('/v1/payments', 'connector=stripe_nowhere')).items).toEqual([]);
  });

  it('pages forwards and backwards, with and without a filter', async () => {
    const all = (await list('/v1/payments', 'limit=100')).items;
    await pagesBothWays('/v1/payments', '', ids(all));
    await pagesBothWays('/v1/payments', 'currency=EUR', ids(all.filter((i) => i['currency'] === 'EUR')));
    // A cursor need not match the filter: it is a position.
    const usd = all.find((i) => i['currency'] === 'USD')!;
    const after = await list('/v1/payments', `currency=EUR&starting_after=${usd.id}&limit=100`);
    expect(ids(after.items)).toEqual(ids(all.filter((i) => i['currency'] === 'EUR' && at(i) < at(usd))));
  });
});

describe('GET /v1/refunds', () => {
  it('lists refunds newest first, by payment, status and creation time, paging both ways', async () => {
    const all = (await list('/v1/refunds', 'limit=100')).items;
    expect(all.map((r) => r['status'])).toEqual(['failed', 'succeeded', 'succeeded']);
    expect(all.every((r) => r['object'] === 'refund')).toBe(true);
    const usd = String(all[0]!['payment_id']);
    // The listed refund is the one GET /v1/refunds/{id} answers.
    const one = await api.call('GET', `/v1/refunds/${all[1]!.id}`);
    expect(one.json).toEqual(all[1]);
    const cases: [string, (i: Item) => boolean][] = [
      [`payment=${usd}`, (i) => i['payment_id'] === usd],
      ['status=failed', (i) => i['status'] === 'failed'],
      ['status=succeeded&status=reversed', (i) => i['status'] === 'succeeded'],
      [`created[lt]=${new Date(clock().getTime() - DAY / 2).toISOString()}`, (i) => at(i) < clock().getTime() - DAY / 2],
      [`payment=${usd}&status=succeeded`, (i) => i['payment_id'] === usd && i['status'] === 'succeeded'],
    ];
    for (const [q, keep] of cases) await filterAgrees('/v1/refunds', q, all, keep);
    await pagesBothWays('/v1/refunds', '', ids(all));
  });
});

describe('GET /v1/events', () => {
  it('lists the events of the last 30 days newest first, by type and creation time, each as delivered; older ones are read by id', async () => {
    const all = (await list('/v1/events', 'limit=100')).items;
    expect(all.length).toBeGreaterThanOrEqual(8);
    expect([...all].sort((a, b) => at(b, 'created') - at(a, 'created'))).toEqual(all);
    expect(all.every((e) => at(e, 'created') >= clock().getTime() - 30 * DAY)).toBe(true);
    // Each item is what its webhook delivered (the stored body, as GET /v1/events/{id} shows it), with payment_id.
    const byId = await api.call('GET', `/v1/events/${all[0]!.id}`);
    expect(all[0]).toEqual({ ...(byId.json['body'] as object), payment_id: byId.json['payment_id'] });
    expect([all[0]!['object'], all[0]!['created_at'], typeof all[0]!['api_version']]).toEqual(['event', all[0]!['created'], 'string']);
    // The 40-day-old payment's events are not listed, and stay readable by id.
    const old = await api.gw.db.pool.query<{ id: string }>('SELECT id FROM merchant_events WHERE payment_id = $1', [oldPayment]);
    expect(old.rows.length).toBeGreaterThan(0);
    for (const { id } of old.rows) {
      expect(ids(all)).not.toContain(id);
      expect((await api.call('GET', `/v1/events/${id}`)).status).toBe(200);
    }
    expect((await list('/v1/events', `created[lt]=${new Date(clock().getTime() - 35 * DAY).toISOString()}`)).items).toEqual([]);
    const tenDaysAgo = new Date(clock().getTime() - 7 * DAY).toISOString();
    const cases: [string, (i: Item) => boolean][] = [
      ['type=payment.captured', (i) => i['type'] === 'payment.captured'],
      ['type=payment.declined&type=refund.failed', (i) => i['type'] === 'payment.declined' || i['type'] === 'refund.failed'],
      ['type=refund.*', (i) => String(i['type']).startsWith('refund.')],
      ['type=refund.*&type=refund.failed', (i) => String(i['type']).startsWith('refund.')],
      [`created[gte]=${tenDaysAgo}`, (i) => at(i, 'created') >= Date.parse(tenDaysAgo)],
      [`type=payment.*&created[lt]=${tenDaysAgo}`, (i) => String(i['type']).startsWith('payment.') && at(i, 'created') < Date.parse(tenDaysAgo)],
    ];
    for (const [q, keep] of cases) await filterAgrees('/v1/events', q, all, keep);
    await pagesBothWays('/v1/events', 'type=payment.*', ids(all.filter((i) => String(i['type']).startsWith('payment.'))));
  });
});

describe('two merchants', () => {
  it('each lists only its own payments, refunds and events, and cannot page from the other\'s rows', async () => {
    const mine = { payments: (await list('/v1/payments', 'limit=100')).items, refunds: (await list('/v1/refunds', 'limit=100')).items, events: (await list('/v1/events', 'limit=100')).items };
    const theirs = {
      payments: (await list('/v1/payments', 'limit=100', other.apiKey)).items,
      refunds: (await list('/v1/refunds', 'limit=100', other.apiKey)).items,
      events: (await list('/v1/events', 'limit=100', other.apiKey)).items,
    };
    expect([theirs.payments.length, theirs.refunds.length]).toEqual([1, 1]);
    expect(theirs.events.length).toBeGreaterThanOrEqual(2);
    for (const k of ['payments', 'refunds', 'events'] as const) {
      expect(ids(theirs[k]).filter((id) => ids(mine[k]).includes(id))).toEqual([]);
    }
    // Filters that would match the other's rows find only one's own.
    expect(ids((await list('/v1/payments', `reference=${sharedReference}`, other.apiKey)).items)).toEqual(ids(theirs.payments));
    expect((await list('/v1/refunds', `payment=${mine.payments[0]!.id}`, other.apiKey)).items).toEqual([]);
    // Another merchant's id as a cursor is refused as a made-up one would be: it says nothing of the row.
    for (const [path, id] of [['/v1/payments', mine.payments[2]!.id], ['/v1/refunds', mine.refunds[0]!.id], ['/v1/events', mine.events[0]!.id]] as const) {
      for (const param of ['starting_after', 'ending_before']) {
        const a = await list(path, `${param}=${id}`, other.apiKey);
        expect([a.status, a.json.code, a.json.errors[0]?.path]).toEqual([400, 'validation_error', param]);
        const madeUpId = `${id.slice(0, -4)}zzzz`;
        const madeUp = await list(path, `${param}=${madeUpId}`, other.apiKey);
        expect(madeUp.json.errors[0]?.message).toBe(a.json.errors[0]?.message.replace(id, madeUpId));
      }
    }
  });
});

describe('modes', () => {
  it('a live key lists none of the test payments, refunds or events, and cannot page from them; a test key with a role that reads lists them all', async () => {
    const key = async (mode: string, role: string): Promise<string> => {
      const r = await api.call('POST', '/v1/api_keys', { body: { role, mode, name: `lists ${mode} ${role}` } });
      expect(r.status, r.text).toBe(201);
      return String(r.json['secret']);
    };
    const [live, testReader] = [await key('live', 'read_only'), await key('test', 'read_only')];
    for (const path of ['/v1/payments', '/v1/refunds', '/v1/events']) {
      const all = (await list(path, 'limit=100')).items;
      expect(all.length).toBeGreaterThan(0);
      expect(ids((await list(path, 'limit=100', testReader)).items)).toEqual(ids(all));
      expect((await list(path, 'limit=100', live)).items).toEqual([]);
      const cursor = await list(path, `starting_after=${all[0]!.id}`, live);
      expect([cursor.status, cursor.json.errors[0]?.path]).toEqual([400, 'starting_after']);
    }
  });
});

describe('bad parameters', () => {
  const payId = 'pay_0000000000aaaaaaaaaaaaaaaa';
  const refused: [string, string, string, RegExp?][] = [
    ['/v1/payments', 'created[gte]=1764547200', 'created[gte]', /unix seconds are not taken/],
    ['/v1/payments', 'created[lt]=2026-02-30T00:00:00Z', 'created[lt]', /ISO 8601/],
    ['/v1/payments', 'created[lte]=2026-12-01', 'created[lte]', /ISO 8601/],
    ['/v1/payments', 'created[gt]=2026-12-01T00:00:00', 'created[gt]', /time zone/],
    ['/v1/payments', 'created[gt]=0000-01-01T00:00:00Z', 'created[gt]'],
    ['/v1/payments', 'created[gt]=2026-12-01T00:00:00%2B16:00', 'created[gt]'],
    ['/v1/payments', 'created=2026-12-01T00:00:00Z', 'created', /created takes created\[gte\], created\[gt\], created\[lte\], created\[lt\]/],
    ['/v1/payments', 'created[after]=2026-12-01T00:00:00Z', 'created[after]', /created takes/],
    ['/v1/payments', 'created[gte]=2026-12-02T00:00:00Z&created[lte]=2026-12-01T00:00:00Z', 'created[gte]', /after the upper bound/],
    ['/v1/payments', 'created[gte]=2026-12-01T00:00:00Z&created[gt]=2026-12-01T00:00:00Z', 'created[gt]', /not both/],
    ['/v1/payments', 'created[gte]=2026-12-01T00:00:00Z&created[gte]=2026-12-02T00:00:00Z', 'created[gte]', /once/],
    ['/v1/payments', 'amount[gt]=5', 'amount[gt]', /amount takes amount\[gte\], amount\[lte\]/],
    ['/v1/payments', 'amount[gte]=-1', 'amount[gte]'],
    ['/v1/payments', 'amount[gte]=1.5', 'amount[gte]'],
    ['/v1/payments', 'amount[lte]=lots', 'amount[lte]'],
    ['/v1/payments', 'amount[gte]=500&amount[lte]=100', 'amount[gte]', /above amount\[lte\]/],
    ['/v1/payments', 'status=paid', 'status', /"paid" is not a payment status/],
    ['/v1/payments', 'status=captured&status=paid', 'status', /"paid"/],
    ['/v1/payments', 'currency=eur', 'currency'],
    ['/v1/payments', 'connector=Stripe%20A', 'connector'],
    ['/v1/payments', 'reference=a&reference=b', 'reference', /give reference once/],
    ['/v1/payments', 'reference=4242424242424242', 'reference', /card number/],
    ['/v1/payments', 'customer=cus_1', 'customer', /unknown parameter/],
    ['/v1/payments', 'limit=0', 'limit'],
    ['/v1/payments', 'limit=101', 'limit'],
    ['/v1/payments', 'starting_after=xyz', 'starting_after'],
    ['/v1/payments', 'starting_after=rfd_0000000000aaaaaaaaaaaaaaaa', 'starting_after', /payment id/],
    ['/v1/payments', `starting_after=${payId}`, 'starting_after', /no payment pay_0000000000aaaaaaaaaaaaaaaa of yours/],
    ['/v1/payments', `starting_after=${payId}&ending_before=${payId}`, 'ending_before', /not both/],
    ['/v1/refunds', 'payment=xyz', 'payment', /payment id/],
    ['/v1/refunds', 'status=authorized', 'status', /not a refund status/],
    ['/v1/refunds', 'amount[gte]=1', 'amount[gte]', /unknown parameter/],
    ['/v1/events', 'type=payment.bogus', 'type', /not an event type/],
    ['/v1/events', 'type=nope.*', 'type', /not an event type or a prefix/],
    ['/v1/events', 'type=payment.captured&type=*', 'type'],
    ['/v1/events', 'ending_before=pay_0000000000aaaaaaaaaaaaaaaa', 'ending_before', /event id/],
    ['/v1/events', `type=${Array.from({ length: 21 }, () => 'payment.captured').join('&type=')}`, 'type', /at most 20/],
  ];
  it.each(refused)('%s?%s is a 400 naming %s', async (path, query, param, message) => {
    const a = await list(path, query);
    expect([a.status, a.json.code]).toEqual([400, 'validation_error']);
    expect(a.json.errors.map((e) => e.path)).toContain(param);
    expect(String(a.json['detail'])).toContain(param);
    if (message !== undefined) expect(a.json.errors.find((e) => e.path === param)?.message).toMatch(message);
    expect(a.text).not.toContain('4242424242424242');
  });
});
