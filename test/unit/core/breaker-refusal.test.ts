// A call refused by an open breaker (not_sent{breaker_open}) never left the process: it is neither
// proof nor a send, so it does not spend the resend budget. The same call (same key) goes out again
// after the breaker's reset time, bounded by the key's retention window and the operation's lifetime.
import { describe, expect, it } from 'vitest';
import { breakerRetryDelayMs, DEFAULT_CORE_POLICY, isCallStillWanted, notChargedProof } from '../../../src/core/index.ts';
import type { CallOutcome, PaymentInput, ProviderCallEffect } from '../../../src/core/index.ts';
import { notSentOnlyOnce } from '../../../src/jobs/outbox-processor.ts';
import { ADYEN_LIKE, approved, makeEnv, notSent, Sim, STRIPE_LIKE, unknown } from './fixtures.ts';

const HOUR = 3_600_000;
const RESET = 5_000;
const env = (over: Parameters<typeof makeEnv>[0] = {}) => makeEnv({ breakerResetMs: { stripe_a: RESET, adyen_b: RESET }, ...over });
const refused = notSent('breaker_open');

function authorizedSim(connector: 'stripe_a' | 'adyen_b' = 'stripe_a', e = env()): Sim {
  const s = new Sim(e, { routing: { snapshot: 'v', rule: 'r', candidates: [connector], skipped: [] } });
  s.authorize(approved());
  expect(s.state).toBe('authorized');
  return s;
}

const last = (s: Sim, op: ProviderCallEffect['op']): ProviderCallEffect => {
  const calls = s.calls(op);
  return calls[calls.length - 1]!;
};

/** The worker's view: run the newest call of `op` when it is due, if the payment still wants it, and apply its answer. */
function runDue(s: Sim, op: ProviderCallEffect['op'], outcome: CallOutcome): ProviderCallEffect | null {
  const e = last(s, op);
  if (!isCallStillWanted(s.payment, e).wanted) return null;
  if (e.runAt !== undefined && Date.parse(e.runAt) > s.now.getTime()) s.now = new Date(e.runAt);
  const ref: PaymentInput = {
    type: 'call_result', outcome,
    ref: op === 'capture' ? { op, captureId: e.captureId! } : op === 'refund' ? { op, refundId: e.refundId! } : op === 'void' ? { op } : { op: 'authorize', attemptId: e.attemptId, sendNo: e.sendNo! },
  };
  s.apply(ref);
  return e;
}

/** Answers the newest call with `outcome` `times` times; returns the delays of the calls written after each refusal. */
function refuseRepeatedly(s: Sim, op: ProviderCallEffect['op'], times: number): number[] {
  const delays: number[] = [];
  for (let i = 0; i < times; i++) {
    const before = s.calls(op).length;
    expect(runDue(s, op, refused)).not.toBeNull();
    expect(s.calls(op).length, `refusal ${i + 1} writes the same call again`).toBe(before + 1);
    delays.push(Date.parse(last(s, op).runAt!) - s.now.getTime());
  }
  return delays;
}

/**
 * Refuses the newest call whenever it is due until nothing more is written. Returns when each call
 * written without spending the budget (`spent` unchanged: a breaker wait) was due.
 */
function refuseUntilDone(s: Sim, op: ProviderCallEffect['op'], spent: () => number): number[] {
  const waits: number[] = [];
  for (let i = 0; i < 10_000; i++) {
    const before = s.calls(op).length;
    const budget = spent();
    if (runDue(s, op, refused) === null || s.calls(op).length === before) return waits;
    if (spent() === budget) waits.push(Date.parse(last(s, op).runAt!));
  }
  throw new Error('breaker refusals never ended');
}

describe('the wait after a breaker refusal', () => {
  it('is at least the reset time, grows with the time waited up to 4 reset times, with jitter of at most 50%', () => {
    for (const waited of [0, 1_000, 5_000, 12_000, 60_000, 10 * HOUR]) {
      for (const seed of ['a', 'b', 'c', 'd']) {
        const ms = breakerRetryDelayMs(RESET, waited, 15 * 60_000, seed);
        expect(ms).toBeGreaterThanOrEqual(Math.max(RESET, Math.min(waited, 4 * RESET)));
        expect(ms).toBeLessThanOrEqual(1.5 * Math.min(4 * RESET, Math.max(RESET, waited)));
      }
    }
    // the backoff cap bounds the growth, never the reset time
    expect(breakerRetryDelayMs(RESET, HOUR, 1_000, 's')).toBeGreaterThanOrEqual(RESET);
  });
});

describe('authorize resend after an unknown outcome', () => {
  // Adyen-like: no query by reference, so an unknown is resolved by resending with the same key.
  const unknownSim = () => {
    const s = new Sim(env(), { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b', 'stripe_a'], skipped: [] } });
    runDue(s, 'authorize', unknown());
    expect(s.state).toBe('auth_unknown');
    expect(s.attempt.sends).toBe(2);
    return s;
  };

  it('repeated refusals do not spend the resends: the same send, same key, after the reset time, then it completes', () => {
    const s = unknownSim();
    const key = s.attempt.authKey;
    const delays = refuseRepeatedly(s, 'authorize', 10);
    expect(s.attempt.sends).toBe(2);
    expect(s.state).toBe('auth_unknown');
    expect(s.attempt.status).toBe('unknown');
    expect(s.calls('fence')).toHaveLength(0);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(RESET);
    const resent = s.calls('authorize').slice(1);
    expect(new Set(resent.map((c) => c.providerKey))).toEqual(new Set([key]));
    expect(new Set(resent.map((c) => c.sendNo))).toEqual(new Set([2]));
    // no proof: it never fails over
    expect(s.payment.attempts).toHaveLength(1);
    expect(notChargedProof(s.attempt)).toBeNull();

    // the breaker closed: the send goes out and the provider answers
    runDue(s, 'authorize', approved(1000, 'psp_9'));
    expect(s.state).toBe('authorized');
    expect(s.attempt.sends).toBe(2);
  });

  it('counts the sends that went out as before: unknown answers still exhaust the budget', () => {
    const s = unknownSim();
    refuseRepeatedly(s, 'authorize', 5);
    for (let i = 0; i < 3; i++) runDue(s, 'authorize', unknown());
    expect(s.attempt.sends).toBe(4);
    expect(s.attempt.status).toBe('fencing');
  });

  it('the payment deadline ends the waiting: the attempt is fenced, never failed over', () => {
    const s = unknownSim();
    s.advance(71 * HOUR + 59 * 60_000);
    const waits = refuseUntilDone(s, 'authorize', () => s.attempt.sends);
    expect(waits.length).toBeGreaterThan(0);
    for (const at of waits) expect(at).toBeLessThan(Date.parse(s.payment.deadlineAt));
    if (Date.parse(s.payment.deadlineAt) > s.now.getTime()) s.now = new Date(s.payment.deadlineAt);
    s.apply({ type: 'timer_fired', timer: 'max_lifetime' });
    expect(s.attempt.status).toBe('fencing');
    expect(isCallStillWanted(s.payment, last(s, 'authorize')).wanted).toBe(false);
    expect(s.payment.attempts).toHaveLength(1);
  });

  it('the key retention window ends the waiting', () => {
    // retention 3 h minus the 1 h margin: no send with this key after 2 h
    const short = env({ policies: { stripe_a: STRIPE_LIKE, adyen_b: { ...ADYEN_LIKE, keyRetentionMs: 3 * HOUR } } });
    const s = new Sim(short, { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b'], skipped: [] } });
    runDue(s, 'authorize', unknown());
    const firstSent = Date.parse(s.attempt.firstSentAt!);
    s.advance(HOUR + 55 * 60_000);
    const waits = refuseUntilDone(s, 'authorize', () => s.attempt.sends);
    expect(waits.length).toBeGreaterThan(0);
    for (const at of waits) expect(at - firstSent).toBeLessThan(2 * HOUR);
    expect(s.attempt.status).toBe('fencing');
    expect(s.state).toBe('auth_unknown');
  });

  it('a refusal of a send already superseded by a newer one changes nothing', () => {
    const s = unknownSim();
    const send2 = last(s, 'authorize');
    s.apply({ type: 'timer_fired', timer: 'resend', attemptId: s.attempt.id });
    expect(s.attempt.sends).toBe(3);
    const calls = s.calls('authorize').length;
    const r = s.apply({ type: 'call_result', ref: { op: 'authorize', attemptId: send2.attemptId, sendNo: 2 }, outcome: refused });
    expect(r.kind).toBe('noop');
    expect(s.calls('authorize')).toHaveLength(calls);
    expect(s.attempt.sends).toBe(3);
  });

  it('a first send refused by the breaker is still proof: fail over as before', () => {
    const s = new Sim(env(), { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b', 'stripe_a'], skipped: [] } });
    runDue(s, 'authorize', refused);
    expect(s.payment.attempts[0]!.proof).toBe('not_sent');
    expect(s.attempt.connector).toBe('stripe_a');
  });

  it('a first send refused by the breaker with no other candidate fails as before', () => {
    const s = new Sim(env(), { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b'], skipped: [] } });
    runDue(s, 'authorize', refused);
    expect(s.state).toBe('failed');
    expect(s.calls('authorize')).toHaveLength(1);
  });
});

describe('capture', () => {
  const capture = (s: Sim) => s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });

  it('repeated refusals do not spend the calls; same key after the reset time; completes when the breaker closes', () => {
    const s = authorizedSim();
    capture(s);
    const key = s.payment.captures[0]!.providerKey;
    const delays = refuseRepeatedly(s, 'capture', 10);
    expect(s.payment.captures[0]!).toMatchObject({ calls: 1, status: 'requested' });
    expect(s.state).toBe('capturing');
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(RESET);
    expect(new Set(s.calls('capture').map((c) => c.providerKey))).toEqual(new Set([key]));
    runDue(s, 'capture', approved(1000));
    expect(s.state).toBe('captured');
    expect(s.payment.amountCaptured).toBe(1000);
  });

  it('after an unknown answer, refusals keep it pending instead of parking it; then it completes', () => {
    const s = authorizedSim();
    capture(s);
    runDue(s, 'capture', unknown());
    refuseRepeatedly(s, 'capture', 10);
    expect(s.payment.captures[0]!).toMatchObject({ calls: 2, status: 'pending' });
    expect(s.state).toBe('capturing');
    expect(s.effects.some((e) => e.type === 'discrepancy')).toBe(false);
    runDue(s, 'capture', approved(1000));
    expect(s.state).toBe('captured');
  });

  it('the key retention window ends the waiting: never sent -> failed, authorization stands', () => {
    const s = authorizedSim('stripe_a');
    capture(s);
    const requested = Date.parse(s.payment.captures[0]!.createdAt);
    s.advance(22 * HOUR + 55 * 60_000);
    const waits = refuseUntilDone(s, 'capture', () => s.payment.captures[0]!.calls);
    expect(waits.length).toBeGreaterThan(0);
    expect(s.payment.captures[0]!.status).toBe('failed');
    expect(s.state).toBe('authorized');
    // Stripe-like: 24 h retention minus the 1 h margin
    for (const at of waits) expect(at - requested).toBeLessThan(23 * HOUR);
  });

  it('the lifetime ends the waiting after an unknown answer: parked for review as before', () => {
    const s = authorizedSim('adyen_b'); // 7 d retention: the 72 h lifetime comes first
    capture(s);
    const requested = Date.parse(s.payment.captures[0]!.createdAt);
    runDue(s, 'capture', unknown());
    s.advance(71 * HOUR + 55 * 60_000);
    const waits = refuseUntilDone(s, 'capture', () => s.payment.captures[0]!.calls);
    expect(waits.length).toBeGreaterThan(0);
    // Looked up before it parks (issue 41 §6): parked once the lookups find nothing.
    s.lookupsFindNothing();
    expect(s.state).toBe('needs_review');
    expect(s.effects.some((e) => e.type === 'discrepancy' && e.kind === 'capture_unresolved')).toBe(true);
    for (const at of waits) expect(at - requested).toBeLessThan(DEFAULT_CORE_POLICY.maxLifetimeMs);
  });
  it('a refusal on a re-executed outbox row is still unknown{earlier_execution}: counted, and the capture is pending', () => {
    const s = authorizedSim();
    capture(s);
    const outcome = notSentOnlyOnce(refused, last(s, 'capture'), 2);
    expect(outcome).toMatchObject({ kind: 'unknown', reason: 'earlier_execution' });
    runDue(s, 'capture', outcome);
    expect(s.payment.captures[0]!).toMatchObject({ calls: 2, status: 'pending' });
  });
});

describe('refund', () => {
  const capturedSim = () => {
    const s = authorizedSim();
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    runDue(s, 'capture', approved(1000));
    expect(s.state).toBe('captured');
    s.apply({ type: 'refund_requested', refundId: 'rfd_1', amount: 400, reason: null });
    return s;
  };

  it('repeated refusals do not spend the calls; same key after the reset time; completes when the breaker closes', () => {
    const s = capturedSim();
    const key = s.payment.refunds[0]!.providerKey;
    const delays = refuseRepeatedly(s, 'refund', 10);
    expect(s.payment.refunds[0]!).toMatchObject({ calls: 1, status: 'requested' });
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(RESET);
    expect(new Set(s.calls('refund').map((c) => c.providerKey))).toEqual(new Set([key]));
    runDue(s, 'refund', approved(400));
    expect(s.payment.refunds[0]!.status).toBe('succeeded');
    expect(s.payment.amountRefunded).toBe(400);
  });

  it('after an unknown answer, refusals keep it pending without a discrepancy; then it completes', () => {
    const s = capturedSim();
    runDue(s, 'refund', unknown());
    refuseRepeatedly(s, 'refund', 10);
    expect(s.payment.refunds[0]!).toMatchObject({ calls: 2, status: 'pending' });
    expect(s.effects.some((e) => e.type === 'discrepancy')).toBe(false);
    runDue(s, 'refund', approved(400));
    expect(s.payment.refunds[0]!.status).toBe('succeeded');
  });

  it('the key retention window ends the waiting: handed to reconciliation as before', () => {
    const s = capturedSim();
    const requested = Date.parse(s.payment.refunds[0]!.createdAt);
    runDue(s, 'refund', unknown());
    s.advance(22 * HOUR + 55 * 60_000);
    const waits = refuseUntilDone(s, 'refund', () => s.payment.refunds[0]!.calls);
    expect(waits.length).toBeGreaterThan(0);
    s.lookupsFindNothing();
    expect(s.payment.refunds[0]!.status).toBe('pending');
    expect(s.effects.some((e) => e.type === 'discrepancy' && e.kind === 'refund_unresolved')).toBe(true);
    for (const at of waits) expect(at - requested).toBeLessThan(23 * HOUR);
  });
});

describe('void', () => {
  it('repeated refusals do not spend the calls; same key after the reset time; completes when the breaker closes', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    const key = s.payment.voidOp!.providerKey;
    const delays = refuseRepeatedly(s, 'void', 10);
    expect(s.payment.voidOp!.calls).toBe(1);
    expect(s.state).toBe('voiding');
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(RESET);
    expect(new Set(s.calls('void').map((c) => c.providerKey))).toEqual(new Set([key]));
    runDue(s, 'void', approved(0));
    expect(s.state).toBe('voided');
  });

  it('after an unknown answer, refusals do not park it for review; then it completes', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    runDue(s, 'void', unknown());
    refuseRepeatedly(s, 'void', 10);
    expect(s.payment.voidOp).toMatchObject({ calls: 2, maybeReached: true });
    expect(s.state).toBe('voiding');
    runDue(s, 'void', approved(0));
    expect(s.state).toBe('voided');
  });

  it('the key retention window ends the waiting: never sent -> authorized again; after an unknown -> review', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    s.advance(22 * HOUR + 55 * 60_000);
    expect(refuseUntilDone(s, 'void', () => s.payment.voidOp!.calls).length).toBeGreaterThan(0);
    expect(s.state).toBe('authorized');

    const t = authorizedSim();
    t.apply({ type: 'void_requested' });
    const requested = Date.parse(t.payment.voidOp!.requestedAt!);
    runDue(t, 'void', unknown());
    t.advance(22 * HOUR + 55 * 60_000);
    const waits = refuseUntilDone(t, 'void', () => t.payment.voidOp!.calls);
    expect(waits.length).toBeGreaterThan(0);
    t.lookupsFindNothing();
    expect(t.state).toBe('needs_review');
    for (const at of waits) expect(at - requested).toBeLessThan(23 * HOUR);
  });

  it('a void recorded before requestedAt was kept counts refusals as before', () => {
    const s = authorizedSim();
    s.apply({ type: 'void_requested' });
    const { requestedAt: _dropped, ...legacy } = s.payment.voidOp!;
    s.payment = { ...s.payment, voidOp: legacy };
    for (let i = 0; i < 4; i++) runDue(s, 'void', refused);
    expect(s.state).toBe('authorized');
  });
});

it('a core policy without the connector reset time waits core.breakerResetMs', () => {
  const s = authorizedSim('stripe_a', makeEnv());
  s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
  const [d] = refuseRepeatedly(s, 'capture', 1);
  expect(d).toBeGreaterThanOrEqual(DEFAULT_CORE_POLICY.breakerResetMs);
});
