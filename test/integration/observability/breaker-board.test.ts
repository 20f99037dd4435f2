// Breaker states of several worker processes, shared through Redis: counted per connector account
// and state; a process that stops writing drops out after three intervals; stop() removes its own.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { BreakerBoard } from '../../../src/observability/breaker-board.ts';
import { REDIS_URL } from '../helpers/runtime.ts';

const redis = new Redis(REDIS_URL);
const key = `sytest_obs_breakers_${randomBytes(4).toString('hex')}`;
afterAll(async () => {
  await redis.del(key);
  redis.disconnect();
});

describe('BreakerBoard', () => {
  it('counts the live processes in each state per connector account', async () => {
    let clock = 1_000_000;
    const now = () => clock;
    const a = new BreakerBoard(redis, key, () => ({ stripe_a: 'open', adyen_a: 'closed' }), { now, intervalMs: 1_000 });
    const b = new BreakerBoard(redis, key, () => ({ stripe_a: 'closed', adyen_a: 'closed' }), { now, intervalMs: 1_000 });
    const c = new BreakerBoard(redis, key, () => ({ stripe_a: 'half_open', adyen_a: 'closed' }), { now, intervalMs: 1_000 });
    await Promise.all([a.publish(), b.publish(), c.publish()]);
    expect(await a.read()).toEqual({ stripe_a: { closed: 1, half_open: 1, open: 1 }, adyen_a: { closed: 3, half_open: 0, open: 0 } });

    // c stops cleanly; b stops writing (killed): it counts until three intervals have passed.
    await c.stop();
    clock += 2_500;
    await a.publish();
    expect(await a.read()).toEqual({ stripe_a: { closed: 1, half_open: 0, open: 1 }, adyen_a: { closed: 2, half_open: 0, open: 0 } });
    clock += 1_000;
    await a.publish();
    expect(await a.read()).toEqual({ stripe_a: { closed: 0, half_open: 0, open: 1 }, adyen_a: { closed: 1, half_open: 0, open: 0 } });
    expect(Object.keys(await redis.hgetall(key))).toHaveLength(2);
  });
});
