// Issue 41 §4: "already done" is an answer, not a refusal. A provider that refuses a capture, void,
// refund, release or fence because its object is already in the state the operation would put it in
// answers unknown{already_done}; the core reads the object back (a lookup call) and applies what it
// finds, and parks only when the lookups stay inconclusive past their bound.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CORE_POLICY } from '../../../src/core/index.ts';
import type { Attempt, CallOutcome, PaymentInput, ProviderCallEffect } from '../../../src/core/index.ts';
import { approved, makeEnv, notSent, Sim, unknown, lookupAnswer } from './fixtures.ts';

const HOUR = 3_600_000;
const alreadyDone: CallOutcome = { kind: 'unknown', reason: 'already_done', detail: 'PaymentIntent already canceled' };
const refusedAsInvalid: CallOutcome = { kind: 'not_sent', reason: 'validation', detail: 'unexpected state' };

function authorizedSim(connector: 'stripe_a' | 'adyen_b' = 'stripe_a'): Sim {
  const other = connector === 'stripe_a' ? 'adyen_b' : 'stripe_a';
  const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: [connector, other], skipped: [] } });
  s.authorize(approved());
  return s;
}

const lastLookup = (s: Sim): ProviderCallEffect => s.lastLookup();
const voidAnswer = (outcome: CallOutcome): PaymentInput => ({ type: 'call_result', ref: { op: 'void' }, outcome });

describe('a void answered "already canceled"', () => {
  it('after an unknown void: looked up, not resent, and voided by what the lookup finds', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    s.apply(voidAnswer(unknown()));
    expect(s.calls('void')).toHaveLength(2);
    s.apply(voidAnswer(alreadyDone));
    expect(s.calls('void'), 'no resend: the same key would be refused the same way').toHaveLength(2);
    expect(s.calls('lookup')).toHaveLength(1);
    expect(lastLookup(s)).toMatchObject({ connector: 'stripe_a', providerKey: null, lookup: { op: 'void', key: s.payment.voidOp!.providerKey, n: 1 } });
    expect(s.state).toBe('voiding');
    s.apply(lookupAnswer(lastLookup(s), approved(1000, 'pi_1')));
    expect(s.state).toBe('voided');
    expect(s.edges).not.toContainEqual(['voiding', 'needs_review']);
  });

  it('a refusal that is not "already done" is still a refusal', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    s.apply(voidAnswer(refusedAsInvalid));
    expect(s.state).toBe('authorized');
    expect(s.calls('lookup')).toHaveLength(0);
  });

  it('inconclusive lookups are repeated with backoff up to maxQueries, then the void is parked', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    s.apply(voidAnswer(alreadyDone));
    for (let i = 0; i < DEFAULT_CORE_POLICY.maxQueries; i++) {
      expect(s.state).toBe('voiding');
      s.apply(lookupAnswer(lastLookup(s), unknown('not_found')));
    }
    expect(s.calls('lookup')).toHaveLength(DEFAULT_CORE_POLICY.maxQueries);
    expect(s.calls('lookup').slice(1).every((e) => e.runAt !== undefined)).toBe(true);
    expect(s.state).toBe('needs_review');
    // The provider's word still settles the parked void.
    s.apply({ type: 'provider_fact', fact: { fact: 'void_succeeded' } });
    expect(s.state).toBe('voided');
  });

  it('a lookup answer for an earlier void is not applied to a later one', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    s.apply(voidAnswer(alreadyDone));
    const stale = lastLookup(s);
    const r = s.apply(lookupAnswer({ ...stale, lookup: { op: 'void', key: `${s.payment.id}:void:9`, n: 1 } }, approved(1000, 'pi_1')));
    expect(r.kind).toBe('noop');
    expect(s.state).toBe('voiding');
  });

  it("Adyen's failure notification saying so, before the success of the cancel that did it: never back to authorized", () => {
    const s = authorizedSim('adyen_b');
    s.apply({ type: 'void_requested' });
    s.apply(voidAnswer(unknown()));
    s.apply(voidAnswer({ kind: 'pending', providerRef: 'mod_2' }));
    s.apply({ type: 'provider_fact', fact: { fact: 'void_already_done', detail: 'CANCELLATION success=false: Payment has already been cancelled' } });
    expect(s.state).toBe('voiding');
    expect(lastLookup(s).lookup).toMatchObject({ op: 'void', n: 1 });
    s.apply({ type: 'provider_fact', fact: { fact: 'void_succeeded' } });
    expect(s.state).toBe('voided');
    expect(s.edges).not.toContainEqual(['voiding', 'authorized']);
  });
});

describe('a capture answered "already captured"', () => {
  it('looked up; captured by what the lookup finds, never parked', () => {
    const s = authorizedSim();
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: unknown() });
    s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: alreadyDone });
    expect(s.calls('capture')).toHaveLength(2);
    expect(lastLookup(s)).toMatchObject({ captureId: 'cap_1', amount: 1000, lookup: { op: 'capture', captureId: 'cap_1', n: 1 } });
    expect(s.payment.captures[0]!.status).toBe('pending');
    s.apply(lookupAnswer(lastLookup(s), approved(1000, 'pi_1')));
    expect(s.state).toBe('captured');
    expect(s.payment.amountCaptured).toBe(1000);
  });

  it('past the lookups: parked with capture_unresolved, as after spent resends', () => {
    const s = authorizedSim();
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: alreadyDone });
    for (let i = 0; i < DEFAULT_CORE_POLICY.maxQueries; i++) s.apply(lookupAnswer(lastLookup(s), unknown('not_found')));
    expect(s.state).toBe('needs_review');
    expect(s.effects.some((e) => e.type === 'discrepancy' && e.kind === 'capture_unresolved')).toBe(true);
  });
});

describe('a lookup that shows the operation did not happen and never can', () => {
  it('a capture: the provider\'s refusal stands (rejected), the payment back to authorized', () => {
    const s = authorizedSim();
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: alreadyDone });
    s.apply(lookupAnswer(lastLookup(s), refusedAsInvalid));
    expect(s.payment.captures[0]).toMatchObject({ status: 'failed', failure: { kind: 'rejected', code: 'validation' } });
    expect(s.state).toBe('authorized');
  });
});

describe('a refund answered "already refunded"', () => {
  it('looked up by its id; the refund found is applied', () => {
    const s = authorizedSim();
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: approved(1000, 'pi_1') });
    s.apply({ type: 'refund_requested', refundId: 'rfd_1', amount: 1000, reason: null });
    s.apply({ type: 'call_result', ref: { op: 'refund', refundId: 'rfd_1' }, outcome: unknown() });
    s.apply({ type: 'call_result', ref: { op: 'refund', refundId: 'rfd_1' }, outcome: alreadyDone });
    expect(s.calls('refund')).toHaveLength(2);
    expect(lastLookup(s)).toMatchObject({ refundId: 'rfd_1', lookup: { op: 'refund', refundId: 'rfd_1' } });
    s.apply(lookupAnswer(lastLookup(s), approved(1000, 're_1')));
    expect(s.payment.refunds[0]).toMatchObject({ status: 'succeeded', providerRef: 're_1' });
    expect(s.payment.amountRefunded).toBe(1000);
  });
});

describe('a release or a fence answered "already done"', () => {
  it('a release void: looked up and confirmed, no new round', () => {
    const s = new Sim(makeEnv());
    s.authorize(notSent());
    s.authorize(approved(1000, 'psp_2'));
    const id = s.payment.attempts[0]!.id;
    s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: id, outcome: approved(1000, 'pi_late') } });
    const losing = (): Attempt => s.payment.attempts.find((a) => a.id === id)!;
    s.apply({ type: 'call_result', ref: { op: 'release', attemptId: id }, outcome: alreadyDone });
    expect(s.calls('release')).toHaveLength(1);
    expect(lastLookup(s).lookup).toMatchObject({ op: 'release', attemptId: id, key: losing().release!.providerKey });
    s.apply(lookupAnswer(lastLookup(s), approved(1000, 'pi_late')));
    expect(losing().status).toBe('released');
    expect(losing().release).toMatchObject({ status: 'succeeded', round: 1 });
  });

  it('a fence: looked up; a cancelled object found confirms it (proof), and failover follows', () => {
    const s = new Sim();
    s.authorize(unknown());
    s.advance(25 * HOUR);
    s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: unknown('not_found') });
    const first = s.attempt;
    expect(first.status).toBe('fencing');
    s.apply({ type: 'call_result', ref: { op: 'fence', attemptId: first.id }, outcome: alreadyDone });
    expect(s.calls('fence')).toHaveLength(1);
    expect(lastLookup(s).lookup).toMatchObject({ op: 'fence', attemptId: first.id });
    s.apply(lookupAnswer(lastLookup(s), approved(1000, 'pi_1')));
    expect(s.payment.attempts[0]!.proof).toBe('fenced');
    expect(s.attempt.connector).toBe('adyen_b');
  });
});
