// Breakers live in each worker process (like Hystrix): a process's /metrics and the dashboard
// only know their own. Each worker process writes its breaker states to one Redis hash every few
// seconds (field `account|process`, value `state|time`), so any process can tell how many worker
// processes see each connector account's breaker closed, half-open or open. Entries of a process
// that stopped writing fall out after three intervals and are pruned on read.

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** The producer connection refuses commands until it is ready (no offline queue): a process just started waits briefly. */
async function ready(redis: Redis, timeoutMs = 2_000): Promise<void> {
  if (redis.status === 'ready' || redis.status === 'end' || redis.status === 'close') return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done);
  });
}

export type FleetBreakers = Record<string, { closed: number; half_open: number; open: number }>;

export interface BreakerBoardOptions {
  readonly intervalMs?: number;
  readonly now?: () => number;
}

export class BreakerBoard {
  readonly processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private timer: NodeJS.Timeout | null = null;
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly states: () => Readonly<Record<string, string>>,
    o: BreakerBoardOptions = {},
  ) {
    this.intervalMs = o.intervalMs ?? 5_000;
    this.now = o.now ?? Date.now;
  }

  async publish(): Promise<void> {
    const at = this.now();
    const fields = Object.fromEntries(Object.entries(this.states()).map(([account, state]) => [`${account}|${this.processId}`, `${state}|${at}`]));
    if (Object.keys(fields).length === 0) return;
    await ready(this.redis);
    await this.redis.multi().hset(this.key, fields).pexpire(this.key, this.intervalMs * 20).exec();
  }

  /** Publishes now and every interval; Redis errors are skipped (the next write catches up). */
  start(): void {
    const tick = (): void => void this.publish().catch(() => undefined);
    tick();
    this.timer = setInterval(tick, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const mine = Object.keys(this.states()).map((a) => `${a}|${this.processId}`);
    if (mine.length > 0) await this.redis.hdel(this.key, ...mine).catch(() => undefined);
  }

  /** Per connector account: how many live worker processes report each state. */
  async read(): Promise<FleetBreakers> {
    await ready(this.redis);
    const all = await this.redis.hgetall(this.key);
    const freshAfter = this.now() - 3 * this.intervalMs;
    const out: FleetBreakers = {};
    const stale: string[] = [];
    for (const [field, value] of Object.entries(all)) {
      const account = field.slice(0, field.indexOf('|'));
      const [state, at] = value.split('|');
      if (Number(at) < freshAfter) {
        stale.push(field);
        continue;
      }
      const counts = (out[account] ??= { closed: 0, half_open: 0, open: 0 });
      if (state === 'closed' || state === 'half_open' || state === 'open') counts[state] += 1;
    }
    if (stale.length > 0) await this.redis.hdel(this.key, ...stale).catch(() => undefined);
    return out;
  }
}
