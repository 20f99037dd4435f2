// The rate-limit buckets in Redis (src/api/shared-rate-limit.ts), on the real Redis with this file's
// own key prefix: two limiters on two connections (as two API processes) draw from one bucket; a
// request takes a unit from every bucket or from none; the keys sit under the merchant's hash tag and
// expire once full again; a bucket refills at quota/window. A private redis-server for the outages:
// paused (CLIENT PAUSE) the call gives up after 50 ms, stopped it fails at once; either way the
// request passes (null), is counted, and the outage is logged once, and its end once.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/core/ids.ts';
import type { Bucket } from '../../../src/api/rate-limit-policy.ts';
import { SharedRateLimiter } from '../../../src/api/shared-rate-limit.ts';
import { REDIS_URL } from '../helpers/runtime.ts';
import { startPrivateRedis } from '../helpers/redis-server.ts';
import type { PrivateRedis } from '../helpers/redis-server.ts';

const prefix = `sytest_rl_${randomBytes(3).toString('hex')}`;
const bucket = (key: string, quota: number, windowS: number, policy = key): Bucket => ({ policy, key, quota: { quota, windowS } });

let a: SharedRateLimiter;
let b: SharedRateLimiter;
let redis: Redis;

beforeAll(() => {
  a = new SharedRateLimiter({ redisUrl: REDIS_URL, prefix, log: () => undefined });
  b = new SharedRateLimiter({ redisUrl: REDIS_URL, prefix, log: () => undefined });
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await Promise.all([a.close(), b.close(), redis.quit()]);
});

describe('shared buckets', () => {
  it('two limiters draw from one bucket: the quota holds across both, and another merchant is untouched', async () => {
    const m = newId('merchant');
    const other = newId('merchant');
    const buckets = [bucket('merchant', 5, 60)];
    const seen: number[] = [];
    for (const limiter of [a, b, a, b, b]) {
      const d = await limiter.take(m, buckets);
      expect(d?.allowed).toBe(true);
      seen.push(d!.states[0]!.remaining);
    }
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    for (const limiter of [a, b]) {
      const refused = await limiter.take(m, buckets);
      expect(refused?.allowed).toBe(false);
      expect(refused!.states[0]!.remaining).toBe(0);
      // One unit comes back every 60/5 = 12 s: the refused request fits within that.
      expect(refused!.states[0]!.waitUs).toBeGreaterThan(10_000_000);
      expect(refused!.states[0]!.waitUs).toBeLessThanOrEqual(12_000_000);
    }
    const fresh = await b.take(other, buckets);
    expect(fresh).toMatchObject({ allowed: true, states: [{ remaining: 4 }] });
  });

  it('all or nothing: a request one bucket refuses takes nothing from the others', async () => {
    const m = newId('merchant');
    const merchant = bucket('merchant', 10, 60);
    const create = bucket('op:create', 2, 60, 'create');
    expect((await a.take(m, [merchant, create]))?.allowed).toBe(true);
    expect((await b.take(m, [merchant, create]))?.allowed).toBe(true);
    const refused = await a.take(m, [merchant, create]);
    expect(refused).toMatchObject({ allowed: false, states: [{ remaining: 8 }, { remaining: 0 }] });
    // The merchant's bucket kept its 8: a read (no create bucket) takes the ninth-last.
    expect(await b.take(m, [merchant, bucket('op:read', 100, 60, 'read')])).toMatchObject({ allowed: true, states: [{ remaining: 7 }, { remaining: 99 }] });
  });

  it('keys are under the merchant hash tag (one Redis Cluster slot) and expire once the bucket is full again', async () => {
    const m = newId('merchant');
    await a.take(m, [bucket('merchant', 10, 2), bucket('key:h_x', 10, 2), bucket('op:read', 10, 2)]);
    const keys = (await redis.keys(`${prefix}:rl:*${m}*`)).sort();
    expect(keys).toEqual([`${prefix}:rl:{${m}}:key:h_x`, `${prefix}:rl:{${m}}:merchant`, `${prefix}:rl:{${m}}:op:read`]);
    // Redis Cluster hashes the first {…} of a key: the same for all three.
    expect(new Set(keys.map((k) => /\{([^}]+)\}/.exec(k)![1]))).toEqual(new Set([m]));
    for (const k of keys) {
      const ttl = await redis.pttl(k);
      // One unit taken from a bucket of 10 per 2 s: full again in 200 ms.
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(200);
    }
  });

  it('refills evenly over the window', async () => {
    const m = newId('merchant');
    const fast = [bucket('merchant', 2, 1)];
    expect((await a.take(m, fast))?.allowed).toBe(true);
    expect((await a.take(m, fast))?.allowed).toBe(true);
    const refused = await b.take(m, fast);
    expect(refused?.allowed).toBe(false);
    await new Promise((r) => setTimeout(r, Math.ceil(refused!.states[0]!.waitUs / 1000) + 20));
    expect((await b.take(m, fast))?.allowed).toBe(true);
  });
});

describe('when Redis does not answer', () => {
  let priv: PrivateRedis;
  let limiter: SharedRateLimiter;
  const logs: string[] = [];
  const failed: string[] = [];

  beforeAll(async () => {
    priv = await startPrivateRedis();
    limiter = new SharedRateLimiter({ redisUrl: priv.url, prefix, log: (l) => logs.push(l) });
    limiter.observer = { failedOpen: (r) => failed.push(r), limited: () => undefined };
  });
  afterAll(async () => {
    await limiter.close();
    await priv.stop();
  });

  it('gives up after 50 ms when paused, fails at once when down; requests pass, counted, logged once per outage', async () => {
    const m = newId('merchant');
    const buckets = [bucket('merchant', 1, 60)];
    expect((await limiter.take(m, buckets))?.allowed).toBe(true);
    expect((await limiter.take(m, buckets))?.allowed).toBe(false);

    const admin = new Redis(priv.url);
    await admin.client('PAUSE', 600, 'ALL');
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      expect(await limiter.take(m, buckets)).toBeNull();
      expect(performance.now() - started).toBeLessThan(250);
    }
    expect(failed).toEqual(['timeout', 'timeout', 'timeout']);
    expect(logs.filter((l) => l.includes('Redis did not answer'))).toHaveLength(1);

    // Paused no more: the bucket is still there (and still empty), and the end of the outage is logged once.
    await new Promise((r) => setTimeout(r, 700));
    expect((await limiter.take(m, buckets))?.allowed).toBe(false);
    expect(logs.filter((l) => l.includes('answers again'))).toEqual([expect.stringContaining('3 requests passed without limits')]);
    admin.disconnect();

    await priv.stop();
    const started = performance.now();
    expect(await limiter.take(m, buckets)).toBeNull();
    expect(await limiter.take(m, buckets)).toBeNull();
    expect(performance.now() - started).toBeLessThan(250);
    expect(failed.slice(3)).toEqual(['error', 'error']);
    expect(logs.filter((l) => l.includes('Redis did not answer'))).toHaveLength(2);
  });
});
