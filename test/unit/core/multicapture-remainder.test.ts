// Captures on an Adyen account with multiple partial captures (issue 43): final=false leaves the rest
// open; a final partial capture is the capture followed by a cancel of the remainder, which counts
// as released only once the provider confirms that cancel. What can still be captured and what was
// released are read off the aggregate (capture-amounts.ts), and a refused further capture says so.
import { describe, expect, it } from 'vitest';
import { amountCapturable, amountReleased } from '../../../src/core/capture-amounts.ts';
import { isCallStillWanted } from '../../../src/core/effect-wanted.ts';
import type { PaymentInput } from '../../../src/core/index.ts';
import { ADYEN_LIKE, approved, makeEnv, Sim, unknown } from './fixtures.ts';

const ADYEN_MULTICAPTURE = { ...ADYEN_LIKE, capabilities: { ...ADYEN_LIKE.capabilities, multicapture: true, finalCaptureLeavesRemainder: true } };

function authorized(connector = 'adyen_mc'): Sim {
  const env = makeEnv();
  const s = new Sim({ ...env, policies: { ...env.policies, adyen_mc: ADYEN_MULTICAPTURE } }, { routing: { snapshot: 'v', rule: 'r', candidates: [connector], skipped: [] } });
  s.authorize(approved(1000, 'psp_1'));
  expect(s.state).toBe('authorized');
  return s;
}

const capture = (s: Sim, id: string, amount: number, final: boolean) => s.apply({ type: 'capture_requested', captureId: id, amount, final });
const captured = (id: string): PaymentInput => ({ type: 'provider_fact', fact: { fact: 'capture_succeeded', captureId: id } });
const cancelAnswer = (outcome: Parameters<Sim['authorize']>[0]): PaymentInput => ({ type: 'call_result', ref: { op: 'void' }, outcome });

describe('multiple partial captures (Adyen account with multicapture: true)', () => {
  it('final=false leaves the rest open: capturable, nothing released, no cancel sent', () => {
    const s = authorized();
    capture(s, 'cap_1', 300, false);
    s.apply(captured('cap_1'));
    expect(s.state).toBe('captured');
    expect(s.payment.captureOpen).toBe(true);
    expect(amountCapturable(s.payment)).toBe(700);
    expect(amountReleased(s.payment)).toBe(0);
    expect(s.calls('void')).toEqual([]);
  });

  it('a final partial capture is the capture then a cancel of the remainder, released only on its confirmation', () => {
    const s = authorized();
    capture(s, 'cap_1', 300, false);
    s.apply(captured('cap_1'));
    capture(s, 'cap_2', 200, true);
    expect(s.calls('capture').at(-1)).toMatchObject({ final: true, amount: 200 });
    s.apply(captured('cap_2'));
    expect(s.state).toBe('captured');
    expect(s.payment.amountCaptured).toBe(500);
    const cancel = s.calls('void').at(-1)!;
    expect(cancel).toMatchObject({ op: 'void', amount: 500, voidNo: 1 });
    expect(new Set(s.calls().map((c) => c.providerKey)).size).toBe(s.calls().length); // its own key
    expect(amountCapturable(s.payment)).toBe(0);
    expect(amountReleased(s.payment)).toBe(0);
    const early = capture(s, 'cap_3', 100, true);
    expect(early).toMatchObject({ kind: 'illegal', code: 'invalid_state' });
    expect(early.kind === 'illegal' && early.reason).toMatch(/remaining 500 EUR is being released/);

    // The worker sends it although the payment is captured, not voiding.
    expect(isCallStillWanted(s.payment, cancel)).toEqual({ wanted: true });
    s.apply(cancelAnswer({ kind: 'pending', providerRef: 'mod_c' }));
    expect(amountReleased(s.payment)).toBe(0);
    s.apply({ type: 'provider_fact', fact: { fact: 'void_succeeded' } });
    expect(isCallStillWanted(s.payment, cancel)).toMatchObject({ wanted: false });
    expect(s.state).toBe('captured');
    expect(amountReleased(s.payment)).toBe(500);
    const late = capture(s, 'cap_4', 100, true);
    expect(late.kind === 'illegal' && late.reason).toBe('cannot capture a payment that is captured: its final capture released the remaining 500 EUR');
  });

  it('a refused remainder cancel is a release_failed finding; nothing is called released', () => {
    const s = authorized();
    capture(s, 'cap_1', 400, true);
    s.apply(captured('cap_1'));
    s.apply({ type: 'provider_fact', fact: { fact: 'void_failed' } });
    expect(s.state).toBe('captured');
    expect(amountReleased(s.payment)).toBe(0);
    expect(s.effects.some((e) => e.type === 'discrepancy' && e.kind === 'release_failed')).toBe(true);
  });

  it('an unanswered remainder cancel is resent with the same key', () => {
    const s = authorized();
    capture(s, 'cap_1', 400, true);
    s.apply(captured('cap_1'));
    s.apply(cancelAnswer(unknown()));
    const calls = s.calls('void');
    expect(calls).toHaveLength(2);
    expect(calls[1]!.providerKey).toBe(calls[0]!.providerKey);
  });

  it('a full final capture sends no cancel', () => {
    const s = authorized();
    capture(s, 'cap_1', 1000, true);
    s.apply(captured('cap_1'));
    expect(s.calls('void')).toEqual([]);
    expect(amountReleased(s.payment)).toBe(0);
  });
});

describe('where the final capture itself releases the rest (Stripe)', () => {
  it('released at once; capturable 0; the refusal of a further capture says the rest was released', () => {
    const s = authorized('stripe_a');
    expect(amountCapturable(s.payment)).toBe(1000);
    capture(s, 'cap_1', 600, true);
    s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: approved(600) });
    expect(s.calls('void')).toEqual([]);
    expect(amountReleased(s.payment)).toBe(400);
    expect(amountCapturable(s.payment)).toBe(0);
    const r = capture(s, 'cap_2', 100, true);
    expect(r.kind === 'illegal' && r.reason).toBe('cannot capture a payment that is captured: its final capture released the remaining 400 EUR');
  });

  it('a voided payment released what was authorized', () => {
    const s = authorized('stripe_a');
    s.apply({ type: 'void_requested' });
    s.apply(cancelAnswer(approved(0)));
    expect(s.state).toBe('voided');
    expect(amountReleased(s.payment)).toBe(1000);
  });
});
