// BullMQ workers over the outbox queues: one per connector account (its own concurrency and rate
// limit) and one for timers. BullMQ retries cover only our own infrastructure failures. A job that
// exhausts them for another reason marks its outbox row dead, where `switchyard dlq` finds it; one
// that exhausts them on infrastructure (PostgreSQL down) leaves the row to the relay's sweep, which
// runs it again (job-failure.ts). The sweep also decides when the write here is lost.

import { Worker } from 'bullmq';
import type { ConnectionOptions, Job } from 'bullmq';
import type { Db } from '../store/db.ts';
import { asJobFailure, isInfrastructureFailure } from './job-failure.ts';
import { markOutboxDead } from './outbox-claims.ts';
import { processOutboxRow } from './outbox-processor.ts';
import type { ProcessorDeps, ProcessResult } from './outbox-processor.ts';
import { TIMER_QUEUE, callQueueName } from './queues.ts';
import type { OutboxJobData } from './queues.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

/** How long a worker's job waits for a budget slot before handing its row back to the relay. */
const BUDGET_WAIT_MS = 20_000;

export interface QueueLimits {
  readonly concurrency: number;
  readonly ratePerS: number;
}

export interface WorkerPoolOptions {
  readonly connection: ConnectionOptions;
  readonly prefix: string;
  readonly accounts: Readonly<Record<string, QueueLimits>>;
  readonly timerConcurrency?: number;
  readonly log?: (line: string) => void;
  /** Called with every processed job (tests, metrics). */
  readonly onProcessed?: (outboxId: number, result: ProcessResult) => void;
}

export class WorkerPool {
  private readonly workers: Worker<OutboxJobData, ProcessResult>[] = [];

  constructor(
    private readonly deps: ProcessorDeps & { readonly db: Db },
    private readonly opts: WorkerPoolOptions,
  ) {
    const log = opts.log ?? ((l) => console.error(l));
    for (const [account, limits] of Object.entries(opts.accounts)) {
      this.workers.push(this.worker(callQueueName(account), limits.concurrency, { max: limits.ratePerS, duration: 1_000 }, account));
    }
    this.workers.push(this.worker(TIMER_QUEUE, opts.timerConcurrency ?? 8));
    for (const w of this.workers) {
      w.on('failed', (job, err) => {
        if (job === undefined) return;
        const exhausted = job.attemptsMade >= (job.opts.attempts ?? 1);
        const infrastructure = isInfrastructureFailure(err);
        log(`worker ${w.name}: job ${job.id} failed (try ${job.attemptsMade}): ${safeErrorText(err)}${!exhausted ? '' : infrastructure ? ' — left pending, the relay runs it again' : ' — dead letter'}`);
        // Best effort: if this write is lost, the relay's sweep finds the failed job and decides the same.
        if (exhausted && !infrastructure) void markOutboxDead(deps.db, job.data.outboxId, err.message).catch(() => undefined);
      });
      w.on('error', (err) => log(`worker ${w.name}: ${safeErrorText(err)}`));
    }
  }

  private worker(queue: string, concurrency: number, limiter?: { max: number; duration: number }, account?: string): Worker<OutboxJobData, ProcessResult> {
    // A provider call waits for its account's fleet-wide budget (shared with the calls made at commit).
    const slot = account === undefined ? undefined : { kind: 'wait' as const, account, maxWaitMs: BUDGET_WAIT_MS };
    const process = async (job: Job<OutboxJobData, ProcessResult>): Promise<ProcessResult> => {
      // The job id names the execution; its claim is a token of its own (a stalled twin carries the same id).
      let result: ProcessResult;
      try {
        result = await processOutboxRow(this.deps, job.data.outboxId, job.id ?? `job-${job.data.outboxId}`, slot);
      } catch (err) {
        throw asJobFailure(err);
      }
      this.opts.onProcessed?.(job.data.outboxId, result);
      return result;
    };
    return new Worker<OutboxJobData, ProcessResult>(queue, process, {
      connection: this.opts.connection,
      prefix: this.opts.prefix,
      concurrency,
      ...(limiter === undefined ? {} : { limiter }),
      // A job whose worker died is handed to another after this long; the outbox lease guards the rest.
      stalledInterval: 5_000,
      maxStalledCount: 1_000,
    });
  }

  async waitUntilReady(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  /** Graceful stop: take no new jobs, let running ones finish (or release them), close connections. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }
}
