// The relay stamps rows published before it adds their jobs (one statement instead of a SELECT
// before and an UPDATE after). A row it could not publish (no queue for it, Redis refused
// the jobs: producers do not queue offline) must not keep the stamp, or it would wait for the
// republish interval instead of the next sweep.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboxRelay } from '../../../src/jobs/relay.ts';
import { QueueSet, redisConnection, TIMER_QUEUE } from '../../../src/jobs/queues.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { startPrivateRedis } from '../helpers/redis-server.ts';
import type { PrivateRedis } from '../helpers/redis-server.ts';

let db: TestDatabase;
let redis: PrivateRedis;
let queues: QueueSet;
let relay: OutboxRelay;

beforeAll(async () => {
  db = await createTestDatabase('jobs_relay_stamp');
  redis = await startPrivateRedis();
  queues = new QueueSet(redisConnection(redis.url, 'producer'), 'syrelaystamp');
  // No sweep during the test (interval far away): only the direct publish runs.
  relay = new OutboxRelay(db.pool, queues, () => TIMER_QUEUE, ['timer'], { sweepIntervalMs: 3_600_000, log: () => undefined });
});
afterAll(async () => {
  await relay?.stop();
  // With Redis gone (a failed test) closing the queues would wait for it.
  await Promise.race([queues?.close().catch(() => undefined), new Promise((r) => setTimeout(r, 2_000))]);
  await redis?.stop();
  await db?.close();
});

async function timerRows(n: number): Promise<number[]> {
  const r = await db.db.execute<{ id: string }>(sql`
    INSERT INTO outbox (kind, payload, run_at) SELECT 'timer', '{}'::jsonb, now() FROM generate_series(1, ${n}) RETURNING id`);
  return r.rows.map((x) => Number(x.id));
}

const stamps = async (ids: number[]) =>
  (await db.db.execute<{ published_at: Date | null }>(sql`SELECT published_at FROM outbox WHERE id = ANY(${`{${ids.join(',')}}`}::bigint[]) ORDER BY id`)).rows.map((r) => r.published_at);

describe('relay direct publish', () => {
  it('stamps and publishes the rows it is given', async () => {
    const ids = await timerRows(3);
    relay.kick(ids);
    await relay.idle();
    expect((await stamps(ids)).every((s) => s !== null)).toBe(true);
    const jobs = await queues.get(TIMER_QUEUE).getJobs(['waiting', 'delayed']);
    expect(jobs.map((j) => j.data.outboxId).filter((id) => ids.includes(id)).sort()).toEqual(ids);
  });

  it('leaves no stamp on rows it could not publish (no queue for them)', async () => {
    const ids = await timerRows(2);
    await db.db.execute(sql`UPDATE outbox SET connector = 'gone' WHERE id = ${ids[1]!}`);
    const picky = new OutboxRelay(db.pool, queues, (row) => (row.connector === 'gone' ? null : TIMER_QUEUE), ['timer'], { sweepIntervalMs: 3_600_000, log: () => undefined });
    picky.kick(ids);
    await picky.idle();
    await picky.stop();
    const [published, skipped] = await stamps(ids);
    expect(published).not.toBeNull();
    expect(skipped).toBeNull();
  });

  it('takes the stamp back when Redis refuses the jobs, and publishes once Redis is back', async () => {
    await redis.stop();
    const ids = await timerRows(2);
    relay.kick(ids);
    await relay.idle();
    expect(await stamps(ids)).toEqual([null, null]);

    await redis.restart();
    // The producer reconnects by itself; kick until the jobs are in (the sweep would do the same).
    const deadline = Date.now() + 10_000;
    while ((await stamps(ids)).some((x) => x === null)) {
      if (Date.now() > deadline) throw new Error('rows never published after Redis came back');
      relay.kick(ids);
      await relay.idle();
      await new Promise((r) => setTimeout(r, 100));
    }
    const jobs = await queues.get(TIMER_QUEUE).getJobs(['waiting', 'delayed']);
    expect(jobs.map((j) => j.data.outboxId).filter((id) => ids.includes(id)).sort()).toEqual(ids);
  });
});
