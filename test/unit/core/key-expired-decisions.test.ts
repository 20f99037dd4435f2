// What the core decides when the worker reports unknown{key_expired} (it refused to send a call
// whose key the provider may have forgotten): look up, fence or park — never a resend, never proof.
import { describe, expect, it } from 'vitest';
import type { CallOutcome } from '../../../src/core/outcome.ts';
import { approved, makeEnv, Sim } from './fixtures.ts';

const expired: CallOutcome = { kind: 'unknown', reason: 'key_expired', detail: 'test' };

function authorizedSim(): Sim {
  const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: ['stripe_a', 'adyen_b'], skipped: [] } });
  s.authorize(approved());
  return s;
}

describe('unknown{key_expired}', () => {
  it('an authorize is not resent: fenced (no reference to query by yet), and not failed over', () => {
    // Adyen first: no preparatory call, so no provider reference to look the attempt up by.
    const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b', 'stripe_a'], skipped: [] } });
    s.prepared();
    const sendsBefore = s.calls('authorize').length;
    s.authorize(expired);
    expect(s.calls('authorize')).toHaveLength(sendsBefore); // no resend with the forgotten key
    expect(s.attempt.proof).toBeNull();
    expect(s.payment.attempts).toHaveLength(1);
    expect(['auth_unknown', 'needs_review']).toContain(s.state);
    expect(s.calls('fence')).toHaveLength(1);
  });

  it('a capture is not resent: parked for review, never failed', () => {
    const s = authorizedSim();
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: expired });
    expect(s.calls('capture')).toHaveLength(1);
    expect(s.payment.captures[0]!.status).not.toBe('failed');
    // Looked up first (issue 41 §6); parked once the lookups find nothing.
    s.lookupsFindNothing();
    expect(s.payment.captures[0]!.status).not.toBe('failed');
    expect(s.state).toBe('needs_review');
  });

  it('a refund is not resent: the amount stays reserved for reconciliation', () => {
    const s = authorizedSim();
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: approved(1000) });
    s.apply({ type: 'refund_requested', refundId: 'rfd_1', amount: 400, reason: null });
    s.apply({ type: 'call_result', ref: { op: 'refund', refundId: 'rfd_1' }, outcome: expired });
    expect(s.calls('refund')).toHaveLength(1);
    expect(s.payment.refunds[0]!.status).toBe('pending');
  });
});
