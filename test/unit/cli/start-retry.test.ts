// What start-up waits out and what it refuses at once, and how long it waits between tries.
import { describe, expect, it } from 'vitest';
import { backoffMs, retryStart, StartGaveUpError } from '../../../src/cli/start-retry.ts';
import { isTransientStartError } from '../../../src/cli/transient-errors.ts';

const pgError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

describe('isTransientStartError', () => {
  it('a terminated backend, a refused socket or a dropped connection heals, also when wrapped', () => {
    expect(isTransientStartError(pgError('57P01', 'terminating connection due to administrator command'))).toBe(true);
    expect(isTransientStartError(pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))).toBe(true);
    expect(isTransientStartError(pgError('08006', 'connection failure'))).toBe(true);
    // drizzle's "Failed query: begin" wraps node-postgres's codeless message.
    expect(isTransientStartError(new Error('Failed query: begin\nparams: ', { cause: new Error('Connection terminated unexpectedly') }))).toBe(true);
  });

  it('bad credentials, a missing database, a bad config or an unknown error do not', () => {
    expect(isTransientStartError(pgError('28P01', 'password authentication failed for user "me"'))).toBe(false);
    expect(isTransientStartError(pgError('28000', 'role "nobody" does not exist'))).toBe(false);
    expect(isTransientStartError(pgError('3D000', 'database "x" does not exist'))).toBe(false);
    expect(isTransientStartError(Object.assign(new Error('connectors.stripe_a.type: invalid'), { name: 'ConfigError' }))).toBe(false);
    expect(isTransientStartError(new Error('migration 0003_x was changed after it was applied'))).toBe(false);
  });
});

describe('retryStart', () => {
  function clock(): { now: () => number; sleep: (ms: number) => Promise<void>; slept: number[] } {
    let t = 1_000;
    const slept: number[] = [];
    return { now: () => t, sleep: async (ms) => { slept.push(ms); t += ms; }, slept };
  }

  it('retries transient failures with growing, jittered, capped delays until it works', async () => {
    const c = clock();
    const lines: string[] = [];
    let calls = 0;
    const r = await retryStart('PostgreSQL', async () => {
      calls += 1;
      if (calls < 6) throw pgError('57P01', 'terminating connection due to administrator command');
      return 'up';
    }, { startedAt: c.now(), timeoutMs: 60_000, log: (l) => lines.push(l), random: () => 0.5, now: c.now, sleep: c.sleep, firstDelayMs: 200, maxDelayMs: 1_000 });
    expect(r).toBe('up');
    expect(c.slept).toEqual([150, 300, 600, 750, 750]);
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe('start: PostgreSQL not available, retry 1 in 0.1 s (60 s left): terminating connection due to administrator command (57P01)');
  });

  it('throws a permanent failure at once, without a retry line', async () => {
    const c = clock();
    const lines: string[] = [];
    const refused = pgError('28P01', 'password authentication failed');
    await expect(retryStart('PostgreSQL', () => Promise.reject(refused), { startedAt: c.now(), timeoutMs: 60_000, log: (l) => lines.push(l), now: c.now, sleep: c.sleep })).rejects.toBe(refused);
    expect(lines).toEqual([]);
  });

  it('gives up at the deadline with one line saying how long it tried', async () => {
    const c = clock();
    const err = await retryStart('Redis', () => Promise.reject(pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:6379')), { startedAt: c.now(), timeoutMs: 10_000, log: () => undefined, now: c.now, sleep: c.sleep }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartGaveUpError);
    expect((err as Error).message).toMatch(/^connect ECONNREFUSED 127\.0\.0\.1:6379 \(still failing after 10 s and \d+ attempts; SWITCHYARD_START_TIMEOUT sets how long to wait\)$/);
    expect(c.now() - 1_000).toBe(10_000);
  });

  it('backoff stays between half and all of the capped exponential', () => {
    for (let a = 1; a < 40; a++) {
      const cap = Math.min(5_000, 250 * 2 ** (a - 1));
      expect(backoffMs(a, 250, 5_000, () => 0)).toBe(Math.round(cap / 2));
      expect(backoffMs(a, 250, 5_000, () => 0.999999)).toBeLessThanOrEqual(cap);
    }
  });
});
