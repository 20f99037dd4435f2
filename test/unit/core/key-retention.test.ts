// The execution-time retention check: a call that could repeat money movement is never sent once
// its key's first row is past the provider's retention minus the margin.
import { describe, expect, it } from 'vitest';
import { keyExpiredAtExecution } from '../../../src/core/key-retention.ts';
import { mayResend } from '../../../src/core/keys.ts';

const HOUR = 3_600_000;
const first = new Date('2026-12-01T00:00:00Z');
const at = (ms: number): Date => new Date(first.getTime() + ms);

describe('keyExpiredAtExecution', () => {
  it('authorize, capture and refund past retention minus the margin are not sent', () => {
    for (const op of ['authorize', 'capture', 'refund'] as const) {
      expect(keyExpiredAtExecution(op, first, at(22 * HOUR), 24 * HOUR, HOUR)).toBeNull();
      expect(keyExpiredAtExecution(op, first, at(23 * HOUR), 24 * HOUR, HOUR)).toMatch(/not sent/);
      expect(keyExpiredAtExecution(op, first, at(30 * HOUR), 24 * HOUR, HOUR)).toMatch(/not sent/);
    }
  });

  it('calls that cannot move money twice, and calls without a key, go out whatever the age', () => {
    for (const op of ['prepare', 'query', 'fence', 'release', 'void'] as const) expect(keyExpiredAtExecution(op, first, at(30 * HOUR), 24 * HOUR, HOUR)).toBeNull();
    expect(keyExpiredAtExecution('refund', null, at(30 * HOUR), 24 * HOUR, HOUR)).toBeNull();
  });

  it('a retention of seconds keeps half of its window usable (the margin is capped at half)', () => {
    expect(mayResend(first, at(4_000), 10_000, HOUR)).toBe(true);
    expect(mayResend(first, at(5_000), 10_000, HOUR)).toBe(false);
    expect(keyExpiredAtExecution('capture', first, at(6_000), 10_000, HOUR)).toMatch(/not sent/);
    // a day-long retention keeps the full hour of margin
    expect(mayResend(first, at(23 * HOUR - 1), 24 * HOUR, HOUR)).toBe(true);
  });
});
