// Property tests: random, seeded input sequences (duplicated, reordered, late) against step().
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLegalEdge, notChargedProof, REVERSAL_EDGES, TERMINAL_STATES } from '../../../src/core/index.ts';
import type { CallOutcome, PaymentInput, PaymentState, ProviderCallEffect, TimerKind } from '../../../src/core/index.ts';
import { makeEnv, Sim } from './fixtures.ts';

const HOUR = 3_600_000;

const outcomeArb: fc.Arbitrary<(amount: number) => CallOutcome> = fc.oneof(
  fc.constantFrom<(a: number) => CallOutcome>(
    (a) => ({ kind: 'succeeded', providerRef: 'ref_ok', amount: a }),
    (a) => ({ kind: 'succeeded', providerRef: 'ref_ok', amount: Math.max(1, Math.floor(a / 2)) }),
    () => ({ kind: 'declined', class: 'hard', retryElsewhere: false, code: 'stolen_card', providerCode: '5' }),
    () => ({ kind: 'declined', class: 'soft', retryElsewhere: true, code: 'processing_error', providerCode: '4' }),
    () => ({ kind: 'not_sent', reason: 'connection_refused' }),
    () => ({ kind: 'not_sent', reason: 'breaker_open' }),
    () => ({ kind: 'pending', providerRef: 'ref_pending' }),
    () => ({ kind: 'action_required', action: 'redirect', providerRef: 'ref_action' }),
    () => ({ kind: 'action_required', action: 'redirect_to_url', providerRef: 'ref_action', redirect: { url: 'https://p.example/3ds', method: 'GET' } }),
    () => ({ kind: 'declined', class: 'hard', retryElsewhere: false, code: 'authentication_failed', providerCode: 'requires_payment_method', stillOpen: true }),
    () => ({ kind: 'declined', class: 'hard', retryElsewhere: false, code: 'authentication_required', providerCode: 'authentication_required' }),
    () => ({ kind: 'unknown', reason: 'timeout' }),
    () => ({ kind: 'unknown', reason: 'not_found' }),
    () => ({ kind: 'unknown', reason: 'already_done' }),
  ),
);

const actionArb = fc.record({
  kind: fc.integer({ min: 0, max: 10 }),
  pick: fc.nat(1000),
  amount: fc.integer({ min: -5, max: 1300 }),
  flag: fc.boolean(),
  outcome: outcomeArb,
  advance: fc.integer({ min: 0, max: 40 * HOUR }),
});
type Action = typeof actionArb extends fc.Arbitrary<infer T> ? T : never;
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

const scenarioArb = fc.record({
  captureMethod: fc.constantFrom<'manual' | 'automatic'>('manual', 'manual', 'automatic'),
  allowPartial: fc.boolean(),
  candidates: fc.constantFrom(['stripe_a', 'adyen_b'], ['adyen_b', 'stripe_a'], ['stripe_a'], ['adyen_b']),
  openBreaker: fc.constantFrom<string | null>(null, null, null, 'stripe_a'),
  returnUrl: fc.constantFrom<string | null>(null, 'https://shop.example/return', 'https://shop.example/return'),
  actions: fc.array(actionArb, { minLength: 1, maxLength: 60 }),
});

const TIMERS: TimerKind[] = ['resend', 'query', 'fence_retry', 'hold_expiry', 'max_lifetime', 'authentication_expiry', 'resume_retry'];

function pickOf<T>(xs: readonly T[], n: number): T | undefined {
  return xs.length === 0 ? undefined : xs[n % xs.length];
}

/** Turns a random action into an input that refers to what the payment really has. */
function toInput(s: Sim, a: Action, history: PaymentInput[]): PaymentInput | null {
  const p = s.payment;
  switch (a.kind) {
    case 0:
    case 1: {
      // kind 0 answers the newest call (the usual order), kind 1 any earlier one (late or duplicate).
      const calls = s.calls();
      const call = a.kind === 0 ? calls[calls.length - 1] : pickOf(calls, a.pick);
      if (call === undefined) return null;
      const outcome = a.outcome(call.amount);
      switch (call.op) {
        case 'capture':
          return { type: 'call_result', ref: { op: 'capture', captureId: call.captureId! }, outcome };
        case 'refund':
          return { type: 'call_result', ref: { op: 'refund', refundId: call.refundId! }, outcome };
        case 'void':
          return { type: 'call_result', ref: { op: 'void' }, outcome };
        case 'authorize':
          return { type: 'call_result', ref: { op: 'authorize', attemptId: call.attemptId, sendNo: call.sendNo! }, outcome };
        case 'lookup': {
          const { n, ...about } = call.lookup!;
          return { type: 'call_result', ref: { op: 'lookup', about, n }, outcome };
        }
        default:
          return { type: 'call_result', ref: { op: call.op, attemptId: call.attemptId }, outcome };
      }
    }
    case 2: {
      const attempt = pickOf(p.attempts, a.pick);
      const capture = pickOf(p.captures, a.pick);
      const refund = pickOf(p.refunds, a.pick);
      const facts = [
        attempt && { fact: 'authorization' as const, attemptId: attempt.id, outcome: a.outcome(p.amount) },
        attempt && { fact: a.flag ? ('fence_confirmed' as const) : ('fence_refused' as const), attemptId: attempt.id },
        capture && { fact: a.flag ? ('capture_succeeded' as const) : ('capture_reversed' as const), captureId: capture.id },
        capture && { fact: 'capture_failed' as const, captureId: capture.id },
        refund && { fact: a.flag ? ('refund_succeeded' as const) : ('refund_reversed' as const), refundId: refund.id },
        refund && { fact: 'refund_failed' as const, refundId: refund.id },
        { fact: a.flag ? ('void_succeeded' as const) : ('void_failed' as const) },
      ].filter((f) => f !== undefined);
      const fact = pickOf(facts, a.pick >> 3);
      return fact === undefined ? null : { type: 'provider_fact', fact };
    }
    case 3:
      return { type: 'capture_requested', captureId: `cap_${a.pick % 4}`, amount: a.amount, final: a.flag };
    case 4:
      return { type: 'void_requested' };
    case 5:
      return { type: 'refund_requested', refundId: `rfd_${a.pick % 5}`, amount: a.amount, reason: null };
    case 6: {
      const attempt = pickOf(p.attempts, a.pick);
      return { type: 'timer_fired', timer: TIMERS[a.pick % TIMERS.length]!, ...(attempt === undefined ? {} : { attemptId: attempt.id }) };
    }
    case 7:
      return { type: 'operator_resolved', as: (['authorized', 'failed', 'voided'] as const)[a.pick % 3]!, note: a.flag ? 'checked' : '' };
    case 8:
      s.advance(a.advance);
      return null;
    case 9: {
      // The customer's browser back from the provider's page (replays and strays included).
      const attempt = pickOf(p.attempts, a.pick);
      return attempt === undefined ? null : { type: 'customer_returned', attemptId: attempt.id, returned: a.flag ? { redirectResult: 'r' } : {} };
    }
    default:
      return pickOf(history, a.pick) ?? null; // a duplicate or late replay of an earlier input
  }
}

const isReversal = (from: PaymentState, to: PaymentState) => REVERSAL_EDGES.some(([f, t]) => f === from && t === to);

function logicalOp(e: ProviderCallEffect): string {
  switch (e.op) {
    case 'capture':
      return `capture:${e.captureId}`;
    case 'refund':
      return `refund:${e.refundId}`;
    default:
      return `${e.op}:${e.attemptId}`;
  }
}

function checkRun(scn: Scenario): void {
  const env = makeEnv({ openBreakers: new Set(scn.openBreaker === null ? [] : [scn.openBreaker]) });
  const s = new Sim(env, {
    captureMethod: scn.captureMethod,
    allowPartialAuthorization: scn.allowPartial,
    routing: { snapshot: 'v', rule: 'r', candidates: scn.candidates, skipped: [] },
    authentication: { mode: 'automatic', returnUrl: scn.returnUrl },
  });
  const history: PaymentInput[] = [];
  const keyOwner = new Map<string, string>();
  const opKey = new Map<string, string>();
  let effectsSeen = 0;
  // An oracle kept apart from step(): what the test told the core about each attempt's authorization.
  const told = new Map<string, { sends: number; notSent: Set<number>; maybe: number; declined: boolean; fenced: boolean }>();
  const tell = (id: string) => {
    let t = told.get(id);
    if (t === undefined) told.set(id, (t = { sends: 0, notSent: new Set(), maybe: 0, declined: false, fenced: false }));
    return t;
  };
  const record = (input: PaymentInput) => {
    if (input.type === 'call_result' && 'attemptId' in input.ref) {
      const t = tell(input.ref.attemptId);
      const o = input.outcome;
      if (input.ref.op === 'authorize' || input.ref.op === 'query' || input.ref.op === 'resume') {
        // A decline of a provider object still open (stillOpen) proves nothing until a cancel is confirmed.
        if (o.kind === 'declined' && o.stillOpen !== true) t.declined = true;
        else if (o.kind === 'declined') t.maybe += 1;
        else if (o.kind === 'not_sent') { if (input.ref.op === 'authorize') t.notSent.add(input.ref.sendNo ?? -1); }
        else t.maybe += 1;
      }
      if (input.ref.op === 'fence' && o.kind === 'succeeded') t.fenced = true;
    }
    // A lookup of a fence answered "already canceled" that finds the object cancelled confirms the fence.
    if (input.type === 'call_result' && input.ref.op === 'lookup' && input.ref.about.op === 'fence' && input.outcome.kind === 'succeeded') tell(input.ref.about.attemptId).fenced = true;
    if (input.type === 'provider_fact' && input.fact.fact === 'authorization') {
      const t = tell(input.fact.attemptId);
      if (input.fact.outcome.kind === 'declined' && input.fact.outcome.stillOpen !== true) t.declined = true;
      else if (input.fact.outcome.kind !== 'not_sent') t.maybe += 1;
    }
    if (input.type === 'provider_fact' && input.fact.fact === 'fence_confirmed') tell(input.fact.attemptId).fenced = true;
  };
  const provenUncharged = (id: string) => {
    const t = tell(id);
    return t.declined || t.fenced || (t.maybe === 0 && t.notSent.size >= t.sends);
  };

  const checkEffects = () => {
    for (const e of s.effects.slice(effectsSeen)) {
      if (e.type === 'provider_call' && e.op === 'authorize') tell(e.attemptId).sends += 1;
      if (e.type !== 'provider_call' || e.providerKey === null) continue;
      const op = logicalOp(e);
      if (e.op === 'authorize') expect(told.get(e.attemptId)?.declined ?? false, 'a declined operation is never resent').toBe(false);
      // void, release and resume keys are per numbered operation (a failed release is followed by a
      // new key; each return of the customer is a new resume); every other logical operation has exactly one key.
      const numbered = e.op === 'void' || e.op === 'release' || e.op === 'resume';
      if (!numbered) {
        const k = opKey.get(op);
        if (k === undefined) opKey.set(op, e.providerKey);
        else expect(e.providerKey, `same key for ${op}`).toBe(k);
      }
      const owner = keyOwner.get(e.providerKey);
      if (owner === undefined) keyOwner.set(e.providerKey, numbered ? `${e.op}:${e.providerKey}` : op);
      else expect(owner, 'one key, one logical operation').toBe(numbered ? `${e.op}:${e.providerKey}` : op);
      expect(e.providerKey.length).toBeLessThanOrEqual(env.policies[e.connector]!.maxKeyLength);
    }
    effectsSeen = s.effects.length;
  };
  checkEffects();

  for (const action of scn.actions) {
    const input = toInput(s, action, history);
    if (input === null) continue;
    history.push(input);
    const before = s.payment;
    const frozen = JSON.stringify(before);
    const r = s.apply(input);
    expect(JSON.stringify(before), 'step never mutates its input').toBe(frozen);
    if (r.kind !== 'applied') {
      expect(s.payment).toBe(before);
      continue;
    }
    record(input);
    const p = r.payment;
    // versions: bump on every write, never on a no-op
    expect(p.version).toBe(before.version + 1);
    expect(JSON.stringify({ ...p, version: 0 }) !== JSON.stringify({ ...before, version: 0 }) || r.effects.length > 0).toBe(true);
    // legal edges; terminal states left only by the reversal edges
    if (r.from !== r.to) {
      expect(isLegalEdge(r.from, r.to), `${r.from} -> ${r.to}`).toBe(true);
      if (TERMINAL_STATES.has(r.from)) expect(isReversal(r.from, r.to), `left terminal ${r.from} -> ${r.to}`).toBe(true);
    }
    // amounts
    expect(p.amountCaptured).toBeLessThanOrEqual(p.amountAuthorized);
    expect(p.amountRefunded).toBeLessThanOrEqual(p.amountCaptured);
    const committedRefunds = p.refunds.filter((x) => x.status !== 'failed' && x.status !== 'reversed').reduce((t, x) => t + x.amount, 0);
    expect(committedRefunds).toBeLessThanOrEqual(p.amountCaptured);
    for (const v of [p.amountAuthorized, p.amountCaptured, p.amountRefunded]) expect(Number.isSafeInteger(v) && v >= 0).toBe(true);
    // failover only with a proof for every earlier attempt
    if (p.attempts.length > before.attempts.length && before.attempts.length > 0) {
      for (const a of p.attempts.slice(0, -1)) {
        expect(notChargedProof(a), `attempt ${a.no} has no proof at failover`).not.toBeNull();
        expect(provenUncharged(a.id), `attempt ${a.no} may have charged, yet a new attempt started`).toBe(true);
      }
    }
    // never two live authorizations
    expect(p.attempts.filter((a) => a.status === 'authorized').length).toBeLessThanOrEqual(1);
    // nothing is captured before authentication completes
    if (p.state === 'requires_action') expect(p.amountCaptured + p.captures.length, 'captured while the customer authenticates').toBe(0);
    for (const a of p.attempts) {
      const auth = a.authentication;
      if (a.status === 'authenticating') expect(p.attempts[p.attempts.length - 1]!.id, 'only the current attempt waits for the customer').toBe(a.id);
      if (auth?.stage !== 'awaiting_customer' || a.status !== 'authenticating') continue;
      // no payment waits for its customer past the deadline without a fence in progress: whenever the
      // customer is given a (new) time, the timer that fences at it is set, never past the payment's deadline
      const old = before.attempts.find((b) => b.id === a.id)?.authentication;
      if (old?.stage !== 'awaiting_customer' || old.expiresAt !== auth.expiresAt) {
        expect(r.effects.some((e) => e.type === 'timer' && e.timer === 'authentication_expiry' && e.attemptId === a.id && e.runAt === auth.expiresAt), 'expiry timer set').toBe(true);
      }
      expect(Date.parse(auth.expiresAt!)).toBeLessThanOrEqual(Date.parse(p.deadlineAt));
      if (input.type === 'timer_fired' && input.timer === 'authentication_expiry' && input.attemptId === a.id) {
        expect(s.now.getTime() < Date.parse(auth.expiresAt!), 'still awaiting the customer after the expiry fired').toBe(true);
      }
    }
    // step-up: at most one attempt per connector with authentication forced, only with a return_url
    for (const c of new Set(p.attempts.map((a) => a.connector))) {
      expect(p.attempts.filter((a) => a.connector === c && a.authentication?.forced === true).length).toBeLessThanOrEqual(1);
    }
    if (scn.returnUrl === null) expect(p.attempts.some((a) => a.authentication?.forced === true || a.status === 'authenticating')).toBe(false);
    checkEffects();
  }
}

describe('step() properties', () => {
  it('holds every money rule over random input sequences', () => {
    fc.assert(fc.property(scenarioArb, (scn) => checkRun(scn)), { numRuns: 1500, seed: 20261130 });
  });

});
