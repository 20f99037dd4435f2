// kill -9 of worker processes at random moments while 200 payments run (before the call, after
// the call but before the commit, after the commit): after a restart every payment reaches the
// right state, the sandbox shows one authorization per payment, and no outbox row is left undone.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime } from '../../../src/app/runtime.ts';
import type { Runtime } from '../../../src/app/runtime.ts';
import { startPayment, waitForPayment } from '../../../src/app/payment-service.ts';
import { startStripeSandbox } from '../../../src/connectors/stripe/sandbox/index.ts';
import type { StripeSandbox } from '../../../src/connectors/stripe/sandbox/index.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { KillableWorker } from '../helpers/killable-worker.ts';
import { REDIS_URL, settled } from '../helpers/runtime.ts';

const PAYMENTS = 200;
let db: TestDatabase;
let sandbox: StripeSandbox;
let rt: Runtime;
let env: NodeJS.ProcessEnv;
let worker: KillableWorker;

beforeAll(async () => {
  db = await createTestDatabase('jobs_crash');
  sandbox = await startStripeSandbox({ account: 'stripe_a', secretKey: 'sk_test_crash', port: 0 });
  const dir = mkdtempSync(join(tmpdir(), 'sy-crash-'));
  const configFile = join(dir, 'switchyard.yaml');
  writeFileSync(configFile, `
connectors:
  stripe_a: { type: stripe, endpoint: "${sandbox.url}", secret_key: sk_test_crash, webhook_secrets: [whsec_x], timeout_ms: 3000, queue: { concurrency: 8, rate_per_s: 1000 } }
routing:
  default: { priority: [stripe_a] }
`);
  const prefix = `sytest_crash_${randomBytes(3).toString('hex')}`;
  env = { ...process.env, DATABASE_URL: db.url, REDIS_URL, SWITCHYARD_CONFIG: configFile, SWITCHYARD_QUEUE_PREFIX: prefix };
  worker = new KillableWorker('test/integration/jobs/worker-child.ts', env);
  rt = await startRuntime({ role: 'api', databaseUrl: db.url, redisUrl: REDIS_URL, configFile, queuePrefix: prefix, relaySweepMs: 300, relayRepublishMs: 2_000, log: () => undefined });
}, 60_000);

afterAll(async () => {
  await worker?.kill();
  await rt?.stop();
  await sandbox?.close();
  await db?.drop();
});

describe('kill -9 of workers', () => {
  it(`${PAYMENTS} payments survive random worker kills`, async () => {
    const { merchant } = await createMerchant(rt.database.db, { name: 'crash' });
    // Latency widens the window between the provider's answer and our commit.
    sandbox.scheduleFault({ op: 'any', mode: 'latency', latencyMs: 40, count: 100_000 });
    await worker.start();
    const ids: string[] = [];
    let killing = true;
    const killer = (async () => {
      while (killing) {
        await new Promise((r) => setTimeout(r, 200 + Math.floor(Math.random() * 600)));
        if (!killing) break;
        await worker.kill();
        await worker.start();
      }
    })();
    for (let i = 0; i < PAYMENTS; i++) {
      const r = await startPayment(rt, merchant.id, {
        amount: 1000 + i, currency: 'EUR', reference: `crash-${i}`, captureMethod: 'manual', allowPartialAuthorization: false,
        paymentMethod: { test_card: '4242424242424242' }, metadata: {},
      });
      if (!r.ok) throw new Error(r.message);
      ids.push(r.payment.id);
      if (i % 20 === 0) await new Promise((res) => setTimeout(res, 150));
    }
    // Keep killing while the work is still in flight, at least a handful of times.
    while (worker.kills < 6) await new Promise((r) => setTimeout(r, 200));
    killing = false;
    await killer;
    if (!worker.running) await worker.start();

    const final = await Promise.all(ids.map((id) => waitForPayment(rt, merchant.id, id, settled, 90_000)));
    expect(worker.kills).toBeGreaterThanOrEqual(6);
    expect(final.map((p) => p?.state)).toEqual(ids.map(() => 'authorized'));
    const ledger = sandbox.ledger();
    for (const p of final) {
      const live = ledger.filter((e) => e.payment_id === p!.id && e.authorized > 0 && !e.cancelled);
      expect(live, `payment ${p!.id}`).toHaveLength(1);
    }
    const pending = await rt.database.db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM outbox WHERE status <> 'done' AND kind = 'provider_call'`);
    expect(Number(pending.rows[0]!.n)).toBe(0);
  }, 180_000);
});
