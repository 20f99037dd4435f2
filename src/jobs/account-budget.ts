// One budget per connector account, shared by every process and by both ways a provider call is
// made (the process that committed it, and a BullMQ worker): at most `concurrency` calls in flight
// and `ratePerS` started per second, fleet-wide. Kept in Redis as a sorted set of slot holders
// scored by when their lease ends (a process killed mid-call frees its slot when the lease ends),
// and a counter for the current second. One Lua script takes a slot atomically. The lease is short
// and renewed while the call runs (as outbox claims are), so a killed process's slots are free
// within one lease.
//
// Every score and every second is Redis's clock (`TIME`, read inside the scripts), never a
// process's own: a process whose clock ran ahead would otherwise evict every other holder as
// expired and take their slots, one whose clock lagged would hold slots others take as long gone,
// and each would count its starts in a second of its own (issue 41).
//
// BullMQ's own limiter only governs jobs taken from its queue; calls made at commit would bypass it.

import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface AccountLimits {
  readonly concurrency: number;
  readonly ratePerS: number;
}

// Redis's clock in milliseconds: TIME is whole seconds and microseconds.
const REDIS_NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// KEYS[1] holders (zset: holder -> lease end, Redis ms), KEYS[2] this second's count ("<second>:<n>").
// ARGV: lease ms, concurrency, rate per s, holder id. Returns {1, 0} taken, {0, 0} no slot,
// {-1, ms until the next second} rate reached.
const TAKE = `${REDIS_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return {0, 0} end
local second = math.floor(now / 1000)
local n = 1
local counted = redis.call('GET', KEYS[2])
if counted then
  local s, c = string.match(counted, '^(%d+):(%d+)$')
  if tonumber(s) == second then n = tonumber(c) + 1 end
end
if n > tonumber(ARGV[3]) then return {-1, 1000 - (now % 1000)} end
redis.call('SET', KEYS[2], string.format('%d:%d', second, n), 'PX', 2000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
return {1, 0}`;

// KEYS[1] holders; ARGV: lease ms, holder id. XX: only a slot still held is extended (a released or expired one is not taken back).
const RENEW = `${REDIS_NOW}
local renewed = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
return renewed`;

// KEYS[1] holders: the slots held now.
const HELD = `${REDIS_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])`;

interface BudgetCommands {
  syBudgetTake(holders: string, second: string, leaseMs: number, concurrency: number, ratePerS: number, holder: string): Promise<[number, number]>;
  syBudgetRenew(holders: string, leaseMs: number, holder: string): Promise<number>;
  syBudgetHeld(holders: string): Promise<number>;
}

export type TakeResult =
  | { readonly ok: true; readonly release: () => Promise<void> }
  | { readonly ok: false; readonly reason: 'concurrency' }
  | { readonly ok: false; readonly reason: 'rate'; readonly retryInMs: number };

export interface AccountBudgetOptions {
  /** How long a slot outlives its holder: renewed every third of it while held. Default 10 s. */
  readonly leaseMs?: number;
  /** This process's clock: only for how long take() waits (slots are scored on Redis's clock). */
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
    redis.defineCommand('syBudgetRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('syBudgetHeld', { numberOfKeys: 1, lua: HELD });
  }

  private get commands(): BudgetCommands {
    return this.redis as unknown as BudgetCommands;
  }

  /** A slot for one call to `account` now, or why not (with a rate refusal, how long until the next second). */
  async tryTake(account: string): Promise<TakeResult> {
    const limits = this.limits[account];
    if (limits === undefined) return { ok: true, release: () => Promise.resolve() };
    const holder = `${randomUUID()}`;
    const holders = `${this.prefix}:budget:${account}:holders`;
    const second = `${this.prefix}:budget:${account}:rate`;
    const [r, waitMs] = await this.commands.syBudgetTake(holders, second, this.leaseMs, limits.concurrency, limits.ratePerS, holder);
    if (r !== 1) return r === 0 ? { ok: false, reason: 'concurrency' } : { ok: false, reason: 'rate', retryInMs: Number(waitMs) };
    const renew = setInterval(() => {
      void this.commands.syBudgetRenew(holders, this.leaseMs, holder).catch(() => undefined);
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
      // A rate refusal frees at the next second (of Redis's clock); a slot when any call ends.
      await new Promise((r) => setTimeout(r, t.reason === 'rate' ? Math.max(5, t.retryInMs) : pause + Math.random() * pause));
    }
  }

  /** Calls in flight now (tests, the dashboard). */
  async inFlight(account: string): Promise<number> {
    return this.commands.syBudgetHeld(`${this.prefix}:budget:${account}:holders`);
  }
}
