// Releases of approvals the payment does not keep (issue 20): done only when the provider confirms,
// an unknown resent with the same key, a confirmed failure followed by a new numbered release with
// a new key, bounded, past the bound the payment parked for review with a discrepancy.
import { describe, expect, it } from 'vitest';
import type { Attempt, CallOutcome, PaymentInput } from '../../../src/core/index.ts';
import { approved, declined, makeEnv, notSent, Sim, unknown } from './fixtures.ts';

const only = (c: string) => ({ routing: { snapshot: 'v', rule: 'r', candidates: [c], skipped: [] } });
const pending = (ref = 'mod_1'): CallOutcome => ({ kind: 'pending', providerRef: ref });
const refused: CallOutcome = { kind: 'not_sent', reason: 'validation', detail: 'nothing to cancel' };

/** Attempt 1 refused (proof), attempt 2 authorized; then a late approval on attempt 1: releasing. */
function lateApproval(over: Record<string, unknown> = {}): { s: Sim; losing: () => Attempt } {
  const s = new Sim(makeEnv(), over);
  s.authorize(notSent());
  s.authorize(approved(1000, 'psp_2'));
  const id = s.payment.attempts[0]!.id;
  s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: id, outcome: approved(1000, 'pi_late') } });
  return { s, losing: () => s.payment.attempts.find((a) => a.id === id)! };
}
const releaseAnswer = (attemptId: string, outcome: CallOutcome): PaymentInput => ({ type: 'call_result', ref: { op: 'release', attemptId }, outcome });
const releaseFact = (attemptId: string, ok: boolean, providerRef?: string): PaymentInput => ({
  type: 'provider_fact', fact: { fact: ok ? 'release_succeeded' : 'release_failed', attemptId, ...(providerRef === undefined ? {} : { providerRef }) },
});

describe('a release is done only when the provider confirms it', () => {
  it('an accepted (pending) release stays releasing; the resource-level record says pending', () => {
    const { s, losing } = lateApproval();
    expect(losing().status).toBe('releasing');
    s.apply(releaseAnswer(losing().id, pending()));
    expect(losing().status).toBe('releasing');
    expect(losing().release).toMatchObject({ status: 'pending', providerRef: 'mod_1', no: 1, round: 1 });
  });

  it('the provider confirmation (event) releases it', () => {
    const { s, losing } = lateApproval();
    s.apply(releaseAnswer(losing().id, pending()));
    s.apply(releaseFact(losing().id, true));
    expect(losing().status).toBe('released');
    expect(losing().release?.status).toBe('succeeded');
    expect(s.state).toBe('authorized');
  });

  it('a synchronous success is the provider confirming', () => {
    const { s, losing } = lateApproval();
    s.apply(releaseAnswer(losing().id, approved(1000, 'pi_late')));
    expect(losing().status).toBe('released');
  });

  it('an unknown release is resent with the same key', () => {
    const { s, losing } = lateApproval();
    const first = s.calls('release')[0]!;
    s.apply(releaseAnswer(losing().id, unknown()));
    const calls = s.calls('release');
    expect(calls).toHaveLength(2);
    expect(calls[1]!.providerKey).toBe(first.providerKey);
    expect(losing().status).toBe('releasing');
  });

  it('a release the provider confirms as failed is a new numbered operation with a new key', () => {
    const { s, losing } = lateApproval();
    s.apply(releaseAnswer(losing().id, pending()));
    s.apply(releaseFact(losing().id, false, 'mod_1'));
    const calls = s.calls('release');
    expect(calls).toHaveLength(2);
    expect(calls[1]!.providerKey).not.toBe(calls[0]!.providerKey);
    expect(calls[1]!.providerKey).toContain(':release:');
    expect(losing().status).toBe('releasing');
    expect(losing().release).toMatchObject({ round: 2, status: 'requested', earlierRefs: ['mod_1'] });
    // A late (or duplicate) event about the first release is old news.
    s.apply(releaseFact(losing().id, true, 'mod_1'));
    expect(losing().status).toBe('releasing');
    s.apply(releaseFact(losing().id, false, 'mod_1'));
    expect(s.calls('release')).toHaveLength(2);
  });

  it("a late answer for an earlier release is not the current release's", () => {
    const { s, losing } = lateApproval();
    const firstKey = s.calls('release')[0]!.providerKey!;
    s.apply(releaseFact(losing().id, false));
    const r = s.apply({ type: 'call_result', ref: { op: 'release', attemptId: losing().id, providerKey: firstKey }, outcome: approved(1000, 'pi_late') });
    expect(r.kind).toBe('noop');
    expect(losing().status).toBe('releasing');
    expect(losing().release?.round).toBe(2);
  });

  it('a declined or refused release is followed by a new one too', () => {
    const { s, losing } = lateApproval();
    s.apply(releaseAnswer(losing().id, declined('hard', false)));
    s.apply(releaseAnswer(losing().id, refused));
    const keys = new Set(s.calls('release').map((c) => c.providerKey));
    expect(keys.size).toBe(3);
  });

  it('past the bound the payment goes to needs_review with a release_failed discrepancy; late proof returns it', () => {
    const { s, losing } = lateApproval();
    for (let i = 0; i < 3; i++) s.apply(releaseAnswer(losing().id, declined('hard', false)));
    expect(s.calls('release')).toHaveLength(3);
    expect(s.state).toBe('needs_review');
    expect(losing().status).toBe('review');
    expect(s.effects.some((e) => e.type === 'discrepancy' && e.kind === 'release_failed' && e.attemptId === losing().id)).toBe(true);
    s.apply(releaseFact(losing().id, true));
    expect(losing().status).toBe('released');
    expect(s.state).toBe('authorized');
  });

  it('partial approval under automatic capture: the release is a refund with its own record id', () => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic', ...only('stripe_a') });
    s.authorize(approved(600));
    expect(s.state).toBe('declined');
    const call = s.calls('release')[0]!;
    expect(call.amount).toBe(600);
    expect(call.refundId).toBe(`${s.attempt.id}_release`);
    expect(s.attempt.release?.kind).toBe('refund');
    s.apply(releaseAnswer(s.attempt.id, pending('re_1')));
    s.apply(releaseFact(s.attempt.id, false, 're_1'));
    expect(s.calls('release')[1]!.refundId).toBe(`${s.attempt.id}_release_2`);
  });

  it('a confirmed release refund that is reversed later starts a new release', () => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic', ...only('stripe_a') });
    s.authorize(approved(600));
    s.apply(releaseAnswer(s.attempt.id, approved(600, 're_1')));
    expect(s.attempt.status).toBe('released');
    s.apply(releaseFact(s.attempt.id, false, 're_1'));
    expect(s.attempt.status).toBe('releasing');
    expect(s.attempt.release?.round).toBe(2);
  });
});

describe('a capture failure of an automatic-capture approval (no capture record)', () => {
  it('is applied: a capture record reversed at once, a compensating posting, the payment failed', () => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic', ...only('adyen_b') });
    s.authorize(approved(1000, 'psp_1'));
    expect(s.state).toBe('captured');
    s.apply({ type: 'provider_fact', fact: { fact: 'auto_capture_reversed', attemptId: s.attempt.id, amount: 1000, providerRef: 'cap_psp' } });
    expect(s.state).toBe('failed');
    expect(s.payment.amountCaptured).toBe(0);
    expect(s.payment.captures).toMatchObject([{ status: 'reversed', amount: 1000, providerRef: 'cap_psp' }]);
    expect(s.effects.some((e) => e.type === 'ledger' && e.posting === 'capture_reversed' && e.amount === 1000)).toBe(true);
    // Twice: nothing more.
    const again = s.apply({ type: 'provider_fact', fact: { fact: 'auto_capture_reversed', attemptId: s.attempt.id, amount: 1000, providerRef: 'cap_psp' } });
    expect(again.kind).toBe('noop');
  });
});
