// The repeatable reconciliation runs: daily over the last 24 h, weekly over the last 7 days (late
// settlement rows, disputes that surface days later). Each is a BullMQ job scheduler
// (upsertJobScheduler: one schedule per id however many worker processes register it, and a tick
// produces one job), processed here by the same reconcile() the command runs. The window ends at
// the runtime's clock when the job runs, so tests inject both the clock and a short interval.

import { Queue, Worker } from 'bullmq';
import type { ConnectionOptions, RepeatOptions } from 'bullmq';
import { reconcile } from './run.ts';
import type { ReconcileDeps, ReconcileSummary } from './run.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

export const RECONCILE_QUEUE = 'reconcile';

export interface ReconcileSchedule {
  /** The job scheduler id (stable: re-registering replaces it, never duplicates it). */
  readonly id: string;
  /** BullMQ repeat: a cron `pattern` (with `tz`) or `every` milliseconds. */
  readonly repeat: Omit<RepeatOptions, 'key'>;
  /** How far back from the run's clock the window reaches. */
  readonly windowMs: number;
}

const HOUR_MS = 3_600_000;

/** 00:15 UTC every day over 24 h; 00:45 UTC every Monday over 7 days. */
export const DEFAULT_RECONCILE_SCHEDULES: readonly ReconcileSchedule[] = [
  { id: 'reconcile-daily', repeat: { pattern: '15 0 * * *', tz: 'UTC' }, windowMs: 24 * HOUR_MS },
  { id: 'reconcile-weekly', repeat: { pattern: '45 0 * * 1', tz: 'UTC' }, windowMs: 7 * 24 * HOUR_MS },
];

export interface ReconcileScheduleOptions {
  /** Replaces the defaults (tests: `every` a few hundred milliseconds). */
  readonly schedules?: readonly ReconcileSchedule[];
  /**
   * Redis is transport: a flush loses the schedules with everything else. Each worker registers
   * them again this often (default 10 min; upserting an unchanged schedule keeps its next run).
   */
  readonly reregisterEveryMs?: number;
}

export interface ReconcileJobData {
  readonly schedule: string;
  readonly windowMs: number;
}

export interface ReconcileScheduler {
  close(): Promise<void>;
}

export interface SchedulerDeps extends Omit<ReconcileDeps, 'onProgress'> {
  readonly log: (line: string) => void;
}

/** Registers the schedules and starts the worker that runs them (the worker role calls this). */
export async function startReconcileSchedule(
  deps: SchedulerDeps,
  bullmq: { readonly connection: ConnectionOptions; readonly prefix: string },
  opts: ReconcileScheduleOptions = {},
): Promise<ReconcileScheduler> {
  const schedules = opts.schedules ?? DEFAULT_RECONCILE_SCHEDULES;
  const queue = new Queue<ReconcileJobData, ReconcileSummary>(RECONCILE_QUEUE, { connection: bullmq.connection, prefix: bullmq.prefix });
  const register = async (): Promise<void> => {
    for (const s of schedules) {
      await queue.upsertJobScheduler(s.id, s.repeat, {
        name: s.id,
        data: { schedule: s.id, windowMs: s.windowMs },
        opts: { removeOnComplete: { count: 50 }, removeOnFail: { count: 50 } },
      });
    }
  };
  try {
    await register();
  } catch (err) {
    await queue.close();
    throw err;
  }
  const timer = setInterval(() => void register().catch((e: unknown) => deps.log(`reconcile schedules not registered: ${safeErrorText(e)}`)), opts.reregisterEveryMs ?? 10 * 60_000);
  timer.unref();
  const worker = new Worker<ReconcileJobData, ReconcileSummary>(
    RECONCILE_QUEUE,
    async (job) => {
      const to = deps.now();
      const from = new Date(to.getTime() - job.data.windowMs);
      const s = await reconcile(deps, { window: { from, to } });
      deps.log(`reconcile ${job.data.schedule}: ${s.window.from} .. ${s.window.to}: ${s.checked} checked, ${s.discrepancies} discrepancies, ${s.auto_resolved} auto-resolved, ${s.new} new (${s.reopened} reopened), ${s.updated} updated; settlement ${s.settlement.posted} posted${s.errors.length > 0 ? `; ${s.errors.length} error(s): ${s.errors.map((e) => `${e.paymentId ?? '-'} ${e.error}`).join('; ')}` : ''}`);
      return s;
    },
    // One run at a time per process; a long run keeps its lock (BullMQ renews it while it works).
    { connection: bullmq.connection, prefix: bullmq.prefix, concurrency: 1 },
  );
  worker.on('failed', (job, err) => deps.log(`reconcile ${job?.data.schedule ?? '?'} failed: ${safeErrorText(err)} (the next tick runs again)`));
  worker.on('error', (err) => deps.log(`reconcile worker: ${safeErrorText(err)}`));
  await worker.waitUntilReady();
  return {
    async close() {
      clearInterval(timer);
      await worker.close();
      await queue.close();
    },
  };
}
