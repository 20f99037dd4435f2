import { describe, expect, it } from 'vitest';
import { LOOKUP_CLOCK_SKEW_MS, lookupWindowStart } from '../../../../src/connectors/stripe/lookup.ts';

const DAY = 86_400_000;

describe('the lookup window', () => {
  it('opens the clock skew before the first send, in unix seconds', () => {
    const sentAt = '2026-12-01T12:00:00.000Z';
    expect(lookupWindowStart(sentAt, { now: new Date('2026-12-01T12:00:30Z'), retentionMs: DAY })).toBe(Math.floor((Date.parse(sentAt) - LOOKUP_CLOCK_SKEW_MS) / 1000));
    expect(LOOKUP_CLOCK_SKEW_MS).toBe(5 * 60_000);
  });

  it('without a send time, covers everything the key could still have created', () => {
    const now = new Date('2026-12-02T12:00:00Z');
    expect(lookupWindowStart(null, { now, retentionMs: DAY })).toBe(Math.floor((now.getTime() - DAY - LOOKUP_CLOCK_SKEW_MS) / 1000));
    expect(lookupWindowStart('not a time', { now, retentionMs: DAY })).toBe(lookupWindowStart(undefined, { now, retentionMs: DAY }));
  });
});
