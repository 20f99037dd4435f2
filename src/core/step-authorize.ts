// The authorization path: attempts, their outcomes, resolving unknowns, fences and failover.

import { backoffDelayMs, mayResend, providerIdempotencyKey } from './keys.ts';
import { decideNext, nextCandidate } from './failover.ts';
import { breakerRetryAt, isBreakerRefusal } from './breaker-wait.ts';
import type { Draft } from './draft.ts';
import { lateApprovalKind, startRelease } from './step-release.ts';
import type { Attempt } from './payment.ts';
import type { ActionRequired, CallOutcome, Declined, Succeeded } from './outcome.ts';
import { authenticationExpiry, cancelProvesUncharged, freshAuthentication, stepUpWanted } from './authentication.ts';

const IN_FLIGHT_STATES = new Set(['created', 'authorizing', 'auth_unknown', 'requires_action', 'needs_review']);

export function isPastDeadline(d: Draft): boolean {
  return d.now.getTime() >= Date.parse(d.p.deadlineAt);
}

function delay(d: Draft, attempt: Attempt, n: number, op: string): number {
  return backoffDelayMs(n, d.env.core.backoffBaseMs, d.env.core.backoffCapMs, `${attempt.id}:${op}`);
}

/**
 * Starts attempt n+1 on `connector`: a preparatory call when the connector needs one, else the
 * authorize call. forceAuthentication: the step-up retry (authentication forced at the provider).
 */
export function startAttempt(d: Draft, connector: string, forceAuthentication = false): void {
  const policy = d.policy(connector);
  const no = d.attempts.length + 1;
  const prepares = policy.capabilities.preparesAuthorization;
  const attempt: Attempt = {
    id: d.env.newId('attempt'),
    no,
    connector,
    status: prepares ? 'preparing' : 'authorizing',
    providerRef: null,
    authKey: providerIdempotencyKey(d.p.id, 'auth', no, policy.maxKeyLength),
    // Recorded when the effect is written, a little before it leaves: errs on the safe side of retention.
    firstSentAt: prepares ? null : d.nowIso,
    sends: prepares ? 0 : 1,
    maybeReached: false,
    notSentSends: [],
    prepareCalls: prepares ? 1 : 0,
    queries: 0,
    fenceCalls: 0,
    resendBlocked: false,
    lastOutcome: null,
    proof: null,
    declineCode: null,
    declineClass: null,
    retryElsewhere: false,
    notSentReason: null,
    amountAuthorized: 0,
    createdAt: d.nowIso,
    release: null,
    ...(forceAuthentication ? { authentication: freshAuthentication(true) } : {}),
  };
  d.attempts.push(attempt);
  d.note(`attempt ${no} on ${connector}`);
  if (prepares) {
    emitCall(d, attempt, 'prepare', providerIdempotencyKey(d.p.id, 'prepare', no, policy.maxKeyLength));
  } else {
    emitCall(d, attempt, 'authorize', attempt.authKey);
  }
}

/**
 * Asks the provider again about an attempt parked for review whose authorization stayed unknown
 * (the recovery sweeper's recheck): a query, whose answer step() applies to a parked attempt as to
 * any; false when this connector cannot query it (no reference to query by).
 */
export function queryParkedAttempt(d: Draft, attempt: Attempt): boolean {
  const caps = d.policy(attempt.connector).capabilities;
  const queryable = attempt.providerRef !== null ? caps.queryByReference : caps.queryByMerchantReference;
  if (!queryable) return false;
  emitCall(d, attempt, 'query', null);
  return true;
}

function emitCall(d: Draft, attempt: Attempt, op: 'prepare' | 'authorize' | 'query' | 'fence', key: string | null, runAt?: string): void {
  d.emit({
    type: 'provider_call',
    op,
    connector: attempt.connector,
    attemptId: attempt.id,
    providerKey: key,
    amount: d.p.amount,
    currency: d.p.currency,
    ...(op === 'authorize' ? { sendNo: attempt.sends } : {}),
    ...(op === 'authorize' && attempt.authentication?.forced === true ? { forceAuthentication: true } : {}),
    ...(runAt === undefined ? {} : { runAt }),
  });
}

/** Sends the authorize call again with the same key. */
function resendAuthorize(d: Draft, attempt: Attempt, withDelay: boolean): void {
  const unknown = attempt.status === 'unknown';
  const a = d.updateAttempt(attempt.id, {
    sends: attempt.sends + 1,
    status: unknown ? 'unknown' : 'authorizing',
    firstSentAt: attempt.firstSentAt ?? d.nowIso,
    // Resending to resolve an unknown: the earlier send may have arrived, so no later not_sent is proof.
    maybeReached: attempt.maybeReached || unknown,
  });
  emitCall(d, a, 'authorize', a.authKey, withDelay ? d.at(delay(d, a, a.sends, 'resend')) : undefined);
  d.note(`resend authorize (send ${a.sends}) with the same key`);
}

/** After a proof for the current attempt: retry, fail over, or end the payment. */
export function afterProof(d: Draft): void {
  // Only a payment still being authorized (or parked while being authorized) moves on from a proof.
  if (!IN_FLIGHT_STATES.has(d.p.state) || d.p.state === 'created') return d.note(`proof recorded while ${d.p.state}`);
  const decision = decideNext({
    attempts: d.attempts,
    candidates: d.p.routing.candidates,
    openBreakers: d.env.openBreakers,
    policies: d.env.policies,
    captureMethod: d.p.captureMethod,
    vaultedCard: d.p.vaultedCard !== undefined,
    maxAttempts: d.env.maxAttempts,
    maxResends: d.env.core.maxResends,
    // A payment parked for review is settled, never failed over.
    pastDeadline: isPastDeadline(d) || d.p.state === 'needs_review',
  });
  const current = d.attempts[d.attempts.length - 1]!;
  // Step-up: the issuer wanted the customer authenticated and the merchant can send the customer to a
  // page: once more on the same connector with authentication forced, a new logical operation (new key).
  if (stepUpWanted(d.p, d.attempts, current) && !isPastDeadline(d) && d.p.state !== 'needs_review') {
    d.setState('authorizing', `step-up: ${current.connector} declined authentication_required; retrying with authentication forced`);
    startAttempt(d, current.connector, true);
    return;
  }
  switch (decision.kind) {
    case 'retry_same':
      resendAuthorize(d, { ...current }, true);
      d.updateAttempt(current.id, { status: 'authorizing', proof: null });
      d.setState('authorizing', 'retry on the same connector');
      return;
    case 'failover':
      d.setRouting({ ...d.p.routing, skipped: [...d.p.routing.skipped, ...decision.skipped] });
      d.setState('authorizing', `fail over to ${decision.connector} with proof ${decision.proof}`);
      startAttempt(d, decision.connector);
      return;
    case 'resolve_unknown':
      resolveUnknown(d, current, false);
      return;
    case 'review':
      toReview(d, current, decision.reason);
      return;
    case 'fail':
      if (decision.skipped.length > 0) d.setRouting({ ...d.p.routing, skipped: [...d.p.routing.skipped, ...decision.skipped] });
      if (decision.reason === 'declined') {
        d.setState('declined', 'declined');
      } else {
        d.setState('failed', `no charge proven; ${decision.reason}`);
      }
      return;
  }
}

function toReview(d: Draft, attempt: Attempt, reason: string): void {
  d.updateAttempt(attempt.id, { status: 'review' });
  if (d.p.state !== 'needs_review') d.setState('needs_review', reason);
}

/**
 * The outcome of an attempt is unknown: query it, resend with the same key inside the retention
 * window, or fence it. Never guess, never fail over.
 */
export function resolveUnknown(d: Draft, attempt: Attempt, notFound: boolean, keyExpired = false): void {
  const policy = d.policy(attempt.connector);
  const core = d.env.core;
  if (d.p.state !== 'auth_unknown' && d.p.state !== 'needs_review') d.setState('auth_unknown', 'outcome unknown');
  if (isPastDeadline(d)) return fence(d, attempt, 'past the deadline');
  // Without the provider's reference only a connector that finds an attempt by our id can ask (Stripe's
  // one-call authorization: the list, matched on metadata). What it cannot find is never proof.
  const canQuery = policy.capabilities.queryByReference && (attempt.providerRef !== null || policy.capabilities.queryByMerchantReference);
  if (!notFound && canQuery && attempt.queries < core.maxQueries) {
    const a = d.updateAttempt(attempt.id, { status: 'unknown', queries: attempt.queries + 1 });
    emitCall(d, a, 'query', null, d.at(delay(d, a, a.queries, 'query')));
    d.note(`query ${a.queries} scheduled`);
    return;
  }
  // The worker refused to send past retention (key_expired) or without the code first sent (card_code_gone): never a resend with that key.
  const withinRetention = !keyExpired && !attempt.resendBlocked && mayResend(attempt.firstSentAt, d.now, policy.keyRetentionMs, core.retentionMarginMs);
  if (withinRetention && attempt.sends <= core.maxResends) {
    resendAuthorize(d, { ...attempt, status: 'unknown' }, true);
    return;
  }
  fence(d, attempt, withinRetention ? 'resends exhausted' : attempt.resendBlocked ? 'the request cannot be resent' : 'key retention window passed');
}

/**
 * Makes an unknown attempt provably uncharged by cancelling it; only a confirmed fence is proof.
 * Under automatic capture a cancel cannot undo a capture, so there is no fence, except for an
 * attempt the provider holds unauthorised until the customer authenticates (cancelProvesUncharged),
 * and on a connector whose cancel is refused once the payment is captured (a confirmed one then
 * proves nothing was captured; a refused one parks the payment, as here).
 */
export function fence(d: Draft, attempt: Attempt, why: string): void {
  const policy = d.policy(attempt.connector);
  const cancelProves = cancelProvesUncharged(attempt) || policy.capabilities.cancelRefusedOnceCaptured === true;
  if (d.p.captureMethod === 'automatic' && !cancelProves) return toReview(d, attempt, `${why}; automatic capture has no fence`);
  const canFence = attempt.providerRef !== null || policy.capabilities.cancelByMerchantReference;
  if (!canFence) return toReview(d, attempt, `${why}; no way to fence this attempt`);
  if (attempt.fenceCalls >= d.env.core.maxFenceCalls) return toReview(d, attempt, `${why}; fence unconfirmed after ${attempt.fenceCalls} calls`);
  const a = d.updateAttempt(attempt.id, { status: 'fencing', fenceCalls: attempt.fenceCalls + 1 });
  const key = providerIdempotencyKey(d.p.id, 'fence', a.no, policy.maxKeyLength);
  emitCall(d, a, 'fence', key, a.fenceCalls > 1 ? d.at(delay(d, a, a.fenceCalls, 'fence')) : undefined);
  d.note(`fence ${a.fenceCalls}: ${why}`);
}

/**
 * The provider confirmed our cancel. `reached`: the provider's object it names (absent: none, as
 * for Adyen's technical cancel of a reference it had not seen). The proof covers that object only:
 * an approval of another one (an authorization still in flight when the cancel arrived, which the
 * provider completed afterwards) is live money — kept when it came while the fence was in flight,
 * released when it comes after (onAuthorizationOutcome).
 */
export function onFenceConfirmed(d: Draft, attempt: Attempt, reached?: string): void {
  if (attempt.status === 'authorized' && attempt.fenceCalls > 0) return fenceAfterApproval(d, attempt, reached);
  const parked = attempt.status === 'review' && d.p.state === 'needs_review';
  if (attempt.status !== 'fencing' && !parked) {
    d.note(`fence confirmation for attempt in ${attempt.status} ignored`);
    return;
  }
  if (approvedWhileFencing(attempt) && reached !== attempt.providerRef) {
    const o: Succeeded = { kind: 'succeeded', providerRef: attempt.providerRef!, amount: attempt.amountAuthorized };
    d.note(`fence of attempt ${attempt.no} confirmed ${reached === undefined ? 'naming no payment' : `for ${reached}`}: the approval of ${o.providerRef} stands`);
    if (isCurrent(d, attempt) && IN_FLIGHT_STATES.has(d.p.state)) return applyApproval(d, attempt, o);
    return releaseLateApproval(d, attempt, o);
  }
  if (reached !== undefined && reached !== '' && attempt.providerRef === null) {
    // What the cancel reached is this attempt's object: an approval of it is older than the fence.
    attempt = d.updateAttempt(attempt.id, { providerRef: reached });
  }
  const auth = attempt.authentication;
  if (auth?.stage === 'cancelling' && auth.heldDecline !== null) {
    // The decline held until the provider confirmed the attempt cancelled: now it is proof.
    const h = auth.heldDecline;
    d.updateAttempt(attempt.id, {
      status: 'declined', proof: 'declined', lastOutcome: 'declined', declineCode: h.code, declineClass: h.class, retryElsewhere: h.retryElsewhere,
      authentication: { ...auth, stage: 'completed' },
    });
    d.note(`attempt ${attempt.no} cancelled (confirmed): declined ${h.code}`);
    if (isCurrent(d, attempt)) afterProof(d);
    return;
  }
  if (auth?.stage === 'abandoned') {
    d.updateAttempt(attempt.id, { status: 'abandoned', proof: 'fenced', declineCode: 'authentication_abandoned' });
    if (isCurrent(d, attempt) && IN_FLIGHT_STATES.has(d.p.state)) {
      d.setState('failed', `authentication_abandoned: attempt ${attempt.no} cancelled (confirmed) after the customer did not complete authentication`);
    } else d.note(`attempt ${attempt.no} cancelled after abandonment (confirmed)`);
    return;
  }
  d.updateAttempt(attempt.id, { status: 'abandoned', proof: 'fenced' });
  d.note(`attempt ${attempt.no} fenced`);
  if (isCurrent(d, attempt)) afterProof(d);
}

export function onFenceRefused(d: Draft, attempt: Attempt): void {
  if (attempt.status !== 'fencing') return d.note('fence refusal for attempt not fencing ignored');
  toReview(d, attempt, 'fence refused by the provider');
}

function isCurrent(d: Draft, attempt: Attempt): boolean {
  return d.attempts[d.attempts.length - 1]?.id === attempt.id;
}

/** An approval remembered on an attempt being fenced: the fence's confirmation decides whether it reached it. */
function approvedWhileFencing(a: Attempt): boolean {
  return a.lastOutcome === 'succeeded' && a.providerRef !== null && a.amountAuthorized > 0;
}

/**
 * An approval while our cancel is in flight. The cancel decides — but only about what it reaches:
 * the approval is remembered (its object and amount), and the confirmation tells whether it was
 * that object (cancelled: proof) or not (the approval stands). An approval of another object than
 * the one the attempt already names is left to the fence, as before.
 */
function noteApprovalWhileFencing(d: Draft, attempt: Attempt, o: Succeeded): void {
  if (attempt.providerRef !== null && attempt.providerRef !== o.providerRef) return d.note(`approval of ${o.providerRef} while a fence of ${attempt.providerRef} is in flight: the fence decides`);
  if (approvedWhileFencing(attempt)) return d.note('duplicate approval while a fence is in flight');
  d.updateAttempt(attempt.id, { providerRef: o.providerRef, amountAuthorized: o.amount, lastOutcome: 'succeeded' });
  d.note(`approval of ${o.providerRef} while a fence is in flight: kept unless the fence confirms it cancelled it`);
}

/** An approval for an attempt we had given up on is live money: release it and record a discrepancy. */
function releaseLateApproval(d: Draft, attempt: Attempt, o: Succeeded): void {
  const a = startRelease(d, attempt, { providerRef: o.providerRef, amountAuthorized: o.amount, lastOutcome: 'succeeded' });
  const kind = lateApprovalKind(attempt);
  // Its subject is the attempt: the release's confirmation resolves it (step-release.ts), a second approval finds it open.
  d.emit({ type: 'discrepancy', kind, attemptId: a.id, subject: a.id, detail: `approval of ${o.amount} ${d.p.currency} for attempt ${a.no} (${attempt.status}) while payment is ${d.p.state}` });
  d.note(`late approval on attempt ${a.no}: releasing`);
}

export function applyApproval(d: Draft, attempt: Attempt, o: Succeeded): void {
  if (attempt.authentication !== undefined && attempt.authentication.stage !== 'completed') {
    attempt = d.updateAttempt(attempt.id, { authentication: { ...attempt.authentication, stage: 'completed' } });
  }
  const partial = o.amount < d.p.amount;
  if (partial && !d.p.allowPartialAuthorization) {
    startRelease(d, attempt, { providerRef: o.providerRef, amountAuthorized: o.amount, lastOutcome: 'succeeded', declineCode: 'partial_authorization' });
    d.setState('declined', `partial authorization of ${o.amount} not allowed: releasing`);
    return;
  }
  d.updateAttempt(attempt.id, { status: 'authorized', providerRef: o.providerRef, amountAuthorized: o.amount, lastOutcome: 'succeeded' });
  d.p.amountAuthorized = o.amount;
  if (d.p.captureMethod === 'automatic') {
    d.p.amountCaptured = o.amount;
    d.setState('captured', 'approved with automatic capture');
    d.event('payment.captured');
    d.emit({ type: 'ledger', posting: 'capture', amount: o.amount, currency: d.p.currency, connector: attempt.connector, attemptId: attempt.id });
    return;
  }
  d.setState('authorized', partial ? `partially authorized ${o.amount}` : 'authorized');
  const hold = d.policy(attempt.connector).authHoldMs;
  // Act before the hold lapses, while the authorization's state is still known.
  d.emit({ type: 'timer', timer: 'hold_expiry', attemptId: attempt.id, runAt: d.at(Math.max(0, hold - d.env.core.holdExpiryMarginMs)) });
}

function applyDecline(d: Draft, attempt: Attempt, o: Declined): void {
  const leavesOpen = attempt.status === 'authenticating' && d.policy(attempt.connector).capabilities.declineAfterAuthenticationLeavesOpen === true;
  if (o.stillOpen === true || leavesOpen) return holdDecline(d, attempt, { code: o.code, providerCode: o.providerCode, class: o.class, retryElsewhere: o.retryElsewhere }, o.providerRef);
  const auth = attempt.authentication;
  d.updateAttempt(attempt.id, {
    ...(auth === undefined ? {} : { authentication: { ...auth, stage: 'completed' as const } }),
    status: 'declined',
    proof: 'declined',
    lastOutcome: 'declined',
    declineCode: o.code,
    declineClass: o.class,
    retryElsewhere: o.retryElsewhere,
    providerRef: o.providerRef ?? attempt.providerRef,
  });
  if (isCurrent(d, attempt)) afterProof(d);
}

/**
 * The fence's answers were lost (the payment was parked), the approval's notification arrived and
 * settled it as authorized, and then the fence's own confirmation arrived: the provider cancelled
 * this authorization. Found by the chaos quick pass (an Adyen TECHNICAL_CANCEL after a delayed
 * AUTHORISATION): ignoring it left a payment `authorized` that no provider held. Nothing captured:
 * the hold is gone, as when it expires. Anything captured meanwhile: reconciliation's to judge.
 */
function fenceAfterApproval(d: Draft, attempt: Attempt, reached: string | undefined): void {
  // A cancel that names another payment, or none, did not reach the authorization we hold (Adyen
  // completed an authorization in flight after acknowledging the cancel): it stands.
  if (reached !== attempt.providerRef) return d.note(`fence of attempt ${attempt.no} confirmed ${reached === undefined ? 'naming no payment' : `for ${reached}`}: the authorization ${attempt.providerRef ?? ''} stands`);
  if (d.p.state === 'authorized' && d.p.amountCaptured === 0 && isCurrent(d, attempt)) {
    d.updateAttempt(attempt.id, { status: 'released' });
    d.setState('expired', `attempt ${attempt.no}'s authorization was cancelled by our fence (its answers were lost; the provider confirmed it after the approval)`);
    return;
  }
  d.emit({ type: 'discrepancy', kind: 'fence_after_approval', attemptId: attempt.id, detail: `attempt ${attempt.no}: the provider confirmed our fence after the approval, while the payment is ${d.p.state}` });
}

/** An authorization outcome for an attempt, from the call's answer, a query, or a webhook. */
export function onAuthorizationOutcome(d: Draft, attempt: Attempt, o: CallOutcome, source: 'call' | 'query' | 'event', sendNo?: number): void {
  if (o.kind === 'succeeded') {
    switch (attempt.status) {
      case 'authorized':
      case 'releasing':
      case 'released':
        return d.note('duplicate approval');
      case 'fencing':
        return noteApprovalWhileFencing(d, attempt, o);
      case 'abandoned':
        // An authentication completed after its abandonment cancel was confirmed: live money all the same.
        // Otherwise only an approval of the object the confirmed fence cancelled is older than it; any
        // other (an authorization still in flight when the cancel arrived) is live money.
        if (attempt.proof === 'fenced' && attempt.authentication?.stage !== 'abandoned' && attempt.providerRef !== null && o.providerRef === attempt.providerRef) {
          return d.note('approval of the authorization the confirmed fence cancelled: older than the fence');
        }
        return releaseLateApproval(d, attempt, o);
      case 'declined':
        return releaseLateApproval(d, attempt, o);
      case 'preparing':
      case 'authorizing':
      case 'authenticating':
      case 'unknown':
      case 'review':
        if (!isCurrent(d, attempt) || !IN_FLIGHT_STATES.has(d.p.state)) return releaseLateApproval(d, attempt, o);
        return applyApproval(d, attempt, o);
    }
  }
  // The provider's final no while the customer is at (or back from) its page: the authentication failed.
  if (attempt.status === 'authenticating' && o.kind === 'declined') return applyDecline(d, attempt, o);
  const live = attempt.status === 'authorizing' || attempt.status === 'unknown' || (attempt.status === 'review' && d.p.state === 'needs_review');
  if (!live) return d.note(`${o.kind} for attempt in ${attempt.status} ignored`);
  const withRef = 'providerRef' in o && o.providerRef !== undefined && attempt.providerRef === null ? { providerRef: o.providerRef } : {};
  switch (o.kind) {
    case 'declined':
      return applyDecline(d, attempt, o);
    case 'not_sent': {
      if (source === 'query') return resolveUnknown(d, d.updateAttempt(attempt.id, { status: 'unknown' }), false); // the query itself never left
      if (source === 'event') return d.note('not_sent reported by an event ignored');
      const no = sendNo ?? attempt.sends;
      if (attempt.maybeReached && isBreakerRefusal(o) && waitForBreaker(d, { ...attempt, ...withRef }, no, o.reason)) return;
      const notSentSends = attempt.notSentSends.includes(no) ? attempt.notSentSends : [...attempt.notSentSends, no].sort((x, y) => x - y);
      const a = d.updateAttempt(attempt.id, { lastOutcome: 'not_sent', notSentReason: o.reason, notSentSends, ...withRef });
      if (a.maybeReached) return resolveUnknown(d, a, false); // an earlier send may have arrived
      const everySendRefused = a.notSentSends.length === a.sends;
      if (!everySendRefused) return d.note(`send ${no} not sent; other sends still unanswered`);
      d.updateAttempt(a.id, { status: 'abandoned', proof: 'not_sent' });
      return afterProof(d);
    }
    case 'action_required':
      return requireAction(d, { ...attempt, ...withRef }, o);
    case 'pending': {
      // Accepted by the provider: from now on nothing but its final word or a fence is proof.
      const a = d.updateAttempt(attempt.id, { lastOutcome: o.kind, maybeReached: true, ...withRef });
      // The result comes later; ask again if the provider stays silent.
      d.emit({ type: 'timer', timer: 'query', attemptId: a.id, runAt: d.at(delay(d, a, a.queries + 1, 'silence')) });
      return;
    }
    case 'unknown': {
      // key_expired and card_code_gone: the worker cannot resend that request, now or later; only a query or a fence resolves it.
      const blocked = attempt.resendBlocked || o.reason === 'key_expired' || o.reason === 'card_code_gone';
      const a = d.updateAttempt(attempt.id, { status: 'unknown', maybeReached: true, lastOutcome: 'unknown', ...withRef, ...(blocked ? { resendBlocked: true } : {}) });
      return resolveUnknown(d, a, source === 'query' && o.reason === 'not_found', blocked);
    }
  }
}

/**
 * A resend of an attempt that may already have reached the provider was refused by an open breaker:
 * nothing left, so it proves nothing and is not counted as a send. The same send (same key, same
 * send number) goes out again after the breaker's reset time, while the key is retained and before
 * the payment's deadline. Returns false when that window is over: the refusal is then handled as before.
 * A first send refused by the breaker never gets here (it is proof; routing and failover handle it).
 */
function waitForBreaker(d: Draft, attempt: Attempt, no: number, reason: string): boolean {
  if (attempt.status !== 'unknown' && attempt.status !== 'authorizing') return false;
  if (no !== attempt.sends) {
    d.note(`send ${no} refused by an open breaker; superseded by send ${attempt.sends}`);
    return true;
  }
  const at = breakerRetryAt(d, { connector: attempt.connector, seed: attempt.id, since: attempt.firstSentAt, until: d.p.deadlineAt });
  if (at === null) return false;
  const a = d.updateAttempt(attempt.id, { lastOutcome: 'not_sent', notSentReason: reason, providerRef: attempt.providerRef });
  emitCall(d, a, 'authorize', a.authKey, at);
  d.note(`send ${no} refused by an open breaker: not counted, sent again with the same key at ${at}`);
  return true;
}

/** The preparatory call (no money moves): on success send the authorize call; otherwise retry, then give up with proof. */
export function onPrepareOutcome(d: Draft, attempt: Attempt, o: CallOutcome): void {
  if (attempt.status !== 'preparing') return d.note(`prepare answer for attempt in ${attempt.status} ignored`);
  if ((o.kind === 'succeeded' || o.kind === 'pending') && o.providerRef !== '') {
    const a = d.updateAttempt(attempt.id, { status: 'authorizing', providerRef: o.providerRef, firstSentAt: d.nowIso, sends: 1 });
    emitCall(d, a, 'authorize', a.authKey);
    return;
  }
  // No money moves in a prepare: fail over at once when another candidate can take the payment.
  const next = nextCandidate({ attempts: d.attempts, candidates: d.p.routing.candidates, openBreakers: d.env.openBreakers, policies: d.env.policies, captureMethod: d.p.captureMethod, vaultedCard: d.p.vaultedCard !== undefined });
  const canFailOver = next.connector !== null && d.attempts.length < d.env.maxAttempts;
  const refusedLocally = o.kind === 'not_sent' && o.reason === 'local_validation';
  if (!canFailOver && attempt.prepareCalls <= d.env.core.maxResends && (o.kind === 'unknown' || (o.kind === 'not_sent' && !refusedLocally)) && !isPastDeadline(d)) {
    const a = d.updateAttempt(attempt.id, { prepareCalls: attempt.prepareCalls + 1, ...(o.providerRef === undefined ? {} : { providerRef: o.providerRef }) });
    const policy = d.policy(a.connector);
    emitCall(d, a, 'prepare', providerIdempotencyKey(d.p.id, 'prepare', a.no, policy.maxKeyLength), d.at(delay(d, a, a.prepareCalls, 'prepare')));
    return;
  }
  // The authorize call never left: no money can have moved on this attempt.
  d.updateAttempt(attempt.id, { status: 'abandoned', proof: 'not_sent', lastOutcome: o.kind, notSentReason: o.kind === 'not_sent' ? o.reason : 'prepare_failed' });
  afterProof(d);
}

/**
 * A decline that is proof only once the provider confirms the attempt cancelled (HeldDecline): the
 * attempt is fenced; onFenceConfirmed turns it into the decline, an unconfirmed cancel parks it.
 */
function holdDecline(d: Draft, attempt: Attempt, held: NonNullable<Attempt['authentication']>['heldDecline'] & object, providerRef?: string): void {
  const auth = attempt.authentication ?? freshAuthentication(false);
  const a = d.updateAttempt(attempt.id, {
    lastOutcome: 'declined', maybeReached: true, providerRef: providerRef ?? attempt.providerRef,
    authentication: { ...auth, stage: 'cancelling', heldDecline: held },
  });
  fence(d, a, `${held.code}: cancelling the attempt before the decline counts`);
}

/**
 * The provider asks for customer authentication. With a page to send the customer to (a redirect
 * and the merchant's return_url) the attempt waits for the customer until its expiry; no other
 * connector is tried meanwhile. Otherwise the attempt is cancelled and then declined:
 * authentication_unsupported (an action the gateway cannot present) or authentication_required.
 */
export function requireAction(d: Draft, attempt: Attempt, o: ActionRequired): void {
  const withRef = o.providerRef !== undefined ? { providerRef: o.providerRef } : {};
  const base = d.updateAttempt(attempt.id, { lastOutcome: 'action_required', maybeReached: true, ...withRef });
  const settings = d.p.authentication;
  // gatewayUrl null: the gateway that took the payment has no public URL for the customer's browser.
  if (o.redirect === undefined || settings === undefined || settings.returnUrl === null || settings.mode === 'none' || settings.gatewayUrl === null) {
    const code = o.redirect === undefined ? 'authentication_unsupported' : 'authentication_required';
    return holdDecline(d, base, { code, providerCode: o.action, class: 'hard', retryElsewhere: false });
  }
  if (d.p.state === 'needs_review') return d.note(`action required (${o.action}) while parked for review: left to the operator`);
  const prior = base.authentication ?? freshAuthentication(false);
  // A resume answered "authenticate again" keeps the customer's window: no return may extend it.
  const expiresAt = prior.stage === 'resuming' && prior.expiresAt !== null ? prior.expiresAt : authenticationExpiry(d.now, d.policy(base.connector), d.p.deadlineAt);
  const a = d.updateAttempt(base.id, {
    status: 'authenticating',
    authentication: { ...prior, stage: 'awaiting_customer', action: o.redirect, expiresAt, returned: null, returnedAt: null, resumeKey: null, resumes: 0 },
  });
  d.setState('requires_action', `action required: ${o.action}; the customer has until ${expiresAt}`);
  d.emit({ type: 'timer', timer: 'authentication_expiry', attemptId: a.id, runAt: expiresAt });
}

export { isCurrent, IN_FLIGHT_STATES };
