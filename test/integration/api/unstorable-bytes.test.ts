// Issue 42 §3: bytes PostgreSQL cannot store (NUL, invalid UTF-8, unpaired surrogates) and malformed
// percent-escapes are a 400 on every route — the customer's return, the provider webhook intake, the
// public JWKS, the merchant API — before any database access; and a database error is logged by its
// driver's cause, never with the statement's parameters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentBody, rowCounts, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

const CHALLENGE_CARD = '4000002760003184';

let api: ApiGateway;
let attemptId: string;
let paymentId: string;

beforeAll(async () => {
  // intake: the gateway knows its own URL, which the customer-facing pages need.
  api = await startApiGateway('api_unstorable', { authorizationWaitMs: 5_000 }, undefined, {}, true);
  const created = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: CHALLENGE_CARD }, return_url: 'http://localhost/done' }) });
  expect(created.json.status, created.text).toBe('requires_action');
  paymentId = created.json.id;
  attemptId = (created.json.attempts[0] as { id: string }).id;
  // The sandbox's webhooks for the new payment land in the background: let them, so row counts below mean this test's requests.
  let last = '';
  for (let i = 0; i < 40; i++) {
    const now = JSON.stringify(await rowCounts(api.gw)) + JSON.stringify((await api.gw.db.pool.query('SELECT count(*) FROM inbound_events')).rows);
    if (now === last) break;
    last = now;
    await new Promise((r) => setTimeout(r, 750));
  }
});
afterAll(async () => api?.close());

interface Raw {
  readonly status: number;
  readonly type: string | null;
  readonly text: string;
}

async function send(method: string, path: string, body?: string | Buffer, contentType?: string): Promise<Raw> {
  const res = await fetch(`${api.url}${path}`, { method, redirect: 'manual', ...(body === undefined ? {} : { body, headers: { 'content-type': contentType ?? 'application/x-www-form-urlencoded' } }) });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

function expectRefused(r: Raw, where: string): void {
  expect(r.status, `${where}: ${r.text}`).toBe(400);
  expect(r.type, where).toMatch(/^application\/problem\+json/);
  expect(JSON.parse(r.text) as { code: string }, where).toMatchObject({ code: 'validation_error' });
}

const logged = (): string => api.logs.join('\n');

describe("the customer's return", () => {
  it('a NUL in the form body or the query is a 400: no 500, nothing written, nothing logged with parameters', async () => {
    const before = await rowCounts(api.gw);
    const returns: [string, string, string | undefined][] = [
      ['POST', `/authenticate/${attemptId}/return`, 'PaRes=eJzVsecret%00tail&MD=md-value'],
      ['POST', `/authenticate/${attemptId}/return`, 'redirectResult=Ab02%00&x=1'],
      ['GET', `/authenticate/${attemptId}/return?PaRes=eJzVsecret%00tail`, undefined],
      ['GET', `/authenticate/${attemptId}/return?payment_intent=pi_1&redirect_status=%00`, undefined],
    ];
    for (const [method, path, body] of returns) expectRefused(await send(method, path, body), `${method} ${path} ${body ?? ''}`);
    expect(await rowCounts(api.gw)).toEqual(before);
    expect((await api.call('GET', `/v1/payments/${paymentId}`)).json.status).toBe('requires_action');
    expect(logged()).not.toMatch(/Failed query|params:|eJzVsecret|md-value|unexpected/);
  });

  it('invalid UTF-8, raw or percent-encoded, is a 400 and writes nothing', async () => {
    const before = await rowCounts(api.gw);
    expectRefused(await send('POST', `/authenticate/${attemptId}/return`, Buffer.concat([Buffer.from('PaRes=ab'), Buffer.from([0xc3, 0x28])])), 'raw bytes');
    expectRefused(await send('POST', `/authenticate/${attemptId}/return`, 'PaRes=ab%C3%28'), 'escaped bytes');
    expectRefused(await send('GET', `/authenticate/${attemptId}/return?redirectResult=%ED%A0%80`), 'an escaped surrogate');
    expect(await rowCounts(api.gw)).toEqual(before);
  });
});

describe('malformed paths', () => {
  it.each([
    ['GET', '/authenticate/%ZZ'],
    ['GET', '/authenticate/%00'],
    ['GET', '/authenticate/att_%ZZ/return'],
    ['POST', '/authenticate/%00/return'],
    ['POST', '/webhooks/%ZZ'],
    ['POST', '/webhooks/%00'],
    ['POST', '/webhooks/stripe_a%C3%28'],
    ['GET', '/.well-known/webhook-endpoints/%ZZ/jwks.json'],
    ['GET', '/.well-known/webhook-endpoints/%00/jwks.json'],
    ['GET', '/v1/payments/%ZZ'],
    ['GET', '/healthz?x=%ZZ'],
  ])('%s %s is a 400 problem', async (method, path) => {
    expectRefused(await send(method, path, method === 'POST' ? '{}' : undefined, 'application/json'), `${method} ${path}`);
  });
});

describe('provider webhook bodies', () => {
  it('NUL, invalid UTF-8 and a JSON escape to NUL are refused before verification, and nothing is stored', async () => {
    const before = await api.gw.db.pool.query<{ n: string }>('SELECT count(*) AS n FROM inbound_events');
    const bodies: Buffer[] = [
      Buffer.from('{"id":"evt_1","type":"charge.succeeded","data":{"object":{"x":"a\u0000b"}}}'),
      Buffer.concat([Buffer.from('{"id":"evt_1","x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
      Buffer.from('{"id":"evt_1","type":"charge.succeeded","data":{"object":{"metadata":{"k":"a\\u0000b"}}}}'),
      Buffer.from('{"id":"evt_1","x":"\\ud800"}'),
    ];
    for (const body of bodies) expectRefused(await send('POST', '/webhooks/stripe_a', body, 'application/json'), body.toString('latin1'));
    const after = await api.gw.db.pool.query<{ n: string }>('SELECT count(*) AS n FROM inbound_events');
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });
});

describe('merchant API bodies', () => {
  it('invalid UTF-8 bytes and unpaired surrogates are refused naming where, nothing written', async () => {
    const before = await rowCounts(api.gw);
    const json = JSON.stringify(paymentBody());
    const badBytes = Buffer.concat([Buffer.from(json.slice(0, -1) + ',"metadata":{"a":"'), Buffer.from([0xe2, 0x28, 0xa1]), Buffer.from('"}}')]);
    const raw = await fetch(`${api.url}/v1/payments`, { method: 'POST', body: badBytes, headers: { authorization: `Bearer ${api.apiKey}`, 'idempotency-key': `k-${Date.now()}`, 'content-type': 'application/json' } });
    expect([raw.status, ((await raw.json()) as { code: string }).code]).toEqual([400, 'validation_error']);
    const surrogate = await api.call('POST', '/v1/payments', { body: json.slice(0, -1) + ',"metadata":{"a":"x\\ud800y"}}' });
    expect([surrogate.status, surrogate.json.code, surrogate.json.errors[0]?.path]).toEqual([400, 'validation_error', 'metadata.a']);
    expect(await rowCounts(api.gw)).toEqual(before);
  });
});

describe('database errors', () => {
  it("are logged by the driver's cause and SQLSTATE, never with the statement's parameters", async () => {
    const reference = `secret-reference-${Date.now()}`;
    await api.gw.db.pool.query('ALTER TABLE payments RENAME TO payments_away');
    let r;
    try {
      r = await api.call('POST', '/v1/payments', { body: paymentBody({ reference, metadata: { note: 'eJzVsecret-param' } }) });
    } finally {
      await api.gw.db.pool.query('ALTER TABLE payments_away RENAME TO payments');
    }
    expect(r.status).toBe(500);
    const line = api.logs.find((l) => l.includes('api: unexpected'));
    expect(line).toMatch(/relation "payments" does not exist \(SQLSTATE 42P01\)/);
    expect(logged()).not.toContain(reference);
    expect(logged()).not.toMatch(/Failed query|params:|eJzVsecret-param/);
  });
});
