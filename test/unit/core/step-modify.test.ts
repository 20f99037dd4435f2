import { describe, expect, it } from 'vitest';
import { DEFAULT_CORE_POLICY } from '../../../src/core/index.ts';
import { approved, declined, makeEnv, notSent, Sim, unknown } from './fixtures.ts';

function authorizedSim(connector: 'stripe_a' | 'adyen_b' = 'stripe_a'): Sim {
  const other = connector === 'stripe_a' ? 'adyen_b' : 'stripe_a';
  const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: [connector, other], skipped: [] } });
  s.authorize(approved());
  expect(s.state).toBe('authorized');
  return s;
}

const capture = (s: Sim, id: string, amount: number, final = true) => s.apply({ type: 'capture_requested', captureId: id, amount, final });
const captureResult = (s: Sim, id: string, outcome: Parameters<Sim['authorize']>[0]) => s.apply({ type: 'call_result', ref: { op: 'capture', captureId: id }, outcome });
const refund = (s: Sim, id: string, amount: number) => s.apply({ type: 'refund_requested', refundId: id, amount, reason: null });
const refundResult = (s: Sim, id: string, outcome: Parameters<Sim['authorize']>[0]) => s.apply({ type: 'call_result', ref: { op: 'refund', refundId: id }, outcome });

describe('captures', () => {
  it('full capture: capturing -> captured, ledger and event', () => {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    expect(s.state).toBe('capturing');
    expect(s.calls('capture')[0]!.providerKey).toBe(`${s.payment.id}:capture:1`);
    captureResult(s, 'cap_1', approved(1000));
    expect(s.state).toBe('captured');
    expect(s.payment.amountCaptured).toBe(1000);
    expect(s.payment.captureOpen).toBe(false);
  });

  it('refuses a capture above what is still capturable', () => {
    const s = authorizedSim();
    const r = capture(s, 'cap_1', 1001);
    expect(r).toMatchObject({ kind: 'illegal', code: 'amount_exceeds_authorized' });
    expect(s.state).toBe('authorized');
  });

  it('refuses fractional and zero amounts', () => {
    const s = authorizedSim();
    expect(capture(s, 'cap_1', 10.5)).toMatchObject({ kind: 'illegal', code: 'invalid_amount' });
    expect(capture(s, 'cap_1', 0)).toMatchObject({ kind: 'illegal', code: 'invalid_amount' });
  });

  it('multicapture: final=false keeps the remainder capturable', () => {
    const s = authorizedSim('stripe_a');
    capture(s, 'cap_1', 400, false);
    captureResult(s, 'cap_1', approved(400));
    expect(s.state).toBe('captured');
    expect(s.payment.captureOpen).toBe(true);
    capture(s, 'cap_2', 600);
    expect(s.edges).toContainEqual(['captured', 'capturing']);
    captureResult(s, 'cap_2', approved(600));
    expect(s.payment.amountCaptured).toBe(1000);
    expect(s.payment.captureOpen).toBe(false);
    expect(capture(s, 'cap_3', 1)).toMatchObject({ kind: 'illegal', code: 'invalid_state' });
  });

  it('without multicapture final=false is refused (multicapture_unsupported, naming the connector), never made final', () => {
    const s = authorizedSim('adyen_b');
    const r = capture(s, 'cap_1', 400, false);
    expect(r).toMatchObject({ kind: 'illegal', code: 'multicapture_unsupported' });
    expect(r.kind === 'illegal' && r.reason).toContain('adyen_b');
    expect(s.state).toBe('authorized');
    expect(s.payment.captures).toEqual([]);
  });

  it('without multicapture a final partial capture releases the remainder', () => {
    const s = authorizedSim('adyen_b');
    capture(s, 'cap_1', 400, true);
    expect(s.payment.captures[0]!.final).toBe(true);
    captureResult(s, 'cap_1', { kind: 'pending', providerRef: 'm1' });
    expect(s.state).toBe('capturing');
    s.apply({ type: 'provider_fact', fact: { fact: 'capture_succeeded', captureId: 'cap_1' } });
    expect(s.state).toBe('captured');
    expect(s.payment.captureOpen).toBe(false);
  });

  it('a refused capture returns to authorized', () => {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    captureResult(s, 'cap_1', declined('hard', false));
    expect(s.state).toBe('authorized');
    expect(s.effects.some((e) => e.type === 'merchant_event' && e.event === 'payment.capture_failed')).toBe(true);
    expect(s.effects.filter((e) => e.type === 'merchant_event' && e.event === 'payment.authorized')).toHaveLength(1);
  });

  it('an unknown capture is retried with the same key, then parked for review', () => {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    for (let i = 0; i < 6; i++) captureResult(s, 'cap_1', unknown());
    const keys = s.calls('capture').map((c) => c.providerKey);
    expect(new Set(keys).size).toBe(1);
    expect(keys).toHaveLength(4);
    s.lookupsFindNothing();
    expect(s.state).toBe('needs_review');
  });

  it('a capture answered unknown, then refused on every resend, is not failed: the first send may have captured', () => {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    captureResult(s, 'cap_1', unknown());
    for (let i = 0; i < 5; i++) captureResult(s, 'cap_1', notSent());
    s.lookupsFindNothing();
    expect(s.payment.captures[0]!.status).not.toBe('failed');
    expect(s.state).toBe('needs_review');
  });

  it('a capture refused on every send fails and the authorization stands', () => {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    for (let i = 0; i < 5; i++) captureResult(s, 'cap_1', notSent());
    expect(s.payment.captures[0]!.status).toBe('failed');
    expect(s.state).toBe('authorized');
  });

  it('a capture rejected after success (scheme) reduces the captured amount', () => {
    const s = authorizedSim('adyen_b');
    capture(s, 'cap_1', 1000);
    s.apply({ type: 'provider_fact', fact: { fact: 'capture_succeeded', captureId: 'cap_1' } });
    s.apply({ type: 'provider_fact', fact: { fact: 'capture_reversed', captureId: 'cap_1' } });
    expect(s.payment.amountCaptured).toBe(0);
    expect(s.state).toBe('failed');
    expect(s.effects.some((e) => e.type === 'ledger' && e.posting === 'capture_reversed')).toBe(true);
  });

  it('a capture reversed below what was refunded goes to review, books kept consistent', () => {
    const s = authorizedSim('adyen_b');
    capture(s, 'cap_1', 1000);
    s.apply({ type: 'provider_fact', fact: { fact: 'capture_succeeded', captureId: 'cap_1' } });
    refund(s, 'rfd_1', 300);
    refundResult(s, 'rfd_1', approved(300));
    s.apply({ type: 'provider_fact', fact: { fact: 'capture_reversed', captureId: 'cap_1' } });
    expect(s.state).toBe('needs_review');
    expect(s.payment.amountCaptured).toBeGreaterThanOrEqual(s.payment.amountRefunded);
  });
});

describe('voids and expiry', () => {
  it('void: voiding -> voided; a capture is refused while voiding', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    expect(s.state).toBe('voiding');
    expect(capture(s, 'cap_1', 100)).toMatchObject({ kind: 'illegal', code: 'invalid_state' });
    s.apply({ type: 'call_result', ref: { op: 'void' }, outcome: approved(0) });
    expect(s.state).toBe('voided');
  });

  it('a void joins a void in flight; a void of a voided payment is refused naming the state, as a capture of a captured one is', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    expect(s.apply({ type: 'void_requested' })).toMatchObject({ kind: 'noop' });
    s.apply({ type: 'call_result', ref: { op: 'void' }, outcome: approved(0) });
    expect(s.apply({ type: 'void_requested' })).toMatchObject({ kind: 'illegal', code: 'invalid_state', reason: 'cannot void a payment that is voided' });
    const c = authorizedSim();
    capture(c, 'cap_1', 1000);
    captureResult(c, 'cap_1', approved(1000));
    expect(c.state).toBe('captured');
    expect(capture(c, 'cap_2', 1)).toMatchObject({ kind: 'illegal', code: 'invalid_state', reason: 'cannot capture a payment that is captured' });
  });

  it('a refused void returns to authorized; an unknown void is retried then reviewed', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    s.apply({ type: 'call_result', ref: { op: 'void' }, outcome: declined('hard', false) });
    expect(s.state).toBe('authorized');
    s.apply({ type: 'void_requested' });
    expect(s.payment.voidOp!.no).toBe(2);
    for (let i = 0; i < 5; i++) s.apply({ type: 'call_result', ref: { op: 'void' }, outcome: unknown() });
    s.lookupsFindNothing();
    expect(s.state).toBe('needs_review');
    s.apply({ type: 'provider_fact', fact: { fact: 'void_succeeded' } });
    expect(s.state).toBe('voided');
  });

  it("a late answer to void 1 is never applied to void 2 (issue 41 §7)", () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    expect(s.calls('void').at(-1)?.voidNo).toBe(1);
    s.apply({ type: 'call_result', ref: { op: 'void', n: 1 }, outcome: declined('hard', false) });
    s.apply({ type: 'void_requested' });
    expect(s.calls('void').at(-1)?.voidNo).toBe(2);
    // A second execution of void 1's row answers late: it says nothing about void 2.
    expect(s.apply({ type: 'call_result', ref: { op: 'void', n: 1 }, outcome: declined('hard', false) }).kind).toBe('noop');
    expect(s.state).toBe('voiding');
    s.apply({ type: 'call_result', ref: { op: 'void', n: 2 }, outcome: approved(0) });
    expect(s.state).toBe('voided');
  });

  it('a void never sent returns to authorized after bounded resends', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    for (let i = 0; i < 5; i++) s.apply({ type: 'call_result', ref: { op: 'void' }, outcome: notSent() });
    expect(s.state).toBe('authorized');
  });

  it('a void answered unknown, then refused on every resend, goes to review: the first send may have voided', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    s.apply({ type: 'call_result', ref: { op: 'void' }, outcome: unknown() });
    for (let i = 0; i < 5; i++) s.apply({ type: 'call_result', ref: { op: 'void' }, outcome: notSent() });
    s.lookupsFindNothing();
    expect(s.state).toBe('needs_review');
  });

  it('before the hold lapses an uncaptured authorization is voided (default policy)', () => {
    const s = authorizedSim();
    const timer = s.effects.find((e) => e.type === 'timer' && e.timer === 'hold_expiry');
    // Stripe-like hold of 7 days, acted on 6 hours before it lapses.
    expect(timer).toMatchObject({ runAt: new Date(s.now.getTime() + 7 * 24 * 3_600_000 - 6 * 3_600_000).toISOString() });
    s.apply({ type: 'timer_fired', timer: 'hold_expiry' });
    expect(s.state).toBe('voiding');
    expect(s.calls('void')).toHaveLength(1);
  });

  it('hold expiry with the expire policy: authorized -> expired; the provider saying so does the same', () => {
    const s = new Sim(makeEnv({ core: { ...DEFAULT_CORE_POLICY, onHoldExpiry: 'expire' } }));
    s.authorize(approved());
    s.apply({ type: 'timer_fired', timer: 'hold_expiry' });
    expect(s.state).toBe('expired');
    const t = authorizedSim();
    t.apply({ type: 'provider_fact', fact: { fact: 'authorization_expired' } });
    expect(t.state).toBe('expired');
    expect(s.apply({ type: 'void_requested' })).toMatchObject({ kind: 'illegal' });
  });

  it('a void of a captured payment is illegal', () => {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    captureResult(s, 'cap_1', approved(1000));
    expect(s.apply({ type: 'void_requested' })).toMatchObject({ kind: 'illegal', code: 'invalid_state' });
  });
});

describe('refunds', () => {
  function capturedSim(): Sim {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    captureResult(s, 'cap_1', approved(1000));
    return s;
  }

  it('requested -> succeeded; state unchanged, amount_refunded grows', () => {
    const s = capturedSim();
    refund(s, 'rfd_1', 400);
    expect(s.calls('refund')[0]!.providerKey).toBe(`${s.payment.id}:refund:1`);
    refundResult(s, 'rfd_1', approved(400));
    expect(s.state).toBe('captured');
    expect(s.payment.amountRefunded).toBe(400);
  });

  it('refunds in flight count against the captured amount', () => {
    const s = capturedSim();
    refund(s, 'rfd_1', 700);
    expect(refund(s, 'rfd_2', 301)).toMatchObject({ kind: 'illegal', code: 'amount_exceeds_captured' });
    expect(refund(s, 'rfd_2', 300).kind).toBe('applied');
  });

  it('a failed refund frees its amount; a reversed refund gives it back', () => {
    const s = capturedSim();
    refund(s, 'rfd_1', 1000);
    refundResult(s, 'rfd_1', declined('hard', false));
    expect(s.payment.refunds[0]!.status).toBe('failed');
    refund(s, 'rfd_2', 1000);
    refundResult(s, 'rfd_2', { kind: 'pending', providerRef: 're_2' });
    expect(s.payment.refunds[1]!.status).toBe('pending');
    s.apply({ type: 'provider_fact', fact: { fact: 'refund_succeeded', refundId: 'rfd_2' } });
    expect(s.payment.amountRefunded).toBe(1000);
    s.apply({ type: 'provider_fact', fact: { fact: 'refund_reversed', refundId: 'rfd_2' } });
    expect(s.payment.amountRefunded).toBe(0);
    expect(s.payment.refunds[1]!.status).toBe('reversed');
  });

  it('a refund answered unknown, then refused on every resend, stays pending (amount reserved) for reconciliation', () => {
    const s = capturedSim();
    refund(s, 'rfd_1', 400);
    refundResult(s, 'rfd_1', unknown());
    for (let i = 0; i < 5; i++) refundResult(s, 'rfd_1', notSent());
    expect(s.payment.refunds[0]!.status).toBe('pending');
    expect(refund(s, 'rfd_2', 601)).toMatchObject({ kind: 'illegal', code: 'amount_exceeds_captured' });
  });

  it('a refund refused on every send fails and frees its amount', () => {
    const s = capturedSim();
    refund(s, 'rfd_1', 400);
    for (let i = 0; i < 5; i++) refundResult(s, 'rfd_1', notSent());
    expect(s.payment.refunds[0]!.status).toBe('failed');
  });

  it('refund of an uncaptured payment is illegal', () => {
    const s = authorizedSim();
    expect(refund(s, 'rfd_1', 10)).toMatchObject({ kind: 'illegal', code: 'invalid_state' });
  });

  it('a duplicate refund request is a no-op', () => {
    const s = capturedSim();
    refund(s, 'rfd_1', 10);
    expect(refund(s, 'rfd_1', 10).kind).toBe('noop');
  });
});

describe('why an operation failed (the resource and the answer say it)', () => {
  const rejected = { kind: 'not_sent', reason: 'validation', detail: 'This PaymentIntent could not be captured because it has a status of canceled.' } as const;

  it('a capture the provider rejects as invalid fails at once (no resend: it would be refused again) with the reason', () => {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    captureResult(s, 'cap_1', rejected);
    expect(s.calls('capture')).toHaveLength(1);
    expect(s.state).toBe('authorized');
    expect(s.payment.captures[0]).toMatchObject({ status: 'failed', failure: { kind: 'rejected', code: 'validation', providerCode: null, message: rejected.detail } });
  });

  it('a declined capture keeps our code, the provider code and the class', () => {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    captureResult(s, 'cap_1', declined('soft', false));
    expect(s.payment.captures[0]!.failure).toEqual({ kind: 'declined', code: 'processing_error', providerCode: 'x', declineClass: 'soft', message: null });
  });

  it('a capture never sent after its resends says so (not_sent, not rejected)', () => {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    for (let i = 0; i < 5; i++) captureResult(s, 'cap_1', notSent());
    expect(s.payment.captures[0]!.failure).toMatchObject({ kind: 'not_sent', code: 'connection_refused' });
  });

  it('a rejection after an unknown answer proves nothing: the capture stays pending, without a failure', () => {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    captureResult(s, 'cap_1', unknown());
    captureResult(s, 'cap_1', rejected);
    expect(s.payment.captures[0]).toMatchObject({ status: 'pending', failure: null });
  });

  it('refunds and voids record theirs the same way', () => {
    const s = authorizedSim();
    capture(s, 'cap_1', 1000);
    captureResult(s, 'cap_1', approved(1000));
    refund(s, 'rfd_1', 400);
    refundResult(s, 'rfd_1', rejected);
    expect(s.calls('refund')).toHaveLength(1);
    expect(s.payment.refunds[0]).toMatchObject({ status: 'failed', failure: { kind: 'rejected', code: 'validation' } });
    refund(s, 'rfd_2', 400);
    refundResult(s, 'rfd_2', declined('hard', false));
    expect(s.payment.refunds[1]!.failure).toMatchObject({ kind: 'declined', code: 'stolen_card', declineClass: 'hard' });

    const v = authorizedSim();
    v.apply({ type: 'void_requested' });
    v.apply({ type: 'call_result', ref: { op: 'void' }, outcome: rejected });
    expect(v.calls('void')).toHaveLength(1);
    expect(v.state).toBe('authorized');
    expect(v.payment.voidOp!.failure).toMatchObject({ kind: 'rejected', code: 'validation' });
    v.apply({ type: 'void_requested' });
    v.apply({ type: 'call_result', ref: { op: 'void' }, outcome: declined('hard', false) });
    expect(v.payment.voidOp).toMatchObject({ no: 2, failure: { kind: 'declined', code: 'stolen_card' } });
  });
});
