// The fleet-wide account budget (src/jobs/account-budget.ts) scores slot holders and counts starts
// on Redis's clock: a process whose own clock is skewed must neither steal the slots of the others
// (its "now" past their lease ends) nor hold slots they take as long expired, nor count its starts
// in a second of its own. Two budgets on one Redis, one of them with a clock 10 minutes off.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountBudget } from '../../../src/jobs/account-budget.ts';
import type { AccountLimits } from '../../../src/jobs/account-budget.ts';
import { REDIS_URL } from '../helpers/runtime.ts';
import { until } from '../helpers/until.ts';

const SKEW_MS = 10 * 60_000;
let redis: Redis;

beforeAll(() => {
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  await redis?.quit();
});

/** Two processes' budgets for one account on one Redis: one on the right clock, one on `skewMs` off it. */
function fleet(limits: AccountLimits, skewMs: number, leaseMs = 10_000): { right: AccountBudget; skewed: AccountBudget; holders: string } {
  const prefix = `sytest_budget_${randomBytes(3).toString('hex')}`;
  return {
    right: new AccountBudget(redis, prefix, { acc: limits }, { leaseMs }),
    skewed: new AccountBudget(redis, prefix, { acc: limits }, { leaseMs, now: () => Date.now() + skewMs }),
    holders: `${prefix}:budget:acc:holders`,
  };
}

const redisMs = async (): Promise<number> => {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
};

const redisSecond = async (): Promise<number> => Number((await redis.time())[0]);

describe('account budget across processes with skewed clocks', () => {
  it('a process whose clock runs ahead does not take the slot another holds', async () => {
    const { right, skewed } = fleet({ concurrency: 1, ratePerS: 1_000 }, SKEW_MS);
    const held = await right.tryTake('acc');
    expect(held.ok).toBe(true);
    expect(await skewed.tryTake('acc')).toMatchObject({ ok: false, reason: 'concurrency' });
    expect(await skewed.inFlight('acc')).toBe(1);
    if (held.ok) await held.release();
    const next = await skewed.tryTake('acc');
    expect(next.ok).toBe(true);
    if (next.ok) await next.release();
  });

  it('a process whose clock lags keeps its slot: the others do not take it as expired', async () => {
    const { right, skewed } = fleet({ concurrency: 1, ratePerS: 1_000 }, -SKEW_MS);
    const held = await skewed.tryTake('acc');
    expect(held.ok).toBe(true);
    expect(await right.tryTake('acc')).toMatchObject({ ok: false, reason: 'concurrency' });
    expect(await right.inFlight('acc')).toBe(1);
    if (held.ok) await held.release();
  });

  it('both count their starts in the same second', async () => {
    const { right, skewed } = fleet({ concurrency: 100, ratePerS: 3 }, SKEW_MS);
    for (let tryNo = 1; ; tryNo++) {
      // All four takes in one second of Redis's clock, or the counts rightly start again: try again.
      const before = await redisSecond();
      const taken = [await right.tryTake('acc'), await right.tryTake('acc'), await right.tryTake('acc')];
      const fourth = await skewed.tryTake('acc');
      const inOneSecond = (await redisSecond()) === before;
      for (const t of [...taken, fourth]) if (t.ok) await t.release();
      if (!inOneSecond && tryNo < 5) {
        await new Promise((r) => setTimeout(r, 1_000));
        continue;
      }
      expect(taken.every((t) => t.ok)).toBe(true);
      expect(fourth).toMatchObject({ ok: false, reason: 'rate' });
      return;
    }
  });

  it('a slot renewed while its call runs is extended on Redis\'s clock', async () => {
    const { skewed, holders } = fleet({ concurrency: 1, ratePerS: 1_000 }, SKEW_MS, 300);
    const held = await skewed.tryTake('acc');
    expect(held.ok).toBe(true);
    const [, first] = await redis.zrange(holders, 0, 0, 'WITHSCORES');
    const renewed = await until(() => redis.zrange(holders, 0, 0, 'WITHSCORES'), ([, score]) => score !== undefined && score !== first, 'the slot renewed');
    expect(Number(renewed[1]) - (await redisMs())).toBeLessThanOrEqual(300);
    if (held.ok) await held.release();
  });
});
