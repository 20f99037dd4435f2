import { describe, expect, it } from 'vitest';
import { DEFAULT_DELIVERY_SCHEDULE, nextDeliveryAttempt, retryDelayMs } from '../../../src/webhooks/outbound/delivery-schedule.ts';

const S = DEFAULT_DELIVERY_SCHEDULE;
const DAY = 24 * 3600_000;

describe('delivery schedule', () => {
  it('doubles from the base, is capped, and jitter keeps each wait within [half, full]', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, S, () => 1))).toEqual([10_000, 20_000, 40_000, 80_000]);
    expect(retryDelayMs(30, S, () => 1)).toBe(S.capMs);
    expect(retryDelayMs(3, S, () => 0)).toBe(20_000);
    for (const r of [0, 0.3, 0.99]) {
      const d = retryDelayMs(5, S, () => r);
      expect(d).toBeGreaterThanOrEqual(80_000);
      expect(d).toBeLessThanOrEqual(160_000);
    }
  });

  it('keeps retrying for three days, then stops', () => {
    const created = new Date('2026-01-01T00:00:00Z');
    let now = created;
    let failures = 0;
    for (;;) {
      failures++;
      const next = nextDeliveryAttempt(created, failures, now, S, () => 1);
      if (next === null) break;
      now = next;
    }
    expect(now.getTime() - created.getTime()).toBeLessThanOrEqual(3 * DAY);
    expect(now.getTime() - created.getTime()).toBeGreaterThan(3 * DAY - S.capMs);
    expect(failures).toBeGreaterThan(15);
  });
});
