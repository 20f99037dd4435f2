// Rate-limit buckets in Redis, shared by every API process: one script call per request takes one
// unit from each of the request's buckets, or from none of them (a request refused by one bucket
// uses nothing of the others). The algorithm is GCRA, the generic cell rate algorithm (ITU-T I.371;
// as in redis-cell and Brandur Leach's "Rate limiting, cells, and GCRA"): a bucket of `quota` units
// refilled one unit every `window / quota` is stored as one number, its theoretical arrival time
// (TAT), so a bucket is one key that expires by itself when it is full again. Time is Redis's
// (`TIME` inside the script): processes whose clocks disagree still share one bucket (as the
// connector budget does, src/jobs/account-budget.ts).
//
// The buckets of one request are all named with the same hash tag (`{mer_…}`, or `{client:…}` for a
// client address), so the script's keys live in one Redis Cluster slot.
//
// A Redis that does not answer within 50 ms (down, failing over, overloaded) must not stop payments:
// the call fails open (null), each such request is counted, and the outage is logged once when it
// starts and once when Redis answers again.

import { Redis } from 'ioredis';
import type { Bucket, BucketState, LimitDecision } from './rate-limit-policy.ts';

export const RATE_LIMIT_TIMEOUT_MS = 50;

// KEYS: the buckets. ARGV: per bucket, its quota and its emission interval (µs per unit).
// Returns {allowed, remaining_1, wait_1, remaining_2, wait_2, …} (waits in µs): with allowed 1 every
// bucket took a unit and wait is until the next unit is free (0: the bucket is full); with 0 nothing
// was written, and a bucket that refused has remaining 0 and waits until the request would fit.
const TAKE = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local n = #KEYS
local tats = {}
local allowed = 1
for i = 1, n do
  local q = tonumber(ARGV[2 * i - 1])
  local T = tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  if tat < now then tat = now end
  tats[i] = tat
  if tat + T - now > q * T then allowed = 0 end
end
local out = {allowed}
for i = 1, n do
  local q = tonumber(ARGV[2 * i - 1])
  local T = tonumber(ARGV[2 * i])
  local tat = tats[i]
  if allowed == 1 then
    tat = tat + T
    redis.call('SET', KEYS[i], string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000))
  end
  local debt = tat - now
  local remaining = math.floor((q * T - debt) / T)
  if remaining < 0 then remaining = 0 end
  local wait = 0
  if debt > 0 then
    if allowed == 0 and remaining == 0 then wait = debt + T - q * T
    else wait = debt - (q - remaining - 1) * T end
  end
  out[2 * i] = remaining
  out[2 * i + 1] = wait
end
return out`;

interface RateLimitCommands {
  syRateLimitTake(numKeys: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
}

/** What the limiter reports about itself: a Prometheus counter and the log. */
export interface RateLimitObserver {
  /** A request passed without a limit because Redis did not answer (timeout, or an error). */
  failedOpen(reason: 'timeout' | 'error'): void;
  /** A request refused, by the policies that refused it. */
  limited(policies: readonly string[]): void;
}

export interface SharedRateLimiterOptions {
  readonly redisUrl: string;
  /** Key prefix (the runtime's: "sy", or a test's own). */
  readonly prefix: string;
  readonly log: (line: string) => void;
  readonly timeoutMs?: number;
}

function intervalUs(b: Bucket): number {
  return Math.max(1, Math.round((b.quota.windowS * 1_000_000) / b.quota.quota));
}

export class SharedRateLimiter {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly log: (line: string) => void;
  private readonly timeoutMs: number;
  /** Until the connection is first ready (a process just started): a call waits for it, within its timeout. */
  private firstReady: Promise<void> | null;
  /** Requests let through since the outage began; null while Redis answers. */
  private outage: { since: number; passed: number } | null = null;
  observer: RateLimitObserver | null = null;

  constructor(o: SharedRateLimiterOptions) {
    this.prefix = o.prefix;
    this.log = o.log;
    this.timeoutMs = o.timeoutMs ?? RATE_LIMIT_TIMEOUT_MS;
    // Its own connection: a limiter call must not queue behind BullMQ's traffic. No offline queue and
    // no retries: while Redis is away a call fails at once instead of waiting for a reconnect.
    this.redis = new Redis(o.redisUrl, {
      commandTimeout: this.timeoutMs,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: false,
    });
    // ioredis reconnects by itself; the outage is logged by take(), once.
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('syRateLimitTake', { lua: TAKE });
    this.firstReady = new Promise((resolve) => this.redis.once('ready', () => resolve()));
    void this.firstReady.then(() => {
      this.firstReady = null;
    });
  }

  /** Without an offline queue a call before the first connection would fail: wait for it, within the same budget. */
  private async connected(): Promise<void> {
    const first = this.firstReady;
    if (first === null) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([first, new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.timeoutMs);
    })]);
    clearTimeout(timer);
  }

  /** A key under a hash tag: `<prefix>:rl:{<tag>}:<bucket>`. Redis hashes only the part in the first braces. */
  keyOf(tag: string, bucket: Bucket): string {
    return `${this.prefix}:rl:{${tag}}:${bucket.key}`;
  }

  /**
   * Takes one unit from every bucket (all under the hash tag `tag`) or from none; null when Redis
   * did not answer in time (the request passes: fail open).
   */
  async take(tag: string, buckets: readonly Bucket[]): Promise<LimitDecision | null> {
    if (buckets.length === 0) return { allowed: true, buckets, states: [] };
    const args: (string | number)[] = [...buckets.map((b) => this.keyOf(tag, b))];
    for (const b of buckets) args.push(b.quota.quota, intervalUs(b));
    let reply: number[];
    try {
      await this.connected();
      reply = await (this.redis as unknown as RateLimitCommands).syRateLimitTake(buckets.length, ...args);
    } catch (err) {
      this.failedOpen(err);
      return null;
    }
    this.answered();
    const states: BucketState[] = buckets.map((_b, i) => ({ remaining: Number(reply[1 + 2 * i]), waitUs: Number(reply[2 + 2 * i]) }));
    const decision = { allowed: reply[0] === 1, buckets, states };
    if (!decision.allowed) this.observer?.limited(buckets.filter((_b, i) => states[i]!.remaining === 0).map((b) => b.policy));
    return decision;
  }

  private failedOpen(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const reason = /timed out/i.test(message) ? 'timeout' : 'error';
    this.observer?.failedOpen(reason);
    if (this.outage === null) {
      this.outage = { since: Date.now(), passed: 1 };
      this.log(`rate limits: Redis did not answer (${message.slice(0, 200)}): requests pass without limits until it does`);
    } else {
      this.outage.passed += 1;
    }
  }

  private answered(): void {
    if (this.outage === null) return;
    const { since, passed } = this.outage;
    this.outage = null;
    this.log(`rate limits: Redis answers again after ${Math.round((Date.now() - since) / 1000)} s; ${passed} requests passed without limits`);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
