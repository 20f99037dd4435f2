// Issue 44: a vaulted card's code is destroyed at the first authorization response, so a failover
// after the issuer answered skips a connector that refuses a card without its code (routing.skipped);
// before any answer (unknown outcomes, within the hour) the code may still go.
import { describe, expect, it } from 'vitest';
import { nextCandidate } from '../../../src/core/failover.ts';
import type { Attempt } from '../../../src/core/payment.ts';
import { ADYEN_LIKE, STRIPE_LIKE } from './fixtures.ts';

const NEEDS_CODE = { ...ADYEN_LIKE, capabilities: { ...ADYEN_LIKE.capabilities, requiresCardCode: true } };

function attempt(over: Partial<Attempt>): Attempt {
  return { id: 'att_1', connector: 'stripe_a', status: 'declined', lastOutcome: 'declined', ...over } as Attempt;
}

const input = (attempts: Attempt[], vaultedCard: boolean) => ({
  attempts, candidates: ['stripe_a', 'strict_b', 'stripe_c'], openBreakers: new Set<string>(),
  policies: { stripe_a: STRIPE_LIKE, strict_b: NEEDS_CODE, stripe_c: STRIPE_LIKE }, captureMethod: 'manual' as const, vaultedCard,
});

describe('failover of a vaulted card once its code is gone', () => {
  it('after a decline, a connector that needs the code is skipped, named in skipped', () => {
    const next = nextCandidate(input([attempt({})], true));
    expect(next).toEqual({ connector: 'stripe_c', skipped: [{ connector: 'strict_b', reason: 'needs the card code, destroyed at an earlier authorization response' }] });
  });

  it('after an outcome nobody knows (no issuer answer), the code may still go: not skipped', () => {
    expect(nextCandidate(input([attempt({ status: 'abandoned', lastOutcome: 'unknown' })], true)).connector).toBe('strict_b');
  });

  it('tokens and test cards are not vaulted cards: never skipped for the code', () => {
    expect(nextCandidate(input([attempt({})], false)).connector).toBe('strict_b');
  });
});
