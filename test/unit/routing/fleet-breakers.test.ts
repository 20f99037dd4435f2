import { describe, expect, it } from 'vitest';
import { fleetOpenAccounts, withOwnStates } from '../../../src/routing/fleet-breakers.ts';
import type { BoardEntry } from '../../../src/routing/fleet-breakers.ts';

const now = 1_000_000;
const view = { now, freshMs: 3_000, windowMs: () => 10_000 };
const e = (process: string, state: string, over: Partial<BoardEntry> = {}): BoardEntry => ({ account: 'stripe_a', process, state, at: now - 500, lastCallAt: now - 1_000, ...over });

describe('fleetOpenAccounts', () => {
  it("this process's own open breaker always counts", () => {
    expect([...fleetOpenAccounts([], new Set(['stripe_a']), view)]).toEqual(['stripe_a']);
  });
  it('one caller: its state; two: either; three: at least two', () => {
    expect(fleetOpenAccounts([e('p1', 'open')], new Set(), view).has('stripe_a')).toBe(true);
    expect(fleetOpenAccounts([e('p1', 'open'), e('p2', 'closed')], new Set(), view).has('stripe_a')).toBe(true);
    expect(fleetOpenAccounts([e('p1', 'open'), e('p2', 'closed'), e('p3', 'closed')], new Set(), view).has('stripe_a')).toBe(false);
    expect(fleetOpenAccounts([e('p1', 'open'), e('p2', 'open'), e('p3', 'closed')], new Set(), view).has('stripe_a')).toBe(true);
    expect(fleetOpenAccounts([e('p1', 'half_open'), e('p2', 'closed')], new Set(), view).has('stripe_a')).toBe(false);
  });
  it('only processes that called within the window, and whose entry is fresh, have a say', () => {
    const quiet = e('p2', 'closed', { lastCallAt: now - 60_000 });
    const never = e('p3', 'closed', { lastCallAt: 0 });
    expect(fleetOpenAccounts([e('p1', 'open'), e('p4', 'closed'), e('p5', 'closed'), quiet, never], new Set(), view).has('stripe_a')).toBe(false);
    expect(fleetOpenAccounts([e('p1', 'open'), e('p4', 'closed'), quiet, never], new Set(), view).has('stripe_a')).toBe(true);
    expect(fleetOpenAccounts([e('p1', 'open', { at: now - 10_000 })], new Set(), view).has('stripe_a')).toBe(false);
    expect(fleetOpenAccounts([e('p1', 'open', { lastCallAt: now - 20_000 })], new Set(), view).has('stripe_a')).toBe(false);
  });
  it("this process counts with its breaker as it is now, not its last published entry (half-open since the last tick)", () => {
    const stale = [e('self', 'open'), e('p2', 'closed', { account: 'stripe_b' })];
    expect(fleetOpenAccounts(stale, new Set(), view).has('stripe_a')).toBe(true);
    const live = withOwnStates(stale, 'self', { stripe_a: 'half_open' });
    expect(live).toEqual([e('self', 'half_open'), e('p2', 'closed', { account: 'stripe_b' })]);
    expect(fleetOpenAccounts(live, new Set(), view).has('stripe_a')).toBe(false);
    // Another process's entry is what it published: only its own tick updates it.
    expect(withOwnStates([e('p2', 'open')], 'self', { stripe_a: 'closed' })).toEqual([e('p2', 'open')]);
  });
});
