// Hostile input against a running gateway (real PostgreSQL and Redis, in-process sandboxes):
// random and mutated bodies, headers and ids at create, capture, refund, void, list, the
// merchant webhook endpoints and the provider webhook intake. Every answer is 2xx, or a 4xx
// problem+json (a validation error naming the field), or 429/503 with Retry-After; never a 500.
// Nothing is half-written: an accepted request leaves a consistent payment, a refused one adds
// no payment, capture or refund. Sized to run in well under a minute.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CARD_OK, paymentBody, startApiGateway } from './helpers.ts';
import type { ApiAnswer, ApiGateway } from './helpers.ts';

let api: ApiGateway;
const paymentIds: string[] = [];

beforeAll(async () => {
  // A short wait keeps each accepted create/capture fast: 202 is as good an answer as 201 here.
  api = await startApiGateway('api_hostile', { authorizationWaitMs: 200, modificationWaitMs: 200, rateLimit: null });
  for (let i = 0; i < 3; i++) {
    const r = await api.call('POST', '/v1/payments', { body: paymentBody({ amount: 10_000 }) });
    paymentIds.push(r.json.id);
  }
});
afterAll(async () => api?.close());

async function writtenCounts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of ['payments', 'captures', 'refunds']) {
    const r = await api.gw.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${t}`);
    out[t] = Number(r.rows[0]!.n);
  }
  return out;
}

/** A JSON value with the odd shapes parsers and schemas trip on. */
const nasty = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(0, -0, -1, 1.5, 2 ** 53, 1e308, -1e308, '', ' ', '0', 'NaN', '__proto__', 'constructor', '\u0000', '😀'.repeat(40), 'x'.repeat(5_000), [], {}, null, true),
  fc.string({ unit: 'binary', maxLength: 50 }),
);

const fieldNames = fc.constantFrom('amount', 'currency', 'reference', 'capture_method', 'payment_method', 'metadata', 'allow_partial_authorization', 'final', 'reason', 'url', 'events', '__proto__', 'constructor', 'status', 'amount_captured');

/** A valid body, then zero to three mutations: a field deleted, replaced by something nasty, or added. */
function mutated(base: Record<string, unknown>): fc.Arbitrary<unknown> {
  const mutation = fc.oneof(
    // Amount edges, in otherwise valid bodies: where the schema and the core must agree (0 was a 500).
    fc.record({ op: fc.constant('set' as const), key: fc.constant('amount'), value: fc.constantFrom(0, 1, -1, 2 ** 53 - 1, 2 ** 31, 99_999_999, 100_000_000, 5_001) }),
    fc.record({ op: fc.constant('delete' as const), key: fieldNames }),
    fc.record({ op: fc.constant('set' as const), key: fieldNames, value: nasty }),
    fc.record({ op: fc.constant('nested' as const), key: fc.constantFrom('type', 'test_card', 'tokens', 'country', 'brand', 'cvc'), value: nasty }),
  );
  return fc.array(mutation, { maxLength: 3 }).map((ms) => {
    const body: Record<string, unknown> = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
    for (const m of ms) {
      if (m.op === 'delete') delete body[m.key];
      else if (m.op === 'set') Object.defineProperty(body, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
      else body['payment_method'] = { ...(typeof body['payment_method'] === 'object' && body['payment_method'] !== null ? body['payment_method'] : {}), [m.key]: m.value };
    }
    return body;
  });
}

/** A raw body: JSON of the above, random JSON, or text that is not JSON at all. */
function rawBody(base: Record<string, unknown>): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 6, arbitrary: mutated(base).map((b) => JSON.stringify(b)) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

const idempotencyKey = fc.oneof(
  { weight: 5, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 300 }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'a'.repeat(256), 'a'.repeat(10_000)) },
);
const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', '*/*', '');
const authorization = (key: string): fc.Arbitrary<string | undefined> =>
  fc.oneof({ weight: 8, arbitrary: fc.constant(`Bearer ${key}`) }, { weight: 1, arbitrary: fc.constantFrom(undefined, 'Bearer ', `bearer ${key}`, `Basic ${key}`, `Bearer ${key}x`) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 80 }) });

/** A path id: one of ours, a well-formed one nobody has, or anything at all. */
const pathId = fc.oneof(
  { weight: 4, arbitrary: fc.nat({ max: 2 }).map((i) => paymentIds[i]!) },
  { weight: 1, arbitrary: fc.constantFrom('pay_00000000000000000000000000', 'pay_', 're_1', '..', '%00', '%2e%2e%2fadmin', 'pay_' + 'x'.repeat(2_000)) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => encodeURIComponent(s)) },
);

type Request = { method: 'GET' | 'POST'; path: string; body: string | undefined; headers: Record<string, string> };

const createBase = { amount: 5_000, currency: 'EUR', reference: 'fuzz', capture_method: 'manual', payment_method: { type: 'card', test_card: CARD_OK } };

function request(): fc.Arbitrary<Request> {
  const headers = fc.record({ idem: idempotencyKey, type: contentType, auth: authorization(api.apiKey) }).map(({ idem, type, auth }) => {
    const h: Record<string, string> = { 'idempotency-key': idem, 'content-type': type };
    if (auth !== undefined) h['authorization'] = auth;
    return h;
  });
  const post = (path: fc.Arbitrary<string>, base: Record<string, unknown>): fc.Arbitrary<Request> =>
    fc.record({ path, body: rawBody(base), headers }).map((r) => ({ method: 'POST' as const, ...r }));
  const query = fc.dictionary(fc.constantFrom('limit', 'status', 'reference', 'starting_after', 'x', 'limit[]'), fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('0', '-1', '101', '1e3', 'authorized', 'pay_x')), { maxKeys: 3 });
  return fc.oneof(
    { weight: 4, arbitrary: post(fc.constant('/v1/payments'), createBase) },
    { weight: 3, arbitrary: post(pathId.map((id) => `/v1/payments/${id}/capture`), { amount: 100, final: false }) },
    { weight: 3, arbitrary: post(pathId.map((id) => `/v1/payments/${id}/refunds`), { amount: 100, reason: 'fuzz' }) },
    { weight: 2, arbitrary: post(pathId.map((id) => `/v1/payments/${id}/void`), {}) },
    { weight: 2, arbitrary: post(fc.constant('/v1/webhook_endpoints'), { url: 'https://example.com/hook', events: ['payment.captured'] }) },
    { weight: 2, arbitrary: post(fc.constantFrom('/webhooks/stripe_a', '/webhooks/stripe_b', '/webhooks/nope', '/webhooks/%00'), { id: 'evt_1', type: 'charge.succeeded', data: { object: {} } }) },
    { weight: 2, arbitrary: fc.record({ q: query, headers }).map(({ q, headers: h }) => ({ method: 'GET' as const, path: `/v1/payments?${new URLSearchParams(q).toString()}`, body: undefined, headers: h })) },
    { weight: 1, arbitrary: fc.record({ id: pathId, headers }).map(({ id, headers: h }) => ({ method: 'GET' as const, path: `/v1/payments/${id}`, body: undefined, headers: h })) },
  );
}

async function send(r: Request): Promise<ApiAnswer> {
  // Header values must be ByteStrings for fetch; anything else is a client-side refusal, not a request.
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([, v]) => /^[\t\x20-\x7e]*$/.test(v)));
  const res = await fetch(`${api.url}${r.path}`, { method: r.method, headers, ...(r.body === undefined ? {} : { body: r.body }) });
  const text = await res.text();
  let json = {} as ApiAnswer['json'];
  try {
    json = JSON.parse(text) as ApiAnswer['json'];
  } catch {
    // checked below: a problem must be JSON
  }
  return { status: res.status, headers: res.headers, text, json };
}

async function assertConsistent(id: string): Promise<void> {
  const p = await api.call('GET', `/v1/payments/${id}`);
  expect(p.status).toBe(200);
  const n = (field: string): number => {
    const v = p.json[field];
    expect(typeof v, field).toBe('number');
    return v as number;
  };
  expect(n('amount_authorized')).toBeLessThanOrEqual(n('amount'));
  expect(n('amount_captured')).toBeLessThanOrEqual(n('amount_authorized'));
  expect(n('amount_refunded')).toBeLessThanOrEqual(n('amount_captured'));
}

describe('hostile input', () => {
  it('never answers 500; 4xx are problem+json naming the field; refused requests write nothing', async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request(), async (r) => {
        const before = await writtenCounts();
        const a = await send(r);
        seen.set(a.status, (seen.get(a.status) ?? 0) + 1);
        const where = `${r.method} ${r.path.slice(0, 120)} -> ${a.status} ${a.text.slice(0, 300)}`;
        expect(a.status, where).not.toBe(500);
        expect(a.status < 500 || a.status === 503, where).toBe(true);
        if (a.status === 429 || a.status === 503) expect(a.headers.get('retry-after'), where).toMatch(/^\d+$/);
        if (a.status >= 400 && !r.path.startsWith('/webhooks/')) {
          expect(a.headers.get('content-type'), where).toMatch(/^application\/problem\+json/);
          expect(typeof a.json.code, where).toBe('string');
          if (a.json.code === 'validation_error') {
            expect(a.json.errors.length, where).toBeGreaterThan(0);
            for (const e of a.json.errors) expect(e.path, where).toMatch(/\S/);
          }
        }
        if (a.status >= 400) expect(await writtenCounts(), where).toEqual(before);
        if (a.status < 300 && r.method === 'POST' && r.path.startsWith('/v1/payments')) {
          const id = r.path === '/v1/payments' ? a.json.id : decodeURIComponent(r.path.split('/')[3]!);
          await assertConsistent(id);
        }
      }),
      { numRuns: 500, seed: 22_2026, endOnFailure: true },
    );
    // The run reached the handlers, not only the validators: some requests were accepted.
    expect([...seen.keys()].some((s) => s >= 200 && s < 300), JSON.stringify([...seen])).toBe(true);
    expect([...seen.keys()].some((s) => s === 400), JSON.stringify([...seen])).toBe(true);
  }, 120_000);
});
