// One budget per connector account, shared by every process and by both ways a provider call is
// made (the process that committed it, and a BullMQ worker): at most `concurrency` calls in flight
// and `ratePerS` started per second, fleet-wide. Kept in Redis as a sorted set of slot holders
// scored by when their lease ends (a process killed mid-call frees its slot when the lease ends),
// and a counter per second. One Lua script takes a slot atomically. The lease is short and renewed
// while the call runs (as outbox claims are), so a killed process's slots are free within one lease.
//
// BullMQ's own limiter only governs jobs taken from its queue; calls made at commit would bypass it.

import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface AccountLimits {
  readonly concurrency: number;
  readonly ratePerS: number;
}

// KEYS[1] holders (zset: holder -> lease end ms), KEYS[2] this second's counter.
// ARGV: now ms, lease ms, concurrency, rate per s, holder id. Returns 1 taken, 0 no slot, -1 rate reached.
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
local n = redis.call('INCR', KEYS[2])
if n == 1 then redis.call('PEXPIRE', KEYS[2], 2000) end
if n > tonumber(ARGV[4]) then return -1 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[5])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1`;

export type TakeResult = { readonly ok: true; readonly release: () => Promise<void> } | { readonly ok: false; readonly reason: 'concurrency' | 'rate' };

export interface AccountBudgetOptions {
  /** How long a slot outlives its holder: renewed every third of it while held. Default 10 s. */
  readonly leaseMs?: number;
  readonly now?: () => number;
}

export class AccountBudget {
  private readonly leaseMs: number;
  private readonly now: () => number;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limits: Readonly<Record<string, AccountLimits>>,
    o: AccountBudgetOptions = {},
  ) {
    this.leaseMs = o.leaseMs ?? 10_000;
    this.now = o.now ?? Date.now;
    redis.defineCommand('syBudgetTake', { numberOfKeys: 2, lua: TAKE });
  }

  /** A slot for one call to `account` now, or why not. Accounts without limits always get one. */
  async tryTake(account: string): Promise<TakeResult> {
    const limits = this.limits[account];
    if (limits === undefined) return { ok: true, release: () => Promise.resolve() };
    const now = this.now();
    const holder = `${randomUUID()}`;
    const holders = `${this.prefix}:budget:${account}:holders`;
    const second = `${this.prefix}:budget:${account}:rate:${Math.floor(now / 1000)}`;
    const r = await (this.redis as unknown as { syBudgetTake(...a: (string | number)[]): Promise<number> }).syBudgetTake(holders, second, now, this.leaseMs, limits.concurrency, limits.ratePerS, holder);
    if (r !== 1) return { ok: false, reason: r === 0 ? 'concurrency' : 'rate' };
    const renew = setInterval(() => {
      // XX: only a slot still held is extended (a released or expired one is not taken back).
      void this.redis.zadd(holders, 'XX', this.now() + this.leaseMs, holder).catch(() => undefined);
    }, Math.max(50, Math.floor(this.leaseMs / 3)));
    renew.unref();
    return {
      ok: true,
      release: async () => {
        clearInterval(renew);
        await this.redis.zrem(holders, holder);
      },
    };
  }

  /**
   * Waits for a slot (the worker path: its job already holds the row), polling with jitter.
   * Null after `maxWaitMs`: the caller gives the row back for later.
   */
  async take(account: string, maxWaitMs: number, signal?: { stopped: boolean }): Promise<(() => Promise<void>) | null> {
    const deadline = this.now() + maxWaitMs;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      const t = await this.tryTake(account);
      if (t.ok) return t.release;
      if (this.now() >= deadline || signal?.stopped === true) return null;
      // A rate refusal frees at the next second; a slot when any call ends.
      await new Promise((r) => setTimeout(r, t.reason === 'rate' ? Math.max(5, 1000 - (this.now() % 1000)) : pause + Math.random() * pause));
    }
  }

  /** Calls in flight now (tests, the dashboard). */
  async inFlight(account: string): Promise<number> {
    const holders = `${this.prefix}:budget:${account}:holders`;
    await this.redis.zremrangebyscore(holders, '-inf', this.now());
    return this.redis.zcard(holders);
  }
}
