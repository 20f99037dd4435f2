// Queue names and Redis connections. Redis is transport only: Postgres (the outbox) is the
// authority, so anything lost here is republished by the relay's sweep.

import { Queue } from 'bullmq';
import type { ConnectionOptions, JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function redisUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.REDIS_URL ?? DEFAULT_REDIS_URL;
}

/** One queue per connector account, so a slow or dead provider cannot starve the others. */
export function callQueueName(account: string): string {
  return `call.${account}`;
}
export const TIMER_QUEUE = 'timers';

/** Workers need maxRetriesPerRequest null (BullMQ blocks on Redis); producers fail fast instead. */
export function redisConnection(url: string, role: 'worker' | 'producer', log: (line: string) => void = () => undefined): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: role === 'worker' ? null : 2,
    enableOfflineQueue: role === 'worker',
    lazyConnect: false,
  });
  // ioredis reconnects by itself; an unheard 'error' event would only print noise.
  let last = '';
  redis.on('error', (err: Error) => {
    if (err.message !== last) log(`redis ${role}: ${err.message}`);
    last = err.message;
  });
  redis.on('ready', () => {
    last = '';
  });
  return redis;
}

/** Job ids derive from the outbox id ("ob_<id>": BullMQ refuses all-digit custom ids), so a republish is a no-op. */
export function outboxJobId(outboxId: number): string {
  return `ob_${outboxId}`;
}

export interface OutboxJobData {
  readonly outboxId: number;
}

/** Infrastructure retries only (database or Redis hiccups); business retries are decided by the core. */
export const OUTBOX_JOB_OPTIONS: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: true,
  removeOnFail: false,
};

export class QueueSet {
  private readonly queues = new Map<string, Queue<OutboxJobData>>();

  constructor(
    private readonly connection: ConnectionOptions,
    readonly prefix: string,
  ) {}

  get(name: string): Queue<OutboxJobData> {
    let q = this.queues.get(name);
    if (q === undefined) {
      q = new Queue<OutboxJobData>(name, { connection: this.connection, prefix: this.prefix });
      // A Queue re-emits its connection's errors; unheard, Node prints each one with its stack while
      // Redis is down. The connection's own listener (redisConnection) already logs the first of a run.
      q.on('error', () => undefined);
      this.queues.set(name, q);
    }
    return q;
  }

  all(): Queue<OutboxJobData>[] {
    return [...this.queues.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((q) => q.close()));
  }
}
