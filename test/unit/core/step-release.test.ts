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
    // The late approval's discrepancy (subject: the attempt) has its answer: the money is given back.
    expect(s.effects).toContainEqual(expect.objectContaining({ type: 'discrepancy', kind: 'late_approval', subject: losing().id }));
    expect(s.effects).toContainEqual(expect.objectContaining({ type: 'discrepancy_settled', kind: 'late_approval', subject: losing().id }));
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

  it("a late answer for an earlier release refund is not the current release's", () => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic', ...only('stripe_a') });
    s.authorize(approved(600));
    const firstKey = s.calls('release')[0]!.providerKey!;
    s.apply(releaseFact(s.attempt.id, false));
    const late = { type: 'call_result', ref: { op: 'release', attemptId: s.attempt.id, providerKey: firstKey }, outcome: approved(600, 're_1') } as const;
    s.apply(late);
    // It names round 1's refund (kept on that round), and changes nothing else: twice is a no-op.
    expect(s.attempt.release?.earlier?.[0]?.providerRef).toBe('re_1');
    expect(s.apply(late).kind).toBe('noop');
    expect(s.attempt.status).toBe('releasing');
    expect(s.attempt.release?.round).toBe(2);
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

// Issue 41 §1: each release event is matched to the round whose provider object it names (our
// reference on the refund, `<attempt>_release[_<round>]`, or the refund's own id), never to
// "whichever round is current".
describe('release events are matched to their round by the object they name', () => {
  const roundFact = (attemptId: string, ok: boolean, round: number, providerRef: string, reversal = false): PaymentInput => ({
    type: 'provider_fact',
    fact: { fact: ok ? 'release_succeeded' : 'release_failed', attemptId, providerRef, reference: round === 1 ? `${attemptId}_release` : `${attemptId}_release_${round}`, ...(reversal ? { reversal } : {}) },
  });
  const automatic = (): Sim => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic', ...only('stripe_a') });
    s.authorize(approved(600));
    return s;
  };
  const released = (s: Sim): number => s.effects.filter((e) => e.type === 'ledger' && e.posting === 'release_refunded').reduce((n, e) => n + (e.type === 'ledger' ? e.amount : 0), 0);
  const heldFor = (s: Sim): number => s.effects.filter((e) => e.type === 'ledger' && e.posting === 'held_for_release').reduce((n, e) => n + (e.type === 'ledger' ? e.amount : 0), 0);

  it("round 1's refund, its answer lost, reversed, failure events before its success: one new round, never a confirmation", () => {
    const s = automatic();
    const id = s.attempt.id;
    s.apply(releaseAnswer(id, unknown()));
    // refund.failed, then refund.updated (failed, was succeeded), then charge.refunded: all about re_1.
    s.apply(roundFact(id, false, 1, 're_1'));
    expect(s.attempt.release).toMatchObject({ round: 2, status: 'requested' });
    s.apply(roundFact(id, false, 1, 're_1', true));
    s.apply(roundFact(id, true, 1, 're_1'));
    // The provider captured the money and refunded nothing: round 2 is what gives it back.
    expect(s.attempt.status).toBe('releasing');
    expect(s.attempt.release).toMatchObject({ round: 2, status: 'requested' });
    expect(new Set(s.calls('release').map((c) => c.refundId))).toEqual(new Set([`${id}_release`, `${id}_release_2`]));
    expect(released(s)).toBe(0);
    // Round 1's record keeps its refund's id.
    expect(s.attempt.release?.earlier).toEqual([expect.objectContaining({ round: 1, providerRef: 're_1', status: 'failed' })]);
    // Round 2's own success releases it.
    s.apply(roundFact(id, true, 2, 're_2'));
    expect(s.attempt.status).toBe('released');
    expect(released(s)).toBe(600);
  });

  it('one real failure and its two events burn one round, not three', () => {
    const s = automatic();
    const id = s.attempt.id;
    s.apply(releaseAnswer(id, unknown()));
    s.apply(roundFact(id, false, 1, 're_1'));
    s.apply(roundFact(id, false, 1, 're_1', true));
    s.apply(roundFact(id, false, 1, 're_1'));
    expect(s.state).not.toBe('needs_review');
    expect(s.attempt.release).toMatchObject({ round: 2, status: 'requested' });
    expect(new Set(s.calls('release').map((c) => c.providerKey)).size).toBe(2);
  });

  it("a reversal of the round that succeeded starts a new round; another round's failure does not", () => {
    const s = automatic();
    const id = s.attempt.id;
    s.apply(releaseAnswer(id, pending('re_1')));
    s.apply(roundFact(id, false, 1, 're_1'));
    s.apply(roundFact(id, true, 2, 're_2'));
    expect(s.attempt.status).toBe('released');
    // A late duplicate of round 1's failure is old news: the money round 2 gave back stays given back.
    s.apply(roundFact(id, false, 1, 're_1'));
    expect(s.attempt.status).toBe('released');
    expect(released(s)).toBe(600);
    // Round 2's refund reversed: the customer is charged again, held again, a third round.
    s.apply(roundFact(id, false, 2, 're_2', true));
    expect(s.attempt.status).toBe('releasing');
    expect(s.attempt.release).toMatchObject({ round: 3 });
    expect(heldFor(s)).toBe(1200);
  });

  it("a late answer to an earlier round records that round's refund id", () => {
    const s = automatic();
    const id = s.attempt.id;
    const firstKey = s.calls('release')[0]!.providerKey!;
    s.apply(roundFact(id, false, 1, 're_1'));
    s.apply({ type: 'call_result', ref: { op: 'release', attemptId: id, providerKey: firstKey }, outcome: pending('re_1') });
    expect(s.attempt.release?.earlier?.[0]).toMatchObject({ round: 1, providerRef: 're_1' });
    expect(s.attempt.release).toMatchObject({ round: 2, status: 'requested', providerRef: null });
  });

  it('a Stripe void is decided by the PaymentIntent: canceled releases it, whichever round asked', () => {
    const { s, losing } = lateApproval();
    const firstKey = s.calls('release')[0]!.providerKey!;
    s.apply(releaseAnswer(losing().id, declined('hard', false)));
    expect(losing().release?.round).toBe(2);
    // Round 1's late answer says the PaymentIntent is canceled: released.
    s.apply({ type: 'call_result', ref: { op: 'release', attemptId: losing().id, providerKey: firstKey }, outcome: approved(1000, 'pi_late') });
    expect(losing().status).toBe('released');
  });
});
