// unknown{card_code_gone}: the worker would not resend an authorization whose first send carried a
// card code the vault has destroyed since. The attempt remembers it (resendBlocked): a query that
// finds nothing afterwards leads to a fence, never to another authorize with that key.
import { describe, expect, it } from 'vitest';
import type { CallOutcome } from '../../../src/core/outcome.ts';
import { DEFAULT_CORE_POLICY } from '../../../src/core/index.ts';
import { makeEnv, Sim, unknown } from './fixtures.ts';

const codeGone: CallOutcome = { kind: 'unknown', reason: 'card_code_gone', detail: 'test' };

describe('unknown{card_code_gone}', () => {
  it('is never resent, also after a query finds nothing: queried, then fenced', () => {
    // Room for many resends: only resendBlocked stops them.
    const s = new Sim(makeEnv({ core: { ...DEFAULT_CORE_POLICY, maxResends: 5 } }), { routing: { snapshot: 'v', rule: 'r', candidates: ['stripe_a', 'adyen_b'], skipped: [] } });
    s.authorize(unknown('timeout'));
    const query = (): void => void s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: unknown('not_found') });
    // The core tries the same key again after the query: that resend is the one the worker refuses.
    for (let i = 0; i < 5 && s.calls('authorize').length < 2; i++) query();
    const authorizes = s.calls('authorize').length;
    expect(authorizes).toBe(2);
    s.authorize(codeGone);
    expect(s.attempt.resendBlocked).toBe(true);
    for (let i = 0; i < 5 && s.calls('fence').length === 0; i++) {
      if (s.calls('query').length > 0) query();
    }
    expect(s.calls('authorize')).toHaveLength(authorizes);
    expect(s.calls('fence')).toHaveLength(1);
    expect(s.payment.attempts).toHaveLength(1);
  });
});
