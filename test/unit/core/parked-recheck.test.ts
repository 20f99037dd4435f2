// Issue 41 §6: a payment parked for review is asked about again (the recovery sweeper's
// parked_recheck): what the provider can tell is asked once more, and its answer un-parks the
// payment by the same transition rules as any late answer; one that still says nothing parks it again.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CORE_POLICY } from '../../../src/core/index.ts';
import type { PaymentInput } from '../../../src/core/index.ts';
import { approved, makeEnv, Sim, unknown, lookupAnswer } from './fixtures.ts';

const recheck: PaymentInput = { type: 'timer_fired', timer: 'parked_recheck' };

function parkedCapture(connector: 'stripe_a' | 'adyen_b' = 'stripe_a'): Sim {
  const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: [connector], skipped: [] } });
  s.authorize(approved(1000, 'pi_1'));
  s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
  for (let i = 0; i <= DEFAULT_CORE_POLICY.maxResends; i++) s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: unknown() });
  s.lookupsFindNothing();
  expect(s.state).toBe('needs_review');
  return s;
}

describe('a parked payment is asked about again', () => {
  it('a capture parked unknown: looked up again; the provider captured it: captured, un-parked', () => {
    const s = parkedCapture();
    const before = s.calls('lookup').length;
    s.apply(recheck);
    expect(s.calls('lookup')).toHaveLength(before + 1);
    expect(s.calls('lookup').at(-1)!.lookup).toMatchObject({ op: 'capture', captureId: 'cap_1', n: 1 });
    s.apply(lookupAnswer(s.calls('lookup').at(-1)!, approved(1000, 'pi_1')));
    expect(s.state).toBe('captured');
    expect(s.payment.amountCaptured).toBe(1000);
    // The open capture_unresolved row has its answer: resolved by the gateway, not left for a person.
    expect(s.effects).toContainEqual({ type: 'discrepancy_settled', kind: 'capture_unresolved', attemptId: s.attempt.id, subject: 'cap_1', resolution: 'settled by the provider: capture 1 succeeded' });
  });

  it('a lookup that still finds nothing parks it again', () => {
    const s = parkedCapture();
    s.apply(recheck);
    s.lookupsFindNothing();
    expect(s.state).toBe('needs_review');
    expect(s.payment.captures[0]!.status).toBe('pending');
  });

  it('an attempt parked with its authorization unknown is queried again; its approval un-parks the payment', () => {
    const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: ['stripe_a'], skipped: [] } });
    s.prepared();
    for (let i = 0; i < 30 && s.state !== 'needs_review'; i++) {
      const last = s.effects.at(-1);
      if (last?.type === 'provider_call' && last.op === 'query') s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: unknown() });
      else if (last?.type === 'provider_call' && last.op === 'fence') s.apply({ type: 'call_result', ref: { op: 'fence', attemptId: s.attempt.id }, outcome: unknown() });
      else if (last?.type === 'timer' && last.timer === 'query') s.apply({ type: 'timer_fired', timer: 'query', attemptId: s.attempt.id });
      else s.apply({ type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id, sendNo: s.attempt.sends }, outcome: unknown() });
    }
    expect(s.state).toBe('needs_review');
    expect(s.attempt.status).toBe('review');
    const queries = s.calls('query').length;
    s.apply(recheck);
    expect(s.calls('query')).toHaveLength(queries + 1);
    s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: approved(1000, 'pi_1') });
    expect(s.state).toBe('authorized');
  });

  it('nothing to ask (Adyen reads no objects back, and has no query): a no-op, still parked', () => {
    const s = parkedCapture('adyen_b');
    expect(s.apply(recheck).kind).toBe('noop');
    expect(s.state).toBe('needs_review');
  });

  it('a payment that is not parked is left alone', () => {
    const s = new Sim(makeEnv());
    s.authorize(approved());
    expect(s.apply(recheck).kind).toBe('noop');
  });
});
