import { describe, expect, it } from 'vitest';
import { backoffDelayMs, isId, mayResend, newId, providerIdempotencyKey } from '../../../src/core/index.ts';

describe('provider idempotency keys', () => {
  it('derive from the logical operation', () => {
    expect(providerIdempotencyKey('pay_1', 'auth', 2, 255)).toBe('pay_1:auth:2');
    expect(providerIdempotencyKey('pay_1', 'capture', 1, 255)).toBe('pay_1:capture:1');
  });

  it('are shortened by a stable hash, never truncated, when too long', () => {
    const id = newId('payment', 0);
    const long = providerIdempotencyKey(id, 'refund', 12, 24);
    expect(long).toHaveLength(24);
    expect(long.startsWith('sy1_')).toBe(true);
    expect(providerIdempotencyKey(id, 'refund', 12, 24)).toBe(long);
    expect(providerIdempotencyKey(id, 'refund', 13, 24)).not.toBe(long);
    expect(long).not.toBe(`${id}:refund:12`.slice(0, 24));
  });

  it('refuse nonsense operation numbers and limits', () => {
    expect(() => providerIdempotencyKey('pay_1', 'auth', 0, 64)).toThrow('positive integer');
    expect(() => providerIdempotencyKey('pay_1', 'auth', 1, 8)).toThrow('at least 16');
  });
});

describe('mayResend', () => {
  const sent = new Date('2026-01-01T00:00:00Z');
  const day = 86_400_000;
  it('allows a resend only inside retention minus margin', () => {
    expect(mayResend(sent, new Date(sent.getTime() + day - 2 * 3_600_000), day, 3_600_000)).toBe(true);
    expect(mayResend(sent, new Date(sent.getTime() + day - 3_600_000), day, 3_600_000)).toBe(false);
    expect(mayResend(sent.toISOString(), new Date(sent.getTime() + 2 * day), day, 0)).toBe(false);
    expect(mayResend(null, new Date(sent.getTime() + 9 * day), day, 0)).toBe(true);
  });
});

describe('backoff', () => {
  it('grows, is capped, and jitters deterministically within 50-100%', () => {
    for (let n = 1; n < 20; n++) {
      const v = backoffDelayMs(n, 1000, 60_000, 'seed');
      const full = Math.min(60_000, 1000 * 2 ** (n - 1));
      expect(v).toBeGreaterThanOrEqual(full / 2);
      expect(v).toBeLessThanOrEqual(full);
      expect(backoffDelayMs(n, 1000, 60_000, 'seed')).toBe(v);
    }
  });
});

describe('ids', () => {
  it('are prefixed and sort by creation time', () => {
    const a = newId('payment', 1_000);
    const b = newId('payment', 2_000);
    expect(isId('payment', a)).toBe(true);
    expect(isId('refund', a)).toBe(false);
    expect(a < b).toBe(true);
  });
});
