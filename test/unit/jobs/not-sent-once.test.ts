// A refusal proves "never sent" only on a call's first execution: a re-run after a crash between
// the call and its recording may follow a send that reached the provider.
import { describe, expect, it } from 'vitest';
import type { ProviderCallEffect } from '../../../src/core/effects.ts';
import type { CallOutcome } from '../../../src/core/outcome.ts';
import { notSentOnlyOnce } from '../../../src/jobs/outbox-processor.ts';

const effect = (op: ProviderCallEffect['op']): ProviderCallEffect => ({
  type: 'provider_call', op, connector: 'stripe_a', attemptId: 'att_1', providerKey: op === 'query' ? null : 'k', amount: 100, currency: 'USD', sendNo: 1,
});
const refused: CallOutcome = { kind: 'not_sent', reason: 'connection_refused' };

describe('notSentOnlyOnce', () => {
  it('keeps a refusal on the first execution as proof', () => {
    expect(notSentOnlyOnce(refused, effect('authorize'), 1)).toEqual(refused);
  });

  it('turns a refusal on a re-execution into unknown, for every money-moving call', () => {
    for (const op of ['authorize', 'capture', 'refund', 'void', 'fence', 'release', 'prepare'] as const) {
      const out = notSentOnlyOnce(refused, effect(op), 2);
      expect(out.kind, op).toBe('unknown');
      expect(out.kind === 'unknown' && out.reason).toBe('earlier_execution');
    }
  });

  it('leaves reads and answers that are not refusals alone', () => {
    expect(notSentOnlyOnce(refused, effect('query'), 3)).toEqual(refused);
    const ok: CallOutcome = { kind: 'succeeded', amount: 100, currency: 'USD', providerRef: 'pi_1' };
    expect(notSentOnlyOnce(ok, effect('authorize'), 3)).toEqual(ok);
  });
});
