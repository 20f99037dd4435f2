// Issue 47's limits every process shares, as an operator runs them: two real `switchyard start --role
// api` processes on one database and one Redis (a private redis-server, so it can be stopped), with
// small limits from the environment and this file's own key prefix. One merchant's limit holds across
// both processes while a second merchant is unaffected; creates run out apart from reads; every
// answer carries RateLimit-Policy and RateLimit (read back with an RFC 9651 parser), a refusal is 429
// `rate_limited` with Retry-After and writes nothing; with Redis down requests still pass (payments
// too), switchyard_rate_limit_fail_open_total rises and the outage is logged once, its end once.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseList } from 'structured-headers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../../../src/store/merchants.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';
import type { GatewayProcess } from '../helpers/gateway-process.ts';
import { freePort, startPrivateRedis } from '../helpers/redis-server.ts';
import type { PrivateRedis } from '../helpers/redis-server.ts';
import { until } from '../helpers/until.ts';

const config = `
connectors:
  stripe_a: { type: stripe, endpoint: sandbox, secret_key: sk_test_a, webhook_secrets: [whsec_a] }
routing:
  default: { priority: [stripe_a] }
`;

let db: TestDatabase;
let redis: PrivateRedis;
let p1: GatewayProcess;
let p2: GatewayProcess;

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: { code?: string; detail?: string; status?: string };
}

async function call(p: GatewayProcess, key: string, method: string, path: string, body?: unknown, idem?: string): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (method === 'POST') headers['idempotency-key'] = idem ?? `idem-${randomBytes(6).toString('hex')}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${p.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}

/** A field as `{policy: {param: value}}`, parsed as a client would. */
function field(a: Answer, name: string): Record<string, Record<string, unknown>> {
  const value = a.headers.get(name);
  if (value === null) throw new Error(`no ${name} on a ${a.status}`);
  // The library's BareItem names BufferSource, which this project's lib (no DOM) does not declare.
  return Object.fromEntries(parseList(value).map((m) => {
    const [policy, params] = m as unknown as [string, Map<string, unknown>];
    return [policy, Object.fromEntries(params)];
  }));
}

const payment = () => ({ amount: 1000, currency: 'EUR', reference: `o-${randomBytes(3).toString('hex')}`, capture_method: 'manual', payment_method: { type: 'card', test_card: '4242424242424242' } });
const merchant = async (name: string) => (await createMerchant(db.db, { name })).apiKey;

beforeAll(async () => {
  db = await createTestDatabase('rate_limits_processes');
  redis = await startPrivateRedis();
  const file = join(mkdtempSync(join(tmpdir(), 'sy-rate-limits-')), 'switchyard.yaml');
  writeFileSync(file, config);
  const env = {
    DATABASE_URL: db.url, REDIS_URL: redis.url, SWITCHYARD_CONFIG: file, SWITCHYARD_START_TIMEOUT: '10s', SWITCHYARD_API_WAIT: '3s',
    SWITCHYARD_METRICS_TOKEN: '', SWITCHYARD_METRICS_PORT: '', SWITCHYARD_RATE_LIMIT_PREFIX: `sytest_rlp_${randomBytes(3).toString('hex')}`,
    // One unit back every 6 s: nothing refills while a test runs.
    SWITCHYARD_RATE_LIMIT_MERCHANT: '10/60s', SWITCHYARD_RATE_LIMIT_CREATES: '3/60s',
  };
  // One after the other: the first creates the sandbox's database.
  p1 = await startGatewayProcess('switchyard start --role api', { ...env, PORT: String(await freePort()) });
  p2 = await startGatewayProcess('switchyard start --role api', { ...env, PORT: String(await freePort()) });
}, 120_000);
afterAll(async () => {
  await p1?.stop('SIGTERM');
  await p2?.stop('SIGTERM');
  await redis?.stop();
  await db?.drop();
});

describe('limits every API process shares', () => {
  it("one merchant's limit holds across both processes, and a second merchant is unaffected while the first is limited", async () => {
    const first = await merchant('rl-first');
    const second = await merchant('rl-second');
    const remaining: unknown[] = [];
    for (let i = 0; i < 10; i++) {
      const a = await call(i % 2 === 0 ? p1 : p2, first, 'GET', '/v1/payments');
      expect(a.status).toBe(200);
      remaining.push(field(a, 'RateLimit')['merchant']!['r']);
    }
    // Ten units of one bucket, drawn alternately through both processes.
    expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);

    for (const p of [p1, p2]) {
      const refused = await call(p, first, 'GET', '/v1/payments');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(refused.body.code).toBe('rate_limited');
      expect(refused.body.detail).toMatch(/"merchant" \(10 requests per 60 s\)/);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(6);
      // Retry-After is no earlier than the refusing policy's t (the draft's rule).
      expect(field(refused, 'RateLimit')['merchant']).toEqual({ r: 0, t: retryAfter });
    }

    for (const [p, r] of [[p2, 9], [p1, 8]] as const) {
      const other = await call(p, second, 'GET', '/v1/payments');
      expect(other.status).toBe(200);
      expect(field(other, 'RateLimit')['merchant']!['r']).toBe(r);
    }
  });

  it('creates run out apart from reads, and a refused create writes nothing', async () => {
    const key = await merchant('rl-creates');
    for (let i = 0; i < 3; i++) {
      const a = await call(i === 1 ? p2 : p1, key, 'POST', '/v1/payments', payment());
      expect([201, 202]).toContain(a.status);
      expect(field(a, 'RateLimit')['create']!['r']).toBe(2 - i);
    }
    const payments = async () => Number((await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM payments')).rows[0]!.n);
    const before = await payments();
    const idem = `idem-refused-${randomBytes(4).toString('hex')}`;
    const refused = await call(p2, key, 'POST', '/v1/payments', payment(), idem);
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/"create" \(3 requests per 60 s\)/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(field(refused, 'RateLimit')).toMatchObject({ merchant: { r: 7 }, create: { r: 0 } });
    expect(await payments()).toBe(before);
    expect((await db.pool.query('SELECT 1 FROM idempotency_records WHERE key = $1', [idem])).rowCount).toBe(0);

    // Reads have their own bucket: still served, from the same merchant's bucket.
    const read = await call(p1, key, 'GET', '/v1/payments');
    expect(read.status).toBe(200);
    expect(field(read, 'RateLimit')).toMatchObject({ merchant: { r: 6 }, read: { r: 149 } });
  });

  it('every answer carries the policies it drew from, errors included', async () => {
    const key = await merchant('rl-fields');
    const notFound = await call(p2, key, 'GET', '/v1/payments/pay_nope');
    expect(notFound.status).toBe(404);
    expect(field(notFound, 'RateLimit-Policy')).toEqual({ merchant: { q: 10, w: 60 }, key: { q: 150, w: 2 }, read: { q: 150, w: 2 } });
    expect(field(notFound, 'RateLimit')).toEqual({ merchant: { r: 9, t: 6 }, key: { r: 149, t: 1 }, read: { r: 149, t: 1 } });
    const invalid = await call(p1, key, 'POST', '/v1/payments', { amount: 0 });
    expect(invalid.status).toBe(400);
    expect(Object.keys(field(invalid, 'RateLimit-Policy'))).toEqual(['merchant', 'key', 'create']);
  });

  it('with Redis down requests pass, payments too, counted and logged once; limits apply again once it is back', async () => {
    const key = await merchant('rl-outage');
    const failOpen = async (p: GatewayProcess): Promise<number> => {
      const text = await (await fetch(`${p.url}/metrics`)).text();
      return [...text.matchAll(/^switchyard_rate_limit_fail_open_total\{reason="[a-z]+"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    };
    const counted = await failOpen(p1);
    await redis.stop();
    for (let i = 0; i < 3; i++) {
      const a = await call(p1, key, 'GET', '/v1/payments');
      expect(a.status).toBe(200);
      expect(a.headers.get('ratelimit-policy')).not.toBeNull();
      expect(a.headers.get('ratelimit')).toBeNull();
    }
    const paid = await call(p1, key, 'POST', '/v1/payments', payment());
    expect([201, 202]).toContain(paid.status);
    expect(await failOpen(p1)).toBe(counted + 4);
    expect(p1.output().match(/rate limits: Redis did not answer/g)).toHaveLength(1);

    await redis.restart();
    const back = await until(() => call(p1, key, 'GET', '/v1/payments'), (a) => a.headers.get('ratelimit') !== null, 'the limiter to answer again', 15_000, 200);
    expect(back.status).toBe(200);
    expect(p1.output()).toMatch(/rate limits: Redis answers again after \d+ s; \d+ requests passed without limits/);
  });
});
