// The embedded provider is one durable provider for every process using the same config: real
// gateway processes (`npm start`, `switchyard start`) on the shipped config, killed and restarted,
// side by side, with the gateway's database connections cut — and the CLI's reconcile from its own
// process. Each test has its own gateway database; the sandbox's (<db>_sandbox) is dropped with it.

import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withDatabase } from '../../../src/store/database-url.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';
import type { GatewayProcess, Launcher } from '../helpers/gateway-process.ts';
import { freePort, startPrivateRedis } from '../helpers/redis-server.ts';
import type { PrivateRedis } from '../helpers/redis-server.ts';

type Json = Record<string, unknown>;

let redis: PrivateRedis;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  // A private Redis: `switchyard start` uses the default queue prefix, which other processes on the shared one may use too.
  redis = await startPrivateRedis();
});
afterAll(async () => {
  await redis?.stop();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function database(name: string): Promise<TestDatabase> {
  const db = await createTestDatabase(name);
  cleanups.push(() => db.drop());
  return db;
}

function envFor(db: TestDatabase, port: number): Record<string, string> {
  return { DATABASE_URL: db.url, REDIS_URL: redis.url, PORT: String(port), SWITCHYARD_CONFIG: 'config/switchyard.yaml' };
}

async function gateway(launcher: Launcher, db: TestDatabase, port?: number): Promise<GatewayProcess> {
  const g = await startGatewayProcess(launcher, envFor(db, port ?? (await freePort())));
  cleanups.push(() => g.stop('SIGKILL'));
  return g;
}

async function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(method === 'POST' ? { 'idempotency-key': `k-${Math.random()}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Json };
}

async function until(read: () => Promise<Json>, done: (p: Json) => boolean, what: string, timeoutMs = 30_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = await read();
    if (done(p)) return p;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(p)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const card = { type: 'card', test_card: '4242424242424242' };

async function authorize(base: string, key: string, amount = 1000): Promise<string> {
  const created = await call(base, key, 'POST', '/v1/payments', { amount, currency: 'EUR', reference: `order-${amount}`, capture_method: 'manual', payment_method: card });
  expect(created.status).toBe(201);
  expect(created.json['status']).toBe('authorized');
  return created.json['id'] as string;
}

async function captureAndRefund(base: string, key: string, id: string, amount = 1000): Promise<void> {
  const captured = await call(base, key, 'POST', `/v1/payments/${id}/capture`, {});
  expect([200, 202]).toContain(captured.status);
  const payment = await until(async () => (await call(base, key, 'GET', `/v1/payments/${id}`)).json, (p) => p['status'] === 'captured', `capture of ${id}`);
  expect(payment['amount_captured']).toBe(amount);
  const refund = await call(base, key, 'POST', `/v1/payments/${id}/refunds`, { amount });
  expect([200, 201, 202]).toContain(refund.status);
  await until(async () => (await call(base, key, 'GET', `/v1/payments/${id}`)).json, (p) => p['amount_refunded'] === amount, `refund of ${id}`);
}

async function ledgerOf(base: string, account: string, paymentId: string): Promise<Json[]> {
  const res = await fetch(`${base}/_sandbox/${account}/ledger`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { payments: Json[] }).payments.filter((e) => e['payment_id'] === paymentId);
}

async function withClient<T>(url: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const sandboxUrl = (db: TestDatabase): string => withDatabase(db.url, `${db.name}_sandbox`);

describe('the provider outlives the gateway process', () => {
  it.each([
    ['npm start', 'SIGTERM'],
    ['switchyard start', 'SIGKILL'],
  ] as const)('%s stopped by %s between authorization and capture: capture and refund succeed after the restart, one authorization', async (launcher, signal) => {
    const db = await database(`dur_${signal.toLowerCase()}`);
    const { apiKey } = await createMerchant(db.db, { name: 'My shop' });
    const port = await freePort();
    const first = await gateway(launcher, db, port);
    const id = await authorize(first.url, apiKey);
    await first.stop(signal);

    const second = await gateway(launcher, db, port);
    await captureAndRefund(second.url, apiKey, id);
    expect(await ledgerOf(second.url, 'stripe_eu', id)).toMatchObject([{ authorized: 1000, captured: 1000, refunded: 1000 }]);
  });
});

describe('the CLI sees the provider the gateway talks to', () => {
  it('after the README flow, `switchyard reconcile --since 1h` from another process finds 0 discrepancies', async () => {
    const db = await database('dur_reconcile');
    const g = await gateway('npm start', db);
    const env = envFor(db, 0);
    const created = await runCli(['merchants', 'create', '--name', 'My shop'], env);
    expect(created.code, created.stderr).toBe(0);
    const key = (JSON.parse(created.stdout) as { api_key: string }).api_key;
    const id = await authorize(g.url, key);
    const captured = await call(g.url, key, 'POST', `/v1/payments/${id}/capture`, {});
    expect([captured.status, captured.json['status']]).toEqual([200, 'captured']);

    const r = await runCli(['reconcile', '--since', '1h', '--json'], env, 120_000);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { checked: number; discrepancies: number };
    expect(summary.checked).toBeGreaterThanOrEqual(1);
    expect(summary.discrepancies).toBe(0);
    const open = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM discrepancies');
    expect(open.rows[0]!.n).toBe(0);
  });
});

describe('two gateway processes on one database and config', () => {
  it('see one provider: authorized through one, captured through the other; each provider webhook delivered once', async () => {
    const db = await database('dur_two');
    const { apiKey } = await createMerchant(db.db, { name: 'My shop' });
    const [a, b] = await Promise.all([gateway('switchyard start', db), gateway('switchyard start', db)]);
    const viaStripe = await authorize(a.url, apiKey, 1000);
    const viaAdyen = await authorize(a.url, apiKey, 150_000); // eur-large routes to Adyen, whose capture completes by notification
    await captureAndRefund(b.url, apiKey, viaStripe, 1000);
    await captureAndRefund(b.url, apiKey, viaAdyen, 150_000);
    expect(await ledgerOf(a.url, 'stripe_eu', viaStripe)).toMatchObject([{ authorized: 1000, captured: 1000, refunded: 1000 }]);
    expect(await ledgerOf(b.url, 'adyen_eu', viaAdyen)).toMatchObject([{ authorized: 150_000, captured: 150_000, refunded: 150_000 }]);

    await withClient(sandboxUrl(db), async (c) => {
      await until(async () => (await c.query('SELECT count(*)::int AS pending FROM sandbox_events WHERE done_at IS NULL')).rows[0] as Json, (r) => r['pending'] === 0, 'webhook events pending');
      const events = (await c.query('SELECT count(*)::int AS n FROM sandbox_events')).rows[0] as { n: number };
      expect(events.n).toBeGreaterThanOrEqual(8);
      const sent = await c.query<{ event_id: string; sends: number }>(
        `SELECT event_id, count(*) FILTER (WHERE status BETWEEN 200 AND 299)::int AS sends FROM sandbox_deliveries GROUP BY event_id`,
      );
      expect(sent.rows).toHaveLength(events.n);
      expect(sent.rows.filter((r) => r.sends !== 1)).toEqual([]);
    });
  });
});

describe('separate failure domains', () => {
  it('the provider survives pg_terminate_backend of every backend of the gateway database', async () => {
    const db = await database('dur_term');
    const { apiKey } = await createMerchant(db.db, { name: 'My shop' });
    const g = await gateway('switchyard start', db);
    const id = await authorize(g.url, apiKey);
    const sandboxDb = `${db.name}_sandbox`;
    await withClient(withDatabase(db.url, 'postgres'), async (admin) => {
      const backends = async (name: string): Promise<number[]> =>
        (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])).rows.map((r) => r.pid);
      const providerBefore = await backends(sandboxDb);
      expect(providerBefore.length).toBeGreaterThan(0);
      const killed = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db.name]);
      expect(killed.rows.length).toBeGreaterThan(0);
      // Not one of the provider's connections went with them.
      const providerAfter = await backends(sandboxDb);
      expect(providerBefore.filter((pid) => !providerAfter.includes(pid))).toEqual([]);
    });
    expect(await ledgerOf(g.url, 'stripe_eu', id)).toMatchObject([{ authorized: 1000, captured: 0 }]);
    await captureAndRefund(g.url, apiKey, id);
    expect(await ledgerOf(g.url, 'stripe_eu', id)).toMatchObject([{ authorized: 1000, captured: 1000, refunded: 1000 }]);
  });
});
