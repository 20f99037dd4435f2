// Redis is transport, not the authority: after FLUSHALL or a restart mid-run, the relay's sweep
// republishes every row not done, and the outbox claims keep any effect from running twice.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { startPrivateRedis } from '../helpers/redis-server.ts';
import type { PrivateRedis } from '../helpers/redis-server.ts';
import { settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

let redis: PrivateRedis;
let gw: TestGateway;
let a: SandboxControl;

beforeAll(async () => {
  redis = await startPrivateRedis();
  gw = await startTestGateway('jobs_redis_loss', twoStripeConfig(), { redisUrl: redis.url, relayRepublishMs: 1_000 });
  a = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
});
afterAll(async () => {
  await gw?.close();
  await redis?.stop();
});

async function pendingCalls(): Promise<number> {
  const r = await gw.rt.database.db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM outbox WHERE status = 'pending' AND kind = 'provider_call'`);
  return Number(r.rows[0]!.n);
}

async function runBatch(n: number, disrupt: () => Promise<void>): Promise<void> {
  // Slow the provider a little so jobs are in Redis when it goes away.
  await a.scheduleFault({ op: 'any', mode: 'latency', latencyMs: 150, count: 1_000 });
  const created = await Promise.all(Array.from({ length: n }, () => gw.pay()));
  await new Promise((r) => setTimeout(r, 300));
  await disrupt();
  const done = await Promise.all(created.map((p) => gw.waitFor(p.id, (x) => settled(x), 40_000)));
  expect(done.map((p) => p.state)).toEqual(done.map(() => 'authorized'));
  for (const p of done) {
    const entries = (await a.ledger()).filter((e) => e.reference === p.attempts[0]!.id);
    expect(entries).toHaveLength(1);
  }
  expect(await pendingCalls()).toBe(0);
}

describe('losing Redis', () => {
  it('FLUSHALL mid-run: nothing lost, nothing doubled', async () => {
    await runBatch(25, () => redis.flushAll());
  });

  it('redis-server restart mid-run: nothing lost, nothing doubled', async () => {
    await runBatch(25, () => redis.restart());
  });
});
