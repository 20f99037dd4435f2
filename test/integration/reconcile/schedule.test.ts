// The repeatable reconciliation jobs the worker role registers (src/reconcile/schedule.ts), with an
// injected clock two hours ahead and intervals of a few hundred milliseconds instead of a day and a
// week: both schedules run the same reconcile() (a dead-lettered inbox row is found and stored
// once however many runs see it), each over its own window ending at the injected clock, and
// registering the schedules again replaces them instead of adding more.
import { readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisConnection } from '../../../src/jobs/queues.ts';
import type { ReconcileSummary } from '../../../src/reconcile/run.ts';
import { DEFAULT_RECONCILE_SCHEDULES, RECONCILE_QUEUE, startReconcileSchedule } from '../../../src/reconcile/schedule.ts';
import type { ReconcileJobData } from '../../../src/reconcile/schedule.ts';
import { REDIS_URL, startTestGateway } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';
import { until as waitUntil } from '../helpers/until.ts';

const HOUR_MS = 3_600_000;
const AHEAD_MS = 2 * HOUR_MS;
const clock = (): Date => new Date(Date.now() + AHEAD_MS);
const schedules = [
  { id: 'reconcile-daily', repeat: { every: 300 }, windowMs: 24 * HOUR_MS },
  { id: 'reconcile-weekly', repeat: { every: 700 }, windowMs: 7 * 24 * HOUR_MS },
];

let gw: TestGateway;
const redis = redisConnection(REDIS_URL, 'worker');
let queue: Queue<ReconcileJobData, ReconcileSummary>;

beforeAll(async () => {
  gw = await startTestGateway('reconcile_schedule', readFileSync('config/switchyard.yaml', 'utf8'), { now: clock, reconcileSchedule: { schedules, reregisterEveryMs: 500 } });
  queue = new Queue(RECONCILE_QUEUE, { connection: redis, prefix: gw.prefix });
}, 60_000);
afterAll(async () => {
  await queue?.close();
  await gw?.close();
  redis.disconnect();
});

/** The shared wait, with this file's longer default bound. */
const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> => waitUntil(read, ok, what, timeoutMs, 100);

describe('scheduled reconciliation', () => {
  it('the defaults: daily over 24 h, weekly over 7 days, by cron in UTC', () => {
    expect(DEFAULT_RECONCILE_SCHEDULES.map((s) => [s.id, s.repeat.pattern, s.repeat.tz, s.windowMs / HOUR_MS])).toEqual([
      ['reconcile-daily', '15 0 * * *', 'UTC', 24],
      ['reconcile-weekly', '45 0 * * 1', 'UTC', 168],
    ]);
  });

  it('both schedules run reconcile over their own window, ending at the injected clock; a finding is stored once', async () => {
    await gw.db.pool.query(
      `INSERT INTO inbound_events (connector, provider_event_id, raw_body, verified, outcome, reason, event, payment_id)
       VALUES ('stripe_eu', 'evt_sched', '\\x7b7d', true, 'failed', 'no payment after 8 tries', $1, NULL)`,
      [JSON.stringify({ kind: 'refund_succeeded', rawType: 'charge.refunded', providerEventId: 'evt_sched', connectorType: 'stripe', attemptId: null, providerRef: 'pi_sched', occurredAt: new Date().toISOString(), amount: 1, currency: 'EUR', modificationRef: null })],
    );
    const done = await until(() => queue.getCompleted(0, 200), (jobs) => {
      const daily = jobs.filter((j) => j.data.schedule === 'reconcile-daily' && j.returnvalue.discrepancies > 0);
      return daily.length >= 2 && jobs.some((j) => j.data.schedule === 'reconcile-weekly' && j.returnvalue.discrepancies > 0);
    }, 'two daily runs and a weekly run that saw the dead-lettered row');

    for (const j of done) {
      const { from, to } = j.returnvalue.window;
      expect(Date.parse(to) - Date.parse(from), j.data.schedule).toBe(j.data.windowMs);
      expect(Date.parse(to)).toBeGreaterThan(Date.now() + AHEAD_MS / 2); // the runtime's clock, not the wall clock
    }
    expect(new Set(done.map((j) => j.data.windowMs))).toEqual(new Set([24 * HOUR_MS, 7 * 24 * HOUR_MS]));
    const stored = await gw.db.pool.query<{ category: string; status: string }>(`SELECT category, status FROM discrepancies WHERE detail LIKE '%pi_sched%'`);
    expect(stored.rows).toEqual([{ category: 'unapplied_event', status: 'open' }]);
    expect(done.filter((j) => j.returnvalue.new > 0)).toHaveLength(1);
  });

  it('registering the schedules again (another worker process) replaces them: still one per id; a Redis flush is repaired', async () => {
    const again = await startReconcileSchedule(
      { db: gw.rt.database.db, connectors: gw.rt.connectors, envs: gw.rt.envs, now: clock, log: () => undefined },
      { connection: redis, prefix: gw.prefix },
      { schedules, reregisterEveryMs: 60_000 },
    );
    try {
      expect((await queue.getJobSchedulers()).map((s) => s.key).sort()).toEqual(['reconcile-daily', 'reconcile-weekly']);
      // Lost with Redis (a flush of this test's keys): the worker registers them again.
      await queue.removeJobScheduler('reconcile-daily');
      await queue.removeJobScheduler('reconcile-weekly');
      expect(await queue.getJobSchedulersCount()).toBe(0);
      await until(() => queue.getJobSchedulers(), (s) => s.length === 2, 'the schedules registered again');
    } finally {
      await again.close();
    }
  });
});
