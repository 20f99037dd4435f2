// Dispatch at commit (src/jobs/local-dispatch.ts): the process that commits a provider call runs
// it through the worker's own function, and the relay and BullMQ take every row it does not —
// one its account's fleet-wide budget has no slot for, one left behind by a process that died
// between taking it and claiming it. The budget (src/jobs/account-budget.ts) holds across two
// processes and both triggers: the sandbox counts the most requests it answered at once.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { startRuntime } from '../../../src/app/runtime.ts';
import type { Runtime } from '../../../src/app/runtime.ts';
import { requestCapture, startPayment, waitForPayment } from '../../../src/app/payment-service.ts';
import type { Payment } from '../../../src/core/payment.ts';
import { takeForLocalRun } from '../../../src/jobs/outbox-claims.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { REDIS_URL, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

const open: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of open.reverse()) await o.close().catch(() => undefined);
});

const authorized = (p: Payment) => p.state === 'authorized';
const sandboxOf = (gw: TestGateway, account: string): SandboxControl => gw.rt.sandboxes.find((s) => s.account === account)!;

/** A second process on the same database, Redis prefix and sandboxes' state. */
async function secondProcess(gw: TestGateway, role: 'all' | 'worker' | 'api', relayRepublishMs?: number, configFile = gw.rt.config.file): Promise<Runtime> {
  const rt = await startRuntime({
    role, databaseUrl: gw.db.url, redisUrl: REDIS_URL, configFile, queuePrefix: gw.prefix, relaySweepMs: 200, log: () => undefined, reconcileSchedule: false,
    ...(relayRepublishMs === undefined ? {} : { relayRepublishMs }),
  });
  open.push({ close: () => rt.stop() });
  return rt;
}

describe('dispatch at commit', () => {
  it('an API process with no worker anywhere authorizes and captures: each row ran where it was committed, never through BullMQ', async () => {
    const gw = await startTestGateway('jobs_dispatch_local', twoStripeConfig(), { role: 'api' });
    open.push(gw);
    const p = await gw.pay();
    const done = await gw.waitFor(p.id, authorized, 10_000);
    expect(done.state).toBe('authorized');
    expect((await requestCapture(gw.rt, gw.merchantId, done, undefined, true)).kind).toBe('applied');
    // 20 s: a loaded .ci/run once saw it still capturing at 10 s (the capture runs in this API process, no worker).
    expect((await gw.waitFor(p.id, (x) => x.state === 'captured', 20_000)).state).toBe('captured');
    const rows = await gw.rt.database.db.execute<{ claimed_by: string; status: string }>(sql`SELECT claimed_by, status FROM outbox WHERE payment_id = ${p.id} AND kind = 'provider_call' ORDER BY id`);
    expect(rows.rows.length).toBeGreaterThan(0);
    for (const r of rows.rows) expect([r.status, r.claimed_by.startsWith('local-')]).toEqual(['done', true]);
    const jobs = await gw.rt.queues.get('call.stripe_a').getJobCounts('waiting', 'delayed', 'active', 'completed', 'failed');
    expect(Object.values(jobs).reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('off (SWITCHYARD_DISPATCH_AT_COMMIT=false): the same API process leaves every call to the workers', async () => {
    const gw = await startTestGateway('jobs_dispatch_off', twoStripeConfig(), { role: 'api', env: { ...process.env, SWITCHYARD_DISPATCH_AT_COMMIT: 'false' } });
    open.push(gw);
    const p = await gw.pay();
    await new Promise((r) => setTimeout(r, 800));
    expect((await gw.waitFor(p.id, () => true)).state).toBe('authorizing');
    const published = await gw.rt.database.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM outbox WHERE payment_id = ${p.id} AND published_at IS NOT NULL AND status = 'pending'`);
    expect(published.rows[0]!.n).toBe(1);
    await secondProcess(gw, 'worker');
    expect((await gw.waitFor(p.id, authorized, 10_000)).state).toBe('authorized');
  });

  it("one budget per account across two processes and both triggers: never more calls at once than the account's concurrency", async () => {
    // Concurrency 2 for stripe_a, every call held 300 ms at the provider; two full processes (API and workers each).
    const config = twoStripeConfig().replace("    secret_key: sk_test_a\n", '    secret_key: sk_test_a\n    queue: { concurrency: 2, rate_per_s: 1000 }\n');
    const gw = await startTestGateway('jobs_dispatch_budget', config, { role: 'all' });
    open.push(gw);
    const a = sandboxOf(gw, 'stripe_a');
    // The second process calls the first one's sandbox listener for stripe_a (an external sandbox
    // URL), so one listener sees every call of both processes and counts them at once.
    const dir = mkdtempSync(join(tmpdir(), 'sy-budget-'));
    const secondConfig = join(dir, 'switchyard.yaml');
    writeFileSync(secondConfig, config.replace('    secret_key: sk_test_a\n', `    secret_key: sk_test_a\n    endpoint: ${a.url}\n`));
    const other = await secondProcess(gw, 'all', undefined, secondConfig);
    const { merchant } = await createMerchant(other.database.db, { name: 'second' });
    expect(other.sandboxes.map((s) => s.account)).toEqual(['stripe_b']);
    await a.scheduleFault({ op: 'any', mode: 'latency', count: 1_000, latencyMs: 300, process: 'before' });
    expect(a.maxInFlight()).toBe(0);
    const n = 10;
    const started = await Promise.all(Array.from({ length: n }, async (_, i) => {
      if (i % 2 === 0) return (await gw.pay()).id;
      const r = await startPayment(other, merchant.id, { amount: 1000, currency: 'EUR', reference: `b-${i}`, captureMethod: 'manual', allowPartialAuthorization: false, paymentMethod: { test_card: '4242424242424242' }, metadata: {} });
      if (!r.ok) throw new Error(r.message);
      return r.payment.id;
    }));
    for (const [i, id] of started.entries()) {
      const p = i % 2 === 0 ? await gw.waitFor(id, authorized, 40_000) : await waitForPayment(other, merchant.id, id, authorized, 40_000);
      expect(p?.state).toBe('authorized');
    }
    await a.clearFaults();
    expect(a.maxInFlight()).toBe(2);
    // Both triggers ran calls: some at commit, some from the queue (the rows the budget refused at commit).
    const by = await gw.rt.database.db.execute<{ local: boolean; n: number }>(sql`SELECT claimed_by LIKE 'local-%' AS local, count(*)::int AS n FROM outbox WHERE kind = 'provider_call' GROUP BY 1`);
    const counts = Object.fromEntries(by.rows.map((r) => [String(r.local), r.n]));
    expect([counts['true'] ?? 0, counts['false'] ?? 0].map((c) => c > 0)).toEqual([true, true]);
  }, 90_000);

  it('a row taken for a local run by a process that died before claiming it is republished by the relay and run by a worker', async () => {
    // This process's relay sweeps too rarely to matter here; the worker's sweep republishes.
    const gw = await startTestGateway('jobs_dispatch_orphan', twoStripeConfig(), { role: 'api', dispatchAtCommit: false, relaySweepMs: 600_000 });
    open.push(gw);
    // A process that commits and takes its row, then dies: simulated by taking the row and never running it.
    const p = await gw.pay();
    const ids = (await gw.rt.database.db.execute<{ id: string }>(sql`SELECT id FROM outbox WHERE payment_id = ${p.id} AND status = 'pending' AND kind = 'provider_call'`)).rows.map((r) => Number(r.id));
    // This process published it at commit: take the job and the stamp back, as if it never had.
    await gw.rt.queues.get('call.stripe_a').drain(true);
    await gw.rt.database.db.execute(sql`UPDATE outbox SET published_at = NULL WHERE id = ANY(${`{${ids.join(',')}}`}::bigint[])`);
    const taken = await takeForLocalRun(gw.rt.database.db, ids, ['provider_call'], new Date(), 10);
    expect(taken.map((t) => t.id)).toEqual(ids);
    await secondProcess(gw, 'worker', 1_000);
    expect((await gw.waitFor(p.id, authorized, 15_000)).state).toBe('authorized');
    const row = await gw.rt.database.db.execute<{ claimed_by: string }>(sql`SELECT claimed_by FROM outbox WHERE id = ${ids[0]!}`);
    expect(row.rows[0]!.claimed_by.startsWith('ob_')).toBe(true); // a BullMQ job, published again by the sweep
  }, 40_000);
});
