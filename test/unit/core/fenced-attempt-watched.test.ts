// Issue 41 §5: a confirmed fence is proof only about what it reached. Adyen's technical cancel of a
// reference it has not seen is acknowledged (TECHNICAL_CANCEL success, naming no payment), and Adyen
// does not document that it stops an authorization still in flight: one that completes afterwards
// is live money on an attempt the gateway failed over from. The fenced attempt stays watched: such
// an approval is released at once (void, or refund under automatic capture), with a discrepancy.
// An approval of the very object the fence cancelled is older than the fence, and stays ignored.
import { describe, expect, it } from 'vitest';
import type { CallOutcome, PaymentInput } from '../../../src/core/index.ts';
import { approved, makeEnv, Sim, unknown } from './fixtures.ts';

const DAY = 24 * 3_600_000;
const adyenFirst = { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b', 'stripe_a'], skipped: [] }, maxLifetimeMs: 30 * DAY };

/** The Adyen attempt's /payments answers are lost past the key's retention: fenced by a technical cancel (accepted, not yet confirmed). */
function fencedByReference(captureMethod: 'manual' | 'automatic'): Sim {
  const s = new Sim(makeEnv(), { ...adyenFirst, captureMethod });
  s.authorize(unknown());
  s.advance(8 * DAY);
  s.authorize(unknown());
  expect(s.attempt.status).toBe('fencing');
  expect(s.attempt.providerRef).toBeNull();
  s.apply({ type: 'call_result', ref: { op: 'fence', attemptId: s.attempt.id }, outcome: { kind: 'pending', providerRef: 'tc_1' } });
  return s;
}

const fenceConfirmed = (attemptId: string, providerRef?: string): PaymentInput => ({
  type: 'provider_fact', fact: { fact: 'fence_confirmed', attemptId, ...(providerRef === undefined ? {} : { providerRef }) },
});
const authorisation = (attemptId: string, outcome: CallOutcome): PaymentInput => ({ type: 'provider_fact', fact: { fact: 'authorization', attemptId, outcome } });

/** Fails over to the Stripe-like account and authorizes there. */
function failedOver(s: Sim): void {
  expect(s.payment.attempts).toHaveLength(2);
  expect(s.payment.attempts[0]!.proof).toBe('fenced');
  s.authorize(approved(1000, 'pi_2'));
}

describe('a fenced attempt stays watched', () => {
  for (const captureMethod of ['manual', 'automatic'] as const) {
    it(`${captureMethod} capture: an approval after a technical cancel that named no payment is live money, released at once with a late_approval discrepancy`, () => {
      const s = fencedByReference(captureMethod);
      const first = s.attempt.id;
      // TECHNICAL_CANCEL success for a reference Adyen had not seen: it names no payment.
      s.apply(fenceConfirmed(first));
      failedOver(s);
      const kept = captureMethod === 'manual' ? 'authorized' : 'captured';
      expect(s.state).toBe(kept);
      // The authorization that was in flight completes after all: AUTHORISATION success, its own pspReference.
      const r = s.apply(authorisation(first, approved(1000, 'psp_late')));
      expect(r.kind).toBe('applied');
      const a = s.payment.attempts[0]!;
      expect(a.status).toBe('releasing');
      expect(a.providerRef).toBe('psp_late');
      expect(a.release).toMatchObject({ kind: captureMethod === 'manual' ? 'void' : 'refund', amount: 1000, round: 1 });
      expect(s.calls('release').map((c) => c.attemptId)).toEqual([first]);
      expect(s.effects.some((e) => e.type === 'discrepancy' && e.kind === 'late_approval' && e.attemptId === first)).toBe(true);
      // Under automatic capture the approval captured money that is not the merchant's: held for release.
      const held = s.effects.filter((e) => e.type === 'ledger' && e.posting === 'held_for_release');
      expect(held.map((e) => (e.type === 'ledger' ? [e.attemptId, e.amount] : null))).toEqual(captureMethod === 'automatic' ? [[first, 1000]] : []);
      expect(s.state).toBe(kept);
      // The release confirmed: given back, the payment kept on the second attempt.
      s.apply({ type: 'provider_fact', fact: { fact: 'release_succeeded', attemptId: first } });
      expect(s.payment.attempts[0]!.status).toBe('released');
      expect(s.payment.attempts[1]!.status).toBe('authorized');
    });
  }

  it('an approval of the payment the fence cancelled is older than the fence: ignored', () => {
    const s = fencedByReference('manual');
    const first = s.attempt.id;
    // The technical cancel found the authorised payment and cancelled it (originalReference = its pspReference).
    s.apply(fenceConfirmed(first, 'psp_1'));
    failedOver(s);
    expect(s.payment.attempts[0]!.providerRef).toBe('psp_1');
    expect(s.apply(authorisation(first, approved(1000, 'psp_1'))).kind).toBe('noop');
    expect(s.calls('release')).toHaveLength(0);
    expect(s.payment.attempts[0]!.status).toBe('abandoned');
  });

  it('an approval that arrives while the fence is in flight is decided by what the fence reached: named, it was cancelled', () => {
    const s = fencedByReference('manual');
    const first = s.attempt.id;
    s.apply(authorisation(first, approved(1000, 'psp_1')));
    expect(s.attempt.status).toBe('fencing');
    s.apply(fenceConfirmed(first, 'psp_1'));
    failedOver(s);
    expect(s.calls('release')).toHaveLength(0);
  });

  it('an approval that arrives while the fence is in flight, which the fence did not reach, stands: the payment keeps it', () => {
    const s = fencedByReference('manual');
    const first = s.attempt.id;
    // Reordered: the in-flight authorization's notification comes before the technical cancel's.
    s.apply(authorisation(first, approved(1000, 'psp_late')));
    s.apply(fenceConfirmed(first));
    expect(s.payment.attempts).toHaveLength(1);
    expect(s.state).toBe('authorized');
    expect(s.attempt).toMatchObject({ status: 'authorized', providerRef: 'psp_late', amountAuthorized: 1000 });
  });

  it('a fence confirmed after the approval settled a parked payment leaves it authorized when it reached another payment, or none', () => {
    const s = new Sim(makeEnv(), adyenFirst);
    s.authorize(unknown());
    s.advance(8 * DAY);
    s.authorize(unknown());
    for (let i = 0; i < 3; i++) s.apply({ type: 'call_result', ref: { op: 'fence', attemptId: s.attempt.id }, outcome: unknown() });
    expect(s.state).toBe('needs_review');
    s.apply(authorisation(s.attempt.id, approved(1000, 'psp_late')));
    expect(s.state).toBe('authorized');
    s.apply(fenceConfirmed(s.attempt.id));
    expect(s.state).toBe('authorized');
    expect(s.attempt.status).toBe('authorized');
    expect(s.effects.some((e) => e.type === 'discrepancy' && e.kind === 'fence_after_approval')).toBe(false);
  });
});
