// Breakers live in each process (like Hystrix): a process's own breaker sees only its own calls.
// Every process writes its breaker states to one Redis hash every interval and at once when a state
// changes (field `account|process`, value `state|time|last call`), so any process can tell how many
// processes see each connector account's breaker closed, half-open or open — for /metrics and the
// dashboard — and routing can combine its own breaker with the fleet's (src/routing/fleet-breakers.ts:
// since dispatch at commit, API processes call providers too). Entries of a process that stopped
// writing fall out after three intervals and are pruned on read.

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { fleetOpenAccounts, withOwnStates } from '../routing/fleet-breakers.ts';
import type { BoardEntry } from '../routing/fleet-breakers.ts';

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
  /** When this process last called each account through its breaker (ms). */
  readonly lastCalls?: () => Readonly<Record<string, number>>;
}

export class BreakerBoard {
  readonly processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private timer: NodeJS.Timeout | null = null;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly lastCalls: () => Readonly<Record<string, number>>;
  private view: readonly BoardEntry[] = [];

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly states: () => Readonly<Record<string, string>>,
    o: BreakerBoardOptions = {},
  ) {
    this.intervalMs = o.intervalMs ?? 1_000;
    this.now = o.now ?? Date.now;
    this.lastCalls = o.lastCalls ?? (() => ({}));
  }

  async publish(): Promise<void> {
    const at = this.now();
    const calls = this.lastCalls();
    const fields = Object.fromEntries(Object.entries(this.states()).map(([account, state]) => [`${account}|${this.processId}`, `${state}|${at}|${calls[account] ?? 0}`]));
    if (Object.keys(fields).length === 0) return;
    await ready(this.redis);
    await this.redis.multi().hset(this.key, fields).pexpire(this.key, this.intervalMs * 20).exec();
  }

  /** Publishes (and reads the fleet's entries) now and every interval; Redis errors are skipped (the next tick catches up). */
  start(): void {
    const tick = (): void => {
      void this.publish().catch(() => undefined);
      void this.refresh().catch(() => undefined);
    };
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

  /** A state changed here: tell the fleet now rather than at the next tick. */
  changed(): void {
    void this.publish().catch(() => undefined);
  }

  /** Every fresh entry on the board (stale ones are pruned). */
  async entries(): Promise<BoardEntry[]> {
    await ready(this.redis);
    const all = await this.redis.hgetall(this.key);
    const freshAfter = this.now() - 3 * this.intervalMs;
    const out: BoardEntry[] = [];
    const stale: string[] = [];
    for (const [field, value] of Object.entries(all)) {
      const cut = field.indexOf('|');
      const [state, at, lastCall] = value.split('|');
      if (Number(at) < freshAfter) {
        stale.push(field);
        continue;
      }
      out.push({ account: field.slice(0, cut), process: field.slice(cut + 1), state: state ?? '', at: Number(at), lastCallAt: Number(lastCall ?? 0) || 0 });
    }
    if (stale.length > 0) await this.redis.hdel(this.key, ...stale).catch(() => undefined);
    return out;
  }

  private async refresh(): Promise<void> {
    this.view = await this.entries();
  }

  /**
   * The accounts routing treats as open: this process's own open breakers, and those at least half
   * of the processes that called them lately see open (as last read from the board: at most one
   * interval old).
   */
  openAccounts(own: ReadonlySet<string>, windowMs: (account: string) => number): Set<string> {
    return fleetOpenAccounts(withOwnStates(this.view, this.processId, this.states()), own, { now: this.now(), freshMs: 3 * this.intervalMs, windowMs });
  }

  /** Per connector account: how many live processes report each state. */
  async read(): Promise<FleetBreakers> {
    const out: FleetBreakers = {};
    for (const e of await this.entries()) {
      const counts = (out[e.account] ??= { closed: 0, half_open: 0, open: 0 });
      if (e.state === 'closed' || e.state === 'half_open' || e.state === 'open') counts[e.state] += 1;
    }
    return out;
  }
}
