// Issue 41 §6: a capture, void or refund whose outcome stays unknown (its same-key resends spent, or
// its key past the provider's retention) is looked up before it is parked: the provider's object says
// what happened, and only lookups that stay inconclusive past their bound park it for a person.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CORE_POLICY } from '../../../src/core/index.ts';
import { LOOKUP_BACKOFF_CAP_MS } from '../../../src/core/lookup-effect.ts';
import type { CallOutcome, ProviderCallEffect } from '../../../src/core/index.ts';
import { approved, makeEnv, Sim, unknown, lookupAnswer } from './fixtures.ts';

function authorizedSim(): Sim {
  const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: ['stripe_a', 'adyen_b'], skipped: [] } });
  s.authorize(approved());
  return s;
}
const lastLookup = (s: Sim): ProviderCallEffect => s.lastLookup();
const keyExpired: CallOutcome = { kind: 'unknown', reason: 'key_expired', detail: 'past retention' };

describe('an operation whose outcome stays unknown is looked up before it parks', () => {
  it('a capture: its resends spent, looked up, captured by what the lookup finds; never parked', () => {
    const s = authorizedSim();
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    for (let i = 0; i <= DEFAULT_CORE_POLICY.maxResends; i++) s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: unknown() });
    expect(s.state).toBe('capturing');
    expect(lastLookup(s).lookup).toMatchObject({ op: 'capture', captureId: 'cap_1', n: 1 });
    s.apply(lookupAnswer(lastLookup(s), approved(1000, 'pi_1')));
    expect(s.state).toBe('captured');
    expect(s.effects.some((e) => e.type === 'discrepancy')).toBe(false);
  });

  it('a capture whose key passed retention: looked up, not resent; parked only after the lookups stay inconclusive', () => {
    const s = authorizedSim();
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    const sends = s.calls('capture').length;
    s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: keyExpired });
    expect(s.calls('capture')).toHaveLength(sends);
    for (let n = 1; n < DEFAULT_CORE_POLICY.maxQueries; n++) {
      s.apply(lookupAnswer(lastLookup(s), unknown('not_found')));
      expect(s.state).toBe('capturing');
    }
    s.apply(lookupAnswer(lastLookup(s), unknown('not_found')));
    expect(s.state).toBe('needs_review');
    expect(s.effects).toContainEqual(expect.objectContaining({ type: 'discrepancy', kind: 'capture_unresolved' }));
  });

  it('a connector that cannot look operations up (Adyen: its notifications settle them) parks as before', () => {
    const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b'], skipped: [] } });
    s.authorize(approved(1000, 'psp_1'));
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    for (let i = 0; i <= DEFAULT_CORE_POLICY.maxResends; i++) s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: unknown() });
    expect(s.calls('lookup')).toHaveLength(0);
    expect(s.state).toBe('needs_review');
  });

  it('lookups wait at most LOOKUP_BACKOFF_CAP_MS between them: an unknown outcome parks within about a minute', () => {
    const s = authorizedSim();
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: keyExpired });
    s.lookupsFindNothing();
    const waits = s.calls('lookup').slice(1).map((e) => Date.parse(e.runAt!) - s.now.getTime());
    expect(Math.max(...waits)).toBeLessThanOrEqual(LOOKUP_BACKOFF_CAP_MS);
  });

  it('a void: looked up after its resends; voided by the PaymentIntent canceled', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    for (let i = 0; i <= DEFAULT_CORE_POLICY.maxResends; i++) s.apply({ type: 'call_result', ref: { op: 'void' }, outcome: unknown() });
    expect(s.state).toBe('voiding');
    expect(lastLookup(s).lookup).toMatchObject({ op: 'void', n: 1 });
    s.apply(lookupAnswer(lastLookup(s), approved(1000, 'pi_1')));
    expect(s.state).toBe('voided');
  });

  it('a refund: looked up after its resends; succeeded by the refund carrying our id', () => {
    const s = authorizedSim();
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: approved(1000, 'pi_1') });
    s.apply({ type: 'refund_requested', refundId: 'rf_1', amount: 400, reason: null });
    for (let i = 0; i <= DEFAULT_CORE_POLICY.maxResends; i++) s.apply({ type: 'call_result', ref: { op: 'refund', refundId: 'rf_1' }, outcome: unknown() });
    expect(lastLookup(s).lookup).toMatchObject({ op: 'refund', refundId: 'rf_1', n: 1 });
    expect(s.effects.some((e) => e.type === 'discrepancy')).toBe(false);
    s.apply(lookupAnswer(lastLookup(s), approved(400, 're_1')));
    expect(s.payment.refunds[0]).toMatchObject({ status: 'succeeded', providerRef: 're_1' });
  });
});
