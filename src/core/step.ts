// step(payment, input, now, env): the pure transition function over the payment aggregate.
// It reads no clock, database or network; effects are returned as data for the shell to run.

import { Draft, illegal, IllegalEdgeError, noop } from './draft.ts';
import type { StepEnv, StepResult } from './draft.ts';
import {
  afterProof, fence, isPastDeadline, onAuthorizationOutcome, onFenceConfirmed, onFenceRefused,
  onPrepareOutcome, resolveUnknown, startAttempt,
} from './step-authorize.ts';
import {
  authorizedAttempt, onAutoCaptureReversed, onCaptureOutcome, onCaptureReversed, onRefundOutcome, onRefundReversed,
  onVoidOutcome, requestCapture, requestRefund, requestVoid,
} from './step-modify.ts';
import { nextCandidate } from './failover.ts';
import { onEarlierReleaseOutcome, onReleaseEvent, onReleaseOutcome } from './step-release.ts';
import { onLookupOutcome } from './step-lookup.ts';
import { emitLookup, isAlreadyDone } from './lookup-effect.ts';
import { onOperator } from './step-operator.ts';
import { onParkedRecheck } from './step-parked.ts';
import { abandonAuthentication, onAuthenticationExpiry, onCustomerReturned, onResumeOutcome, onResumeRetry } from './step-authenticate.ts';
import { assertNever, isLegalEdge } from './states.ts';
import type { OperationRef, PaymentInput, ProviderFact, TimerKind } from './inputs.ts';
import type { CallOutcome } from './outcome.ts';
import type { Effect } from './effects.ts';
import type { Payment } from './payment.ts';

export type { StepEnv, StepResult } from './draft.ts';

export function step(payment: Payment, input: PaymentInput, now: Date, env: StepEnv): StepResult {
  const d = new Draft(payment, now, env);
  try {
    const early = dispatch(d, input);
    return early ?? d.finalize();
  } catch (err) {
    // What the provider tells us (and a worker's timer) is never refused by throwing: a worker
    // would retry it until it is dead-lettered, a reconcile run would stop. A fact the state cannot
    // take is a discrepancy.
    if (!(err instanceof IllegalEdgeError) || !FROM_PROVIDER.has(input.type)) throw err;
    return factAfterResolution(payment, now, env, err);
  }
}

const FROM_PROVIDER: ReadonlySet<PaymentInput['type']> = new Set(['provider_fact', 'call_result', 'timer_fired']);

/** The fact is recorded, not applied: a discrepancy for a person, and the payment parked when it may be. */
function factAfterResolution(payment: Payment, now: Date, env: StepEnv, err: IllegalEdgeError): StepResult {
  const d = new Draft(payment, now, env);
  d.emit({ type: 'discrepancy', kind: 'fact_after_resolution', detail: `the provider's news would take ${err.from} -> ${err.to}, which is not a legal edge: ${err.message}` });
  if (isLegalEdge(d.p.state, 'needs_review')) d.setState('needs_review', `provider news after resolution (${err.from} -> ${err.to}): parked for review`);
  else d.note(`provider news after resolution (${err.from} -> ${err.to}): recorded as a discrepancy`);
  return d.finalize();
}

/** The API's bound on metadata keys (src/api/request-schemas.ts), kept when a change merges into them. */
export const MAX_METADATA_KEYS = 50;

/** Merges the change into the metadata (null removes a key); nothing else moves. The API checks the limits. */
function updateMetadata(d: Draft, change: Readonly<Record<string, string | null>>): StepResult | null {
  const next: Record<string, string> = { ...d.p.metadata };
  for (const [k, v] of Object.entries(change)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  // Checked here, on the version the change applies to: two concurrent changes cannot pass the bound together.
  if (Object.keys(next).length > MAX_METADATA_KEYS) return illegal('too_many_metadata_keys', `the change would leave ${Object.keys(next).length} metadata keys; at most ${MAX_METADATA_KEYS}`);
  const same = Object.keys(next).length === Object.keys(d.p.metadata).length && Object.entries(next).every(([k, v]) => d.p.metadata[k] === v);
  if (same) return noop('metadata unchanged');
  d.p.metadata = next;
  d.note(`metadata updated (${Object.keys(change).sort().join(', ')})`);
  d.event('payment.updated');
  return null;
}

function dispatch(d: Draft, input: PaymentInput): StepResult | null {
  switch (input.type) {
    case 'submit':
      return submit(d);
    case 'call_result':
      return onCallResult(d, input.ref, input.outcome);
    case 'provider_fact':
      return onFact(d, input.fact);
    case 'capture_requested':
      return requestCapture(d, input.captureId, input.amount, input.final);
    case 'void_requested':
      return requestVoid(d);
    case 'metadata_updated':
      return updateMetadata(d, input.metadata);
    case 'refund_requested':
      return requestRefund(d, input.refundId, input.amount, input.reason);
    case 'timer_fired':
      return onTimer(d, input.timer, input.attemptId);
    case 'operator_resolved':
      return onOperator(d, input);
    case 'customer_returned':
      // While a void of the attempt awaiting the customer is in flight, the cancel decides; a refused
      // cancel puts the page back, and the customer may return again.
      if (d.p.state === 'voiding') return noop('customer returned while the payment is being voided');
      return onCustomerReturned(d, input.attemptId, input.returned);
    default:
      return assertNever(input, 'input');
  }
}

function submit(d: Draft): StepResult | null {
  if (d.p.state !== 'created') return noop(`already submitted (${d.p.state})`);
  const next = nextCandidate({
    attempts: d.attempts, candidates: d.p.routing.candidates, openBreakers: d.env.openBreakers,
    policies: d.env.policies, captureMethod: d.p.captureMethod, vaultedCard: d.p.vaultedCard !== undefined,
  });
  if (next.skipped.length > 0) d.setRouting({ ...d.p.routing, skipped: [...d.p.routing.skipped, ...next.skipped] });
  if (next.connector === null) {
    d.setState('failed', 'no connector available');
    return null;
  }
  d.setState('authorizing', 'submitted');
  startAttempt(d, next.connector);
  d.emit({ type: 'timer', timer: 'max_lifetime', runAt: d.p.deadlineAt });
  return null;
}

function attemptOrNoop(d: Draft, attemptId: string): ReturnType<Draft['attempt']> {
  return d.attempt(attemptId);
}

function onCallResult(d: Draft, ref: OperationRef, outcome: CallOutcome): StepResult | null {
  switch (ref.op) {
    case 'resume': {
      const attempt = d.attempt(ref.attemptId);
      if (attempt === undefined) return noop(`no attempt ${ref.attemptId}`);
      return onResumeOutcome(d, attempt, outcome);
    }
    case 'prepare':
    case 'authorize':
    case 'query':
    case 'fence':
    case 'release': {
      const attempt = attemptOrNoop(d, ref.attemptId);
      if (attempt === undefined) return noop(`no attempt ${ref.attemptId}`);
      if (ref.op === 'prepare') onPrepareOutcome(d, attempt, outcome);
      else if (ref.op === 'authorize') onAuthorizationOutcome(d, attempt, outcome, 'call', ref.sendNo);
      else if (ref.op === 'query') {
        const parked = attempt.status === 'review' && d.p.state === 'needs_review';
        if (attempt.status !== 'unknown' && attempt.status !== 'authorizing' && !parked) return noop(`query answer for attempt in ${attempt.status}`);
        onAuthorizationOutcome(d, attempt, outcome, 'query');
      } else if (ref.op === 'fence') onFenceOutcome(d, attempt, outcome);
      else if (ref.op === 'release' && ref.providerKey !== undefined && attempt.release !== null && ref.providerKey !== attempt.release.providerKey) {
        // An earlier round's late answer: it may name that round's object, never the current round's.
        onEarlierReleaseOutcome(d, attempt, ref.providerKey, outcome);
      } else onReleaseOutcome(d, attempt, outcome);
      return null;
    }
    case 'capture':
      return onCaptureOutcome(d, ref.captureId, outcome);
    case 'void':
      return onVoidOutcome(d, outcome, ref.n);
    case 'refund':
      return onRefundOutcome(d, ref.refundId, outcome);
    case 'lookup':
      return onLookupOutcome(d, ref.about, ref.n, outcome, onFenceOutcome);
    default:
      return assertNever(ref, 'operation');
  }
}

function onFenceOutcome(d: Draft, attempt: NonNullable<ReturnType<Draft['attempt']>>, o: CallOutcome): void {
  if (attempt.status !== 'fencing') return d.note(`fence answer for attempt in ${attempt.status} ignored`);
  switch (o.kind) {
    case 'succeeded':
      return onFenceConfirmed(d, attempt, o.providerRef);
    case 'pending':
      // Accepted (Adyen technical cancel): only the provider's confirmation is proof. Ask again if it stays silent.
      d.emit({ type: 'timer', timer: 'fence_retry', attemptId: attempt.id, runAt: d.at(d.env.core.backoffCapMs) });
      return d.note('fence accepted; waiting for confirmation');
    case 'declined':
      return onFenceRefused(d, attempt);
    case 'not_sent':
    case 'unknown':
    case 'action_required':
      // "Already canceled": the object is cancelled, by this fence or another hand; read it back
      // instead of sending the same cancel to be refused the same way.
      if (isAlreadyDone(o)) {
        emitLookup(d, attempt, { op: 'fence', attemptId: attempt.id }, 1, d.p.amount);
        return d.note('fence answered already done: looking it up');
      }
      return fence(d, attempt, `fence answered ${o.kind}`);
  }
}

function onFact(d: Draft, fact: ProviderFact): StepResult | null {
  switch (fact.fact) {
    case 'authorization': {
      const attempt = d.attempt(fact.attemptId);
      if (attempt === undefined) return noop(`no attempt ${fact.attemptId}`);
      onAuthorizationOutcome(d, attempt, fact.outcome, 'event');
      return null;
    }
    case 'fence_confirmed':
    case 'fence_refused': {
      const attempt = d.attempt(fact.attemptId);
      if (attempt === undefined) return noop(`no attempt ${fact.attemptId}`);
      if (fact.fact === 'fence_confirmed') onFenceConfirmed(d, attempt, fact.providerRef);
      else onFenceRefused(d, attempt);
      return null;
    }
    case 'capture_succeeded':
      return onCaptureOutcome(d, fact.captureId, { kind: 'succeeded', providerRef: fact.providerRef ?? '', amount: 0 });
    case 'capture_failed':
      return onCaptureOutcome(d, fact.captureId, { kind: 'declined', class: 'hard', retryElsewhere: false, code: 'capture_failed', providerCode: 'capture_failed' });
    case 'capture_reversed':
      return onCaptureReversed(d, fact.captureId);
    case 'void_succeeded':
      return onVoidOutcome(d, { kind: 'succeeded', providerRef: '', amount: 0 });
    case 'void_failed':
      return onVoidOutcome(d, { kind: 'declined', class: 'hard', retryElsewhere: false, code: 'void_failed', providerCode: 'void_failed' });
    case 'void_already_done':
      return onVoidOutcome(d, { kind: 'unknown', reason: 'already_done', detail: fact.detail });
    case 'capture_already_done':
      return onCaptureOutcome(d, fact.captureId, { kind: 'unknown', reason: 'already_done', detail: fact.detail });
    case 'refund_succeeded':
      return onRefundOutcome(d, fact.refundId, { kind: 'succeeded', providerRef: fact.providerRef ?? '', amount: 0 });
    case 'refund_failed':
      return onRefundOutcome(d, fact.refundId, { kind: 'declined', class: 'hard', retryElsewhere: false, code: 'refund_failed', providerCode: 'refund_failed' });
    case 'refund_reversed':
      return onRefundReversed(d, fact.refundId);
    case 'authorization_expired':
      return expireHold(d, 'the provider released the authorization');
    case 'release_succeeded':
    case 'release_failed': {
      const attempt = d.attempt(fact.attemptId);
      if (attempt === undefined) return noop(`no attempt ${fact.attemptId}`);
      onReleaseEvent(d, attempt, {
        ok: fact.fact === 'release_succeeded',
        ...(fact.providerRef === undefined ? {} : { providerRef: fact.providerRef }),
        ...(fact.reference === undefined ? {} : { reference: fact.reference }),
        ...(fact.reversal === undefined ? {} : { reversal: fact.reversal }),
      });
      return null;
    }
    case 'auto_capture_reversed':
      return onAutoCaptureReversed(d, fact.attemptId, fact.amount, fact.providerRef);
    default:
      return assertNever(fact, 'fact');
  }
}

function expireHold(d: Draft, why: string): StepResult | null {
  if (d.p.state !== 'authorized' || d.p.amountCaptured > 0) return noop(`hold expiry while ${d.p.state}`);
  const a = authorizedAttempt(d);
  if (a !== undefined) d.updateAttempt(a.id, { status: 'released' });
  d.setState('expired', why);
  return null;
}

function onTimer(d: Draft, timer: TimerKind, attemptId: string | undefined): StepResult | null {
  switch (timer) {
    case 'hold_expiry': {
      if (d.p.state !== 'authorized' || d.p.amountCaptured > 0) return noop(`hold expiry while ${d.p.state}`);
      if (d.env.core.onHoldExpiry === 'void') return requestVoid(d);
      return expireHold(d, 'authorization hold about to lapse');
    }
    case 'query':
    case 'resend': {
      const attempt = attemptId === undefined ? undefined : d.attempt(attemptId);
      if (attempt === undefined) return noop('timer for no attempt');
      if (attempt.status === 'preparing') {
        // Stalled before the authorize call was ever written: nothing can have been charged.
        d.updateAttempt(attempt.id, { status: 'abandoned', proof: 'not_sent', notSentReason: 'prepare_stalled' });
        afterProof(d);
        return null;
      }
      if (attempt.status !== 'unknown' && attempt.status !== 'authorizing') return noop(`timer for attempt in ${attempt.status}`);
      // Silence from the provider (or a stalled call) is treated as an unknown: ask, never guess.
      resolveUnknown(d, d.updateAttempt(attempt.id, { status: 'unknown', maybeReached: true }), false);
      return null;
    }
    case 'fence_retry': {
      const attempt = attemptId === undefined ? undefined : d.attempt(attemptId);
      if (attempt === undefined || attempt.status !== 'fencing') return noop('no fence waiting');
      fence(d, attempt, 'fence confirmation did not arrive');
      return null;
    }
    case 'max_lifetime':
      return onDeadline(d);
    case 'authentication_expiry':
      // Set again for the same instant if the void is refused (step-modify.ts voidRefused).
      if (d.p.state === 'voiding') return noop('authentication expiry while the payment is being voided');
      return onAuthenticationExpiry(d, attemptId);
    case 'resume_retry':
      return onResumeRetry(d, attemptId);
    case 'parked_recheck':
      return onParkedRecheck(d);
    default:
      return assertNever(timer, 'timer');
  }
}

/** Nothing stays in flight forever: fence what may have charged, fail what provably did not. */
function onDeadline(d: Draft): StepResult | null {
  if (!isPastDeadline(d)) return noop('deadline not reached');
  const attempt = d.attempts[d.attempts.length - 1];
  if (d.p.state === 'created') {
    d.setState('failed', 'deadline passed before submission');
    return null;
  }
  if (attempt === undefined || !['authorizing', 'auth_unknown', 'requires_action'].includes(d.p.state)) return noop(`deadline while ${d.p.state}`);
  switch (attempt.status) {
    case 'preparing':
      d.updateAttempt(attempt.id, { status: 'abandoned', proof: 'not_sent', notSentReason: 'deadline' });
      afterProof(d);
      return null;
    case 'authorizing':
    case 'unknown':
      fence(d, d.updateAttempt(attempt.id, { maybeReached: true }), 'deadline passed');
      return null;
    case 'fencing':
      return noop('fence already in flight');
    case 'authenticating':
      // Still waiting for the customer (or for the resume's answer) at the payment's deadline: cancel.
      if (attempt.authentication?.stage === 'awaiting_customer') abandonAuthentication(d, attempt, 'deadline passed while the customer was authenticating');
      else fence(d, attempt, 'deadline passed while resuming after authentication');
      return null;
    default:
      afterProof(d);
      return null;
  }
}

// ---- creation ------------------------------------------------------------------------------

/** What a new payment starts from: the payment's own fields that its creator decides. */
export type NewPaymentRequest = Pick<
  Payment,
  'id' | 'merchantId' | 'livemode' | 'reference' | 'amount' | 'currency' | 'captureMethod' | 'allowPartialAuthorization' | 'routing' | 'metadata'
> & { readonly maxLifetimeMs?: number; readonly authentication?: Payment['authentication'] };

/** A new payment, already submitted: created -> authorizing (or failed when no connector can take it). */
export function newPayment(req: NewPaymentRequest, now: Date, env: StepEnv): { payment: Payment; effects: readonly Effect[]; to: Payment['state'] } {
  if (!Number.isSafeInteger(req.amount) || req.amount < 1) throw new RangeError(`payment amount ${req.amount} must be a positive integer`);
  const created: Payment = {
    id: req.id,
    merchantId: req.merchantId,
    livemode: req.livemode,
    reference: req.reference,
    amount: req.amount,
    currency: req.currency,
    captureMethod: req.captureMethod,
    allowPartialAuthorization: req.allowPartialAuthorization,
    state: 'created',
    amountAuthorized: 0,
    amountCaptured: 0,
    amountRefunded: 0,
    captureOpen: false,
    attempts: [],
    captures: [],
    refunds: [],
    voidOp: null,
    routing: req.routing,
    metadata: req.metadata,
    version: 0,
    createdAt: now.toISOString(),
    deadlineAt: new Date(now.getTime() + (req.maxLifetimeMs ?? env.core.maxLifetimeMs)).toISOString(),
    ...(req.authentication === undefined ? {} : { authentication: req.authentication }),
  };
  const result = step(created, { type: 'submit' }, now, env);
  if (result.kind !== 'applied') throw new Error(`step bug: submit of a new payment gave ${result.kind}`);
  return { payment: result.payment, effects: result.effects, to: result.to };
}
