// Modifications of an authorized payment: captures, voids and refunds, each its own small machine.

import { backoffDelayMs, mayResend, providerIdempotencyKey } from './keys.ts';
import { breakerRetryAt, isBreakerRefusal, operationLifetimeEnd } from './breaker-wait.ts';
import { illegal, noop } from './draft.ts';
import { isLegalEdge } from './states.ts';
import type { Draft, StepResult } from './draft.ts';
import type { Attempt, Capture, OperationFailure, Refund, VoidOperation } from './payment.ts';
import type { CallOutcome, Declined, NotSent } from './outcome.ts';
import { emitLookup, isAlreadyDone } from './lookup-effect.ts';
import { remainderNote } from './capture-amounts.ts';
import { onRemainderCancelOutcome, startRemainderCancel } from './step-remainder.ts';

export function authorizedAttempt(d: Draft): Attempt | undefined {
  return d.attempts.find((a) => a.status === 'authorized');
}

function capturesInFlight(d: Draft): number {
  return d.captures.filter((c) => c.status === 'requested' || c.status === 'pending').reduce((s, c) => s + c.amount, 0);
}

function refundsCommitted(d: Draft): number {
  return d.refunds.filter((r) => r.status === 'requested' || r.status === 'pending' || r.status === 'succeeded').reduce((s, r) => s + r.amount, 0);
}

/**
 * A refusal that a resend with the same key would only repeat: the provider found the request
 * invalid (e.g. nothing left to capture at the provider), or our credentials or permissions are
 * wrong. Resending it three times with backoff would only delay the merchant's answer.
 */
function isFinalRefusal(o: CallOutcome): o is NotSent {
  return o.kind === 'not_sent' && (o.reason === 'validation' || o.reason === 'authentication' || o.reason === 'permission' || o.reason === 'local_validation');
}

function declinedFailure(o: Declined): OperationFailure {
  return { kind: 'declined', code: o.code, providerCode: o.providerCode, declineClass: o.class, message: o.message ?? null };
}

export function notSentFailure(o: NotSent): OperationFailure {
  return { kind: isFinalRefusal(o) ? 'rejected' : 'not_sent', code: o.reason, providerCode: null, declineClass: null, message: o.detail ?? null };
}

function retryDelay(d: Draft, seed: string, n: number): string {
  return d.at(backoffDelayMs(n, d.env.core.backoffBaseMs, d.env.core.backoffCapMs, seed));
}

// ---- capture -------------------------------------------------------------------------------

export function requestCapture(d: Draft, captureId: string, amount: number, final: boolean): StepResult | null {
  if (d.captures.some((c) => c.id === captureId)) return noop('capture already requested');
  const attempt = authorizedAttempt(d);
  const capturable = d.p.state === 'authorized' || (d.p.state === 'captured' && d.p.captureOpen);
  if (!capturable || attempt === undefined) return illegal('invalid_state', `cannot capture a payment that is ${d.p.state}${remainderNote({ ...d.p, captures: d.captures })}`);
  if (!Number.isSafeInteger(amount) || amount < 1) return illegal('invalid_amount', `capture amount ${amount} must be a positive integer`);
  const remaining = d.p.amountAuthorized - d.p.amountCaptured - capturesInFlight(d);
  if (amount > remaining) return illegal('amount_exceeds_authorized', `capture of ${amount} exceeds the ${remaining} ${d.p.currency} still capturable`);
  const policy = d.policy(attempt.connector);
  if (amount < remaining && !policy.capabilities.partialCapture) return illegal('not_supported', `${attempt.connector} does not support partial capture`);
  // Never a silent final capture: without multicapture the provider would release the rest.
  if (!final && !policy.capabilities.multicapture) {
    return illegal('multicapture_unsupported', `${attempt.connector} keeps nothing open after a capture (multiple partial captures are not enabled for this account): capture with final: true, or enable multicapture on ${attempt.connector}`);
  }
  const no = d.captures.length + 1;
  const isFinal = final;
  const capture: Capture = {
    id: captureId,
    no,
    amount,
    final: isFinal,
    status: 'requested',
    providerKey: providerIdempotencyKey(d.p.id, 'capture', no, policy.maxKeyLength),
    providerRef: null,
    calls: 1,
    failure: null,
    createdAt: d.nowIso,
  };
  d.captures.push(capture);
  d.setState('capturing', `capture ${no} of ${amount}`);
  emitCaptureCall(d, attempt, capture);
  return null;
}

function emitCaptureCall(d: Draft, attempt: Attempt, c: Capture, runAt?: string): void {
  d.emit({
    type: 'provider_call', op: 'capture', connector: attempt.connector, attemptId: attempt.id, providerKey: c.providerKey,
    amount: c.amount, currency: d.p.currency, captureId: c.id, final: c.final, ...(runAt === undefined ? {} : { runAt }),
  });
}

/**
 * A capture or refund that was pending (an unknown answer, a lookup, an async provider) is final
 * now: an open `*_unresolved` discrepancy about it has its answer (none open: nothing happens).
 */
function settleUnresolved(d: Draft, kind: 'capture_unresolved' | 'refund_unresolved', op: Capture | Refund, attempt: Attempt, outcome: string): void {
  if (op.status !== 'pending') return;
  const what = kind === 'capture_unresolved' ? 'capture' : 'refund';
  d.emit({ type: 'discrepancy_settled', kind, attemptId: attempt.id, subject: op.id, resolution: `settled by the provider: ${what} ${op.no} ${outcome}` });
}

function captureSucceeded(d: Draft, c: Capture, attempt: Attempt, providerRef: string | undefined): void {
  settleUnresolved(d, 'capture_unresolved', c, attempt, 'succeeded');
  // A fact naming no object ('': Stripe's charge.refunded, a webhook fact without a reference) keeps the reference we have.
  d.updateCapture(c.id, { status: 'succeeded', ...(providerRef === undefined || providerRef === '' ? {} : { providerRef }) });
  d.p.amountCaptured += c.amount;
  d.p.captureOpen = !c.final && d.p.amountCaptured < d.p.amountAuthorized;
  d.emit({ type: 'ledger', posting: 'capture', amount: c.amount, currency: d.p.currency, connector: attempt.connector, captureId: c.id, attemptId: attempt.id });
  d.event('payment.captured', { captureId: c.id });
  const remainder = d.p.amountAuthorized - d.p.amountCaptured;
  if (c.final && remainder > 0 && d.policy(attempt.connector).capabilities.finalCaptureLeavesRemainder === true) startRemainderCancel(d, attempt, remainder);
  if (capturesInFlight(d) > 0) return;
  if (d.p.state === 'captured' || isLegalEdge(d.p.state, 'captured')) return d.setState('captured', `capture ${c.no} confirmed`);
  // Confirmed after an operator resolved the payment (failed, voided, with an override): the money
  // is booked, and the payment goes back to a person with what the provider said.
  d.emit({ type: 'discrepancy', kind: 'fact_after_resolution', attemptId: attempt.id, subject: c.id, detail: `capture ${c.no} of ${c.amount} ${d.p.currency} confirmed by the provider while the payment is ${d.p.state}` });
  if (isLegalEdge(d.p.state, 'needs_review')) d.setState('needs_review', `capture ${c.no} confirmed after the payment was resolved as ${d.p.state}`);
  else d.note(`capture ${c.no} confirmed while ${d.p.state}`);
}

export function captureFailed(d: Draft, c: Capture, why: string, failure: OperationFailure): void {
  const attempt = authorizedAttempt(d);
  if (attempt !== undefined) settleUnresolved(d, 'capture_unresolved', c, attempt, `failed (${why})`);
  d.updateCapture(c.id, { status: 'failed', failure });
  d.event('payment.capture_failed', { captureId: c.id });
  if (capturesInFlight(d) === 0 && d.p.state === 'capturing') d.setState(d.p.amountCaptured > 0 ? 'captured' : 'authorized', `capture ${c.no} failed: ${why}`);
}

const isKeyExpired = (o: CallOutcome): boolean => o.kind === 'unknown' && o.reason === 'key_expired';

export function onCaptureOutcome(d: Draft, captureId: string, o: CallOutcome): StepResult | null {
  const c = d.captures.find((x) => x.id === captureId);
  if (c === undefined) return noop(`no capture ${captureId}`);
  if (c.status !== 'requested' && c.status !== 'pending') return noop(`capture ${c.no} already ${c.status}`);
  const attempt = authorizedAttempt(d);
  if (attempt === undefined) return noop('no authorized attempt');
  const policy = d.policy(attempt.connector);
  switch (o.kind) {
    case 'succeeded':
      captureSucceeded(d, c, attempt, o.providerRef);
      return null;
    case 'pending':
      d.updateCapture(c.id, { status: 'pending', providerRef: o.providerRef });
      return null;
    case 'declined':
      captureFailed(d, c, o.code, declinedFailure(o));
      return null;
    case 'not_sent':
    case 'unknown':
    case 'action_required': {
      // "Already captured": an answer, not a refusal. A same-key resend would be refused the same
      // way; the PaymentIntent (or the provider's event) says whether it was this capture.
      if (isAlreadyDone(o)) {
        d.updateCapture(c.id, { status: 'pending' });
        emitLookup(d, attempt, { op: 'capture', captureId: c.id }, 1, c.amount);
        d.note(`capture ${c.no} answered already done: looking it up`);
        return null;
      }
      // Refused by an open breaker: nothing left, so neither proof nor a call. Same key, later.
      if (isBreakerRefusal(o)) {
        const at = breakerRetryAt(d, { connector: attempt.connector, seed: c.id, since: c.createdAt, until: operationLifetimeEnd(d, c.createdAt) });
        if (at !== null) {
          emitCaptureCall(d, attempt, c, at);
          d.note(`capture ${c.no} refused by an open breaker: not counted, sent again at ${at}`);
          return null;
        }
      }
      // An unknown answer may mean the provider captured: from then on the capture is pending, and a
      // later refusal (of a resend) is no proof that nothing was captured.
      const reached = o.kind !== 'not_sent' || c.status === 'pending';
      if (!reached && isFinalRefusal(o)) {
        captureFailed(d, c, `rejected: ${o.reason}`, notSentFailure(o));
        return null;
      }
      // key_expired: the worker found the key past retention when it was about to send; never resend it.
      const resendable = !isKeyExpired(o) && mayResend(c.createdAt, d.now, policy.keyRetentionMs, d.env.core.retentionMarginMs);
      if (c.calls <= d.env.core.maxResends && resendable) {
        const next = d.updateCapture(c.id, { calls: c.calls + 1, ...(reached ? { status: 'pending' as const } : {}) });
        emitCaptureCall(d, attempt, next, retryDelay(d, c.id, next.calls));
        return null;
      }
      if (!reached && o.kind === 'not_sent') {
        captureFailed(d, c, `not sent: ${o.reason}`, notSentFailure(o));
        return null;
      }
      // Resends spent or the key past retention: the provider's object says what happened. Only
      // lookups that stay inconclusive past their bound park it (step-lookup.ts: captureUnresolved).
      if (policy.capabilities.looksUpOperations !== true) {
        captureUnresolved(d, c, attempt, `after ${c.calls} calls`);
        return null;
      }
      d.updateCapture(c.id, { status: 'pending' });
      emitLookup(d, attempt, { op: 'capture', captureId: c.id }, 1, c.amount);
      d.note(`capture ${c.no} unknown after ${c.calls} calls${resendable ? '' : ' (key past retention)'}: looking it up`);
      return null;
    }
  }
}

/** A capture whose outcome stays unknown (resends spent, or lookups inconclusive): parked for a person. */
export function captureUnresolved(d: Draft, c: Capture, attempt: Attempt, why: string): void {
  d.emit({ type: 'discrepancy', kind: 'capture_unresolved', attemptId: attempt.id, subject: c.id, detail: `capture ${c.no} outcome unknown ${why}` });
  d.setState('needs_review', `capture ${c.no} unresolved`);
}

export function onCaptureReversed(d: Draft, captureId: string): StepResult | null {
  const c = d.captures.find((x) => x.id === captureId);
  if (c === undefined) return noop(`no capture ${captureId}`);
  if (c.status !== 'succeeded') return noop(`capture ${c.no} is ${c.status}, not reversible`);
  const attempt = authorizedAttempt(d);
  d.updateCapture(c.id, { status: 'reversed' });
  const reduced = d.p.amountCaptured - c.amount;
  d.event('payment.capture_failed', { captureId: c.id });
  d.emit({ type: 'ledger', posting: 'capture_reversed', amount: c.amount, currency: d.p.currency, connector: attempt?.connector ?? '', captureId: c.id, ...(attempt === undefined ? {} : { attemptId: attempt.id }) });
  if (reduced < d.p.amountRefunded) {
    // More was refunded than remains captured: keep the books consistent and hand it to a person.
    d.p.amountCaptured = d.p.amountRefunded;
    d.emit({ type: 'discrepancy', kind: 'refunds_exceed_captured', detail: `capture ${c.no} reversed; refunds ${d.p.amountRefunded} exceed captured ${reduced}` });
    d.setState('needs_review', `capture ${c.no} reversed below refunds`);
    return null;
  }
  d.p.amountCaptured = reduced;
  if (reduced === 0 && d.p.state === 'captured') d.setState('failed', `capture ${c.no} reversed by the scheme`);
  else d.note(`capture ${c.no} reversed by the scheme`);
  return null;
}

/**
 * Automatic capture makes no capture record: the approval captured. When the scheme rejects that
 * capture (Adyen CAPTURE_FAILED) the reversal is applied all the same: a capture record for it
 * (so a redelivered event finds it by reference and is a no-op), reversed at once, with its
 * compensating posting.
 */
export function onAutoCaptureReversed(d: Draft, attemptId: string, amount: number, providerRef: string): StepResult | null {
  if (d.p.captureMethod !== 'automatic') return noop('capture failure without a capture record on a manual-capture payment');
  const attempt = d.attempt(attemptId);
  if (attempt === undefined || attempt.status !== 'authorized') return noop(`capture failure for attempt ${attempt?.status ?? 'missing'}`);
  if (providerRef !== '' && d.captures.some((c) => c.providerRef === providerRef)) return noop(`capture ${providerRef} already recorded`);
  if (!Number.isSafeInteger(amount) || amount < 1) return noop(`capture failure of ${amount}`);
  const uncovered = d.p.amountCaptured - d.captures.filter((c) => c.status === 'reversed').reduce((s, c) => s + c.amount, 0);
  if (uncovered <= 0) return noop('nothing captured left to reverse');
  const no = d.captures.length + 1;
  const capture: Capture = {
    id: d.env.newId('capture'), no, amount: Math.min(amount, uncovered), final: true, status: 'succeeded',
    providerKey: providerIdempotencyKey(d.p.id, 'capture', no, d.policy(attempt.connector).maxKeyLength),
    providerRef: providerRef === '' ? null : providerRef, calls: 0, failure: null, createdAt: d.nowIso,
  };
  d.captures.push(capture);
  return onCaptureReversed(d, capture.id);
}

// ---- void ----------------------------------------------------------------------------------

export function requestVoid(d: Draft): StepResult | null {
  // A void in flight is joined; a finished one is refused like a capture of a captured payment (issue 43).
  if (d.p.state === 'voiding') return noop('payment already voiding');
  if (d.p.state === 'requires_action') return voidAwaitingCustomer(d);
  const attempt = authorizedAttempt(d);
  if (d.p.state !== 'authorized' || attempt === undefined || d.p.amountCaptured > 0) return illegal('invalid_state', `cannot void a payment that is ${d.p.state}`);
  const policy = d.policy(attempt.connector);
  const no = (d.p.voidOp?.no ?? 0) + 1;
  d.setVoidOp({ no, providerKey: providerIdempotencyKey(d.p.id, 'void', no, policy.maxKeyLength), calls: 1, requestedAt: d.nowIso });
  d.setState('voiding', 'void requested');
  emitVoidCall(d, attempt);
  return null;
}

/**
 * A void while the customer is at the provider's page cancels that attempt there (Stripe and peers
 * allow it; the cart is not held until the page expires). Only a customer still awaited: once they
 * came back the resume's answer decides, and the void waits for it.
 */
function voidAwaitingCustomer(d: Draft): StepResult | null {
  const attempt = d.attempts[d.attempts.length - 1];
  if (attempt?.status !== 'authenticating' || attempt.authentication?.stage !== 'awaiting_customer' || attempt.providerRef === null) {
    return illegal('invalid_state', 'cannot void a payment that is requires_action while its authentication is being completed; try again once it is settled');
  }
  const no = (d.p.voidOp?.no ?? 0) + 1;
  const providerKey = providerIdempotencyKey(d.p.id, 'void', no, d.policy(attempt.connector).maxKeyLength);
  d.setVoidOp({ no, providerKey, calls: 1, requestedAt: d.nowIso, from: 'requires_action', attemptId: attempt.id });
  d.setState('voiding', 'void requested while the customer was authenticating');
  emitVoidCall(d, attempt);
  return null;
}

/** The attempt a void cancels: the authorization, or the attempt awaiting the customer when voided in requires_action. */
export function voidTarget(d: Draft, v: VoidOperation): Attempt | undefined {
  return v.from === 'requires_action' ? (v.attemptId === undefined ? undefined : d.attempt(v.attemptId)) : authorizedAttempt(d);
}

function emitVoidCall(d: Draft, attempt: Attempt, runAt?: string): void {
  const v = d.p.voidOp!;
  d.emit({
    type: 'provider_call', op: 'void', connector: attempt.connector, attemptId: attempt.id, providerKey: v.providerKey, voidNo: v.no,
    amount: v.from === 'requires_action' ? d.p.amount : d.p.amountAuthorized, currency: d.p.currency, ...(runAt === undefined ? {} : { runAt }),
  });
}

/**
 * The void did not happen: the payment goes back where it was voided from, with what it had. A
 * refused cancel of an attempt awaiting the customer keeps its page and its original expiry (the
 * expiry timer, ignored while voiding, is set again for that instant).
 */
function voidRefused(d: Draft, v: VoidOperation, failure: OperationFailure, why: string): void {
  d.setVoidOp({ ...v, failure });
  if (v.from !== 'requires_action') return d.setState('authorized', why);
  const attempt = voidTarget(d, v);
  const auth = attempt?.authentication;
  if (attempt?.status !== 'authenticating' || auth?.stage !== 'awaiting_customer') {
    // The customer finished meanwhile: that approval is released as a late one (step-authorize), so the payment ends voided.
    return d.setState('voided', `${why}; attempt ${attempt?.no ?? '?'} is ${attempt?.status ?? 'missing'}: its approval is released`);
  }
  d.setState('requires_action', why);
  if (auth.expiresAt !== null) d.emit({ type: 'timer', timer: 'authentication_expiry', attemptId: attempt.id, runAt: auth.expiresAt });
}

export function onVoidOutcome(d: Draft, o: CallOutcome, n?: number): StepResult | null {
  const remainderCancel = d.p.voidOp?.remainder === undefined ? null : d.p.voidOp;
  if (remainderCancel !== null) {
    const kept = authorizedAttempt(d);
    return kept === undefined ? noop('remainder cancel answer without an authorized attempt') : onRemainderCancelOutcome(d, remainderCancel, kept, o, n);
  }
  // A void parked for review still takes the provider's final word.
  const reviewing = d.p.state === 'needs_review' && d.p.voidOp !== null;
  if (d.p.state !== 'voiding' && !reviewing) return noop(`void answer while ${d.p.state}`);
  const v = d.p.voidOp;
  const attempt = v === null ? undefined : voidTarget(d, v);
  if (attempt === undefined || v === null) return noop('no void in flight');
  // Each void has its own key: a late answer to an earlier one (a refused void's second execution)
  // says nothing about this one.
  if (n !== undefined && n !== v.no) return noop(`answer for void ${n}, not void ${v.no}`);
  switch (o.kind) {
    case 'succeeded':
      voidSucceeded(d, attempt);
      return null;
    case 'pending':
      d.note('void accepted; confirmation comes later');
      return null;
    case 'declined':
      voidRefused(d, v, declinedFailure(o), `void refused: ${o.code}`);
      return null;
    case 'not_sent':
    case 'unknown':
    case 'action_required':
      // "Already canceled": the authorization is released, by this void or another hand; the
      // PaymentIntent (or the provider's event) says so. Looked up even while parked.
      if (isAlreadyDone(o)) {
        d.setVoidOp({ ...v, maybeReached: true });
        emitLookup(d, attempt, { op: 'void', key: v.providerKey }, 1, d.p.amountAuthorized);
        d.note(`void ${v.no} answered already done: looking it up`);
        return null;
      }
      if (reviewing) return noop(`void answered ${o.kind} while in review`);
      if (isFinalRefusal(o) && v.maybeReached !== true) {
        voidRefused(d, v, notSentFailure(o), `void rejected: ${o.reason}`);
        return null;
      }
      // Refused by an open breaker: nothing left, so neither proof nor a call. Same key, later.
      if (isBreakerRefusal(o) && v.requestedAt !== undefined) {
        const at = breakerRetryAt(d, { connector: attempt.connector, seed: v.providerKey, since: v.requestedAt, until: operationLifetimeEnd(d, v.requestedAt) });
        if (at !== null) {
          emitVoidCall(d, attempt, at);
          d.note(`void ${v.no} refused by an open breaker: not counted, sent again at ${at}`);
          return null;
        }
      }
      if (v.calls <= d.env.core.maxResends) {
        d.setVoidOp({ ...v, calls: v.calls + 1, ...(o.kind !== 'not_sent' ? { maybeReached: true } : {}) });
        emitVoidCall(d, attempt, retryDelay(d, v.providerKey, v.calls + 1));
        return null;
      }
      // Only when no send may have reached the provider does the authorization still stand for sure.
      if (o.kind === 'not_sent' && v.maybeReached !== true) {
        voidRefused(d, v, notSentFailure(o), `void never sent: ${o.reason}`);
        return null;
      }
      // The PaymentIntent says whether it was cancelled; parked only if that stays unknown.
      if (d.policy(attempt.connector).capabilities.looksUpOperations !== true) {
        voidUnresolved(d);
        return null;
      }
      emitLookup(d, attempt, { op: 'void', key: v.providerKey }, 1, d.p.amountAuthorized);
      d.note(`void ${v.no} unknown after ${v.calls} calls: looking it up`);
      return null;
  }
}

/**
 * The provider confirmed the cancel. An attempt that was awaiting the customer is over: fenced, and
 * a completion that still arrives (the page submitted just before) is a late approval, released.
 */
function voidSucceeded(d: Draft, attempt: Attempt): void {
  if (attempt.status === 'authenticating') {
    const auth = attempt.authentication;
    d.updateAttempt(attempt.id, { status: 'abandoned', proof: 'fenced', maybeReached: true, ...(auth === undefined ? {} : { authentication: { ...auth, stage: 'abandoned' as const } }) });
  } else if (attempt.status === 'authorized') d.updateAttempt(attempt.id, { status: 'released' });
  d.setState('voided', 'void confirmed');
}

/** A void whose outcome stays unknown: parked; the provider's word (an event, a lookup) still settles it. */
export function voidUnresolved(d: Draft): void {
  d.setState('needs_review', 'void outcome unknown');
}

// ---- refunds -------------------------------------------------------------------------------

export function requestRefund(d: Draft, refundId: string, amount: number, reason: string | null): StepResult | null {
  if (d.refunds.some((r) => r.id === refundId)) return noop('refund already requested');
  const attempt = authorizedAttempt(d);
  if (d.p.amountCaptured === 0 || attempt === undefined || d.p.state === 'needs_review') return illegal('invalid_state', `cannot refund a payment that is ${d.p.state} with nothing captured`);
  if (!Number.isSafeInteger(amount) || amount < 1) return illegal('invalid_amount', `refund amount ${amount} must be a positive integer`);
  const refundable = d.p.amountCaptured - refundsCommitted(d);
  if (amount > refundable) return illegal('amount_exceeds_captured', `refund of ${amount} exceeds the ${refundable} ${d.p.currency} still refundable`);
  const policy = d.policy(attempt.connector);
  const no = d.refunds.length + 1;
  const refund: Refund = {
    id: refundId, no, amount, reason, status: 'requested',
    providerKey: providerIdempotencyKey(d.p.id, 'refund', no, policy.maxKeyLength), providerRef: null, calls: 1, failure: null, createdAt: d.nowIso,
  };
  d.refunds.push(refund);
  d.note(`refund ${no} of ${amount}`);
  emitRefundCall(d, attempt, refund);
  return null;
}

function emitRefundCall(d: Draft, attempt: Attempt, r: Refund, runAt?: string): void {
  d.emit({
    type: 'provider_call', op: 'refund', connector: attempt.connector, attemptId: attempt.id, providerKey: r.providerKey,
    amount: r.amount, currency: d.p.currency, refundId: r.id, ...(runAt === undefined ? {} : { runAt }),
  });
}

function refundSucceeded(d: Draft, r: Refund, attempt: Attempt, providerRef: string | undefined): void {
  settleUnresolved(d, 'refund_unresolved', r, attempt, 'succeeded');
  // A fact naming no object ('': a webhook fact without a reference) keeps the reference we have: two refunds never share ''.
  d.updateRefund(r.id, { status: 'succeeded', ...(providerRef === undefined || providerRef === '' ? {} : { providerRef }) });
  d.p.amountRefunded += r.amount;
  d.emit({ type: 'ledger', posting: 'refund', amount: r.amount, currency: d.p.currency, connector: attempt.connector, refundId: r.id, attemptId: attempt.id });
  d.event('refund.succeeded', { refundId: r.id });
}

export function refundFailed(d: Draft, r: Refund, failure: OperationFailure): void {
  const attempt = authorizedAttempt(d);
  if (attempt !== undefined) settleUnresolved(d, 'refund_unresolved', r, attempt, `failed (${failure.code})`);
  d.updateRefund(r.id, { status: 'failed', failure });
  d.event('refund.failed', { refundId: r.id });
}

export function onRefundOutcome(d: Draft, refundId: string, o: CallOutcome): StepResult | null {
  const r = d.refunds.find((x) => x.id === refundId);
  if (r === undefined) return noop(`no refund ${refundId}`);
  if (r.status !== 'requested' && r.status !== 'pending') return noop(`refund ${r.no} already ${r.status}`);
  const attempt = authorizedAttempt(d);
  if (attempt === undefined) return noop('no authorized attempt');
  const policy = d.policy(attempt.connector);
  switch (o.kind) {
    case 'succeeded':
      refundSucceeded(d, r, attempt, o.providerRef);
      return null;
    case 'pending':
      d.updateRefund(r.id, { status: 'pending', providerRef: o.providerRef });
      return null;
    case 'declined':
      refundFailed(d, r, declinedFailure(o));
      return null;
    case 'not_sent':
    case 'unknown':
    case 'action_required': {
      // "Already refunded": the charge has nothing left to refund, which this refund may have done.
      // A same-key resend would be refused the same way; the refund itself is looked up by its id.
      if (isAlreadyDone(o)) {
        d.updateRefund(r.id, { status: 'pending' });
        emitLookup(d, attempt, { op: 'refund', refundId: r.id }, 1, r.amount);
        d.note(`refund ${r.no} answered already done: looking it up`);
        return null;
      }
      // Refused by an open breaker: nothing left, so neither proof nor a call. Same key, later.
      if (isBreakerRefusal(o)) {
        const at = breakerRetryAt(d, { connector: attempt.connector, seed: r.id, since: r.createdAt, until: operationLifetimeEnd(d, r.createdAt) });
        if (at !== null) {
          emitRefundCall(d, attempt, r, at);
          d.note(`refund ${r.no} refused by an open breaker: not counted, sent again at ${at}`);
          return null;
        }
      }
      // As for captures: after an unknown answer the refund is pending, and a later refusal proves nothing.
      const reached = o.kind !== 'not_sent' || r.status === 'pending';
      if (!reached && isFinalRefusal(o)) {
        refundFailed(d, r, notSentFailure(o));
        return null;
      }
      const resendable = !isKeyExpired(o) && mayResend(r.createdAt, d.now, policy.keyRetentionMs, d.env.core.retentionMarginMs);
      if (r.calls <= d.env.core.maxResends && resendable) {
        const next = d.updateRefund(r.id, { calls: r.calls + 1, ...(reached ? { status: 'pending' as const } : {}) });
        emitRefundCall(d, attempt, next, retryDelay(d, r.id, next.calls));
        return null;
      }
      if (!reached && o.kind === 'not_sent') {
        refundFailed(d, r, notSentFailure(o));
        return null;
      }
      // As for captures: looked up before it is handed to reconciliation (step-lookup.ts: refundUnresolved).
      if (policy.capabilities.looksUpOperations !== true) {
        refundUnresolved(d, r, attempt, `after ${r.calls} calls`);
        return null;
      }
      d.updateRefund(r.id, { status: 'pending' });
      emitLookup(d, attempt, { op: 'refund', refundId: r.id }, 1, r.amount);
      d.note(`refund ${r.no} unknown after ${r.calls} calls${resendable ? '' : ' (key past retention)'}: looking it up`);
      return null;
    }
  }
}

/** A refund whose outcome stays unknown: it may have gone through, so its amount stays reserved and reconciliation settles it. */
export function refundUnresolved(d: Draft, r: Refund, attempt: Attempt, why: string): void {
  d.updateRefund(r.id, { status: 'pending' });
  d.emit({ type: 'discrepancy', kind: 'refund_unresolved', attemptId: attempt.id, subject: r.id, detail: `refund ${r.no} outcome unknown ${why}` });
}

export function onRefundReversed(d: Draft, refundId: string): StepResult | null {
  const r = d.refunds.find((x) => x.id === refundId);
  if (r === undefined) return noop(`no refund ${refundId}`);
  if (r.status !== 'succeeded') return noop(`refund ${r.no} is ${r.status}, not reversible`);
  const attempt = authorizedAttempt(d);
  d.updateRefund(r.id, { status: 'reversed' });
  d.p.amountRefunded -= r.amount;
  d.emit({ type: 'ledger', posting: 'refund_reversed', amount: r.amount, currency: d.p.currency, connector: attempt?.connector ?? '', refundId: r.id, ...(attempt === undefined ? {} : { attemptId: attempt.id }) });
  d.event('refund.reversed', { refundId: r.id });
  return null;
}
