// Customer authentication after the provider asked for it: the customer's return, the resume call
// and its answers, and the abandonment deadline. The attempt waits in `authenticating`; nothing
// here fails over, and nothing but the provider's word or a confirmed cancel ends it.

import { backoffDelayMs, providerIdempotencyKey } from './keys.ts';
import { MAX_RESUME_ROUNDS, nextResumeNo } from './authentication.ts';
import { noop } from './draft.ts';
import type { Draft, StepResult } from './draft.ts';
import {
  applyApproval, fence, IN_FLIGHT_STATES, isCurrent, onAuthorizationOutcome, requireAction,
} from './step-authorize.ts';
import type { Attempt } from './payment.ts';
import type { CallOutcome } from './outcome.ts';

function resumeCall(d: Draft, a: Attempt, runAt?: string): void {
  d.emit({
    type: 'provider_call', op: 'resume', connector: a.connector, attemptId: a.id, providerKey: a.authentication!.resumeKey,
    amount: d.p.amount, currency: d.p.currency, ...(runAt === undefined ? {} : { runAt }),
  });
}

/**
 * The customer's browser is back from the provider's page (the API checked its token and the
 * provider's evidence). What the connector reads of it is kept on the attempt (for resends) and the
 * payment resumes through one outbox call with its own key. A replayed return (a reload, a second
 * POST) finds the attempt no longer awaiting the customer: nothing happens. A return past
 * MAX_RESUME_ROUNDS gives the customer up: the attempt is cancelled, as at its expiry.
 */
export function onCustomerReturned(d: Draft, attemptId: string, returned: Readonly<Record<string, string>>): StepResult | null {
  const attempt = d.attempt(attemptId);
  if (attempt === undefined) return noop(`no attempt ${attemptId}`);
  const auth = attempt.authentication;
  if (attempt.status !== 'authenticating' || auth?.stage !== 'awaiting_customer') return noop(`customer return for attempt in ${attempt.status} (${auth?.stage ?? 'no authentication'}): already handled`);
  if (!isCurrent(d, attempt)) return noop('customer return for an earlier attempt');
  if (auth.rounds >= MAX_RESUME_ROUNDS) {
    abandonAuthentication(d, attempt, `the customer came back ${auth.rounds + 1} times; at most ${MAX_RESUME_ROUNDS} resume rounds per attempt`);
    return null;
  }
  const no = nextResumeNo(d.attempts);
  const key = providerIdempotencyKey(d.p.id, 'resume', no, d.policy(attempt.connector).maxKeyLength);
  const a = d.updateAttempt(attempt.id, {
    authentication: { ...auth, stage: 'resuming', returned: { ...returned }, returnedAt: d.nowIso, resumeKey: key, resumes: 1, rounds: auth.rounds + 1 },
  });
  d.setState('authorizing', 'the customer returned from authentication: resuming');
  resumeCall(d, a);
  return null;
}

/** The resume call's answer: the provider's word on the authentication, or nothing we may act on. */
export function onResumeOutcome(d: Draft, attempt: Attempt, answer: CallOutcome): StepResult | null {
  const auth = attempt.authentication;
  if (attempt.status !== 'authenticating' || auth?.stage !== 'resuming') return noop(`resume answer for attempt in ${attempt.status} (${auth?.stage ?? 'none'})`);
  const o = boundToAttempt(attempt, answer);
  switch (o.kind) {
    case 'succeeded':
      if (!isCurrent(d, attempt) || !IN_FLIGHT_STATES.has(d.p.state)) {
        onAuthorizationOutcome(d, attempt, o, 'call');
        return null;
      }
      applyApproval(d, attempt, o);
      return null;
    case 'declined':
      onAuthorizationOutcome(d, attempt, o, 'call');
      return null;
    case 'action_required':
      if (auth.rounds >= MAX_RESUME_ROUNDS) {
        abandonAuthentication(d, attempt, `the provider asked for authentication again after ${auth.rounds} resume rounds (at most ${MAX_RESUME_ROUNDS})`);
        return null;
      }
      // A further challenge (or the same page again): back to the customer, within the same window.
      requireAction(d, attempt, o);
      return null;
    case 'pending': {
      // The provider is deciding (Adyen Received): its notification settles it; ask again if it stays silent.
      const a = d.updateAttempt(attempt.id, { lastOutcome: 'pending', ...(attempt.providerRef === null ? { providerRef: o.providerRef } : {}) });
      d.emit({ type: 'timer', timer: 'resume_retry', attemptId: a.id, runAt: d.at(resumeDelay(d, a)) });
      d.note('resume accepted; the provider is deciding');
      return null;
    }
    case 'not_sent':
    case 'unknown':
      // Never a decline, never proof: ask again with the same key (Stripe: retrieve again; Adyen:
      // /payments/details with the stored redirectResult), then cancel if the provider stays mute.
      if (d.p.state === 'authorizing') d.setState('auth_unknown', `resume answered ${o.kind}`);
      resendResume(d, d.updateAttempt(attempt.id, { lastOutcome: o.kind }), o.kind);
      return null;
  }
}

/** An answer naming another provider object than the attempt's is about some other payment: never its word, and never its reference. */
function boundToAttempt(attempt: Attempt, o: CallOutcome): CallOutcome {
  const ref = o.providerRef;
  if (attempt.providerRef === null || ref === undefined || ref === attempt.providerRef) return o;
  return { kind: 'unknown', reason: 'integrity_mismatch', providerRef: attempt.providerRef, alert: true, detail: `the resume answered for ${ref}; the attempt is ${attempt.providerRef}` };
}

function resumeDelay(d: Draft, a: Attempt): number {
  return backoffDelayMs(a.authentication!.resumes, d.env.core.backoffBaseMs, d.env.core.backoffCapMs, `${a.id}:resume`);
}

function resendResume(d: Draft, attempt: Attempt, why: string): void {
  const auth = attempt.authentication!;
  if (auth.resumes > d.env.core.maxResends) return fence(d, attempt, `resume unanswered after ${auth.resumes} calls (${why})`);
  const a = d.updateAttempt(attempt.id, { authentication: { ...auth, resumes: auth.resumes + 1 } });
  resumeCall(d, a, d.at(resumeDelay(d, a)));
  d.note(`resume sent again (call ${auth.resumes + 1}) with the same key`);
}

/** The provider stayed silent after accepting the resume: ask again, same key. */
export function onResumeRetry(d: Draft, attemptId: string | undefined): StepResult | null {
  const attempt = attemptId === undefined ? undefined : d.attempt(attemptId);
  if (attempt?.status !== 'authenticating' || attempt.authentication?.stage !== 'resuming') return noop('no resume waiting');
  resendResume(d, attempt, 'silence');
  return null;
}

/**
 * The customer's time is over (or the payment's deadline came first): a customer still away is
 * given up on and the attempt cancelled at the provider. Failed (authentication_abandoned) only once
 * the cancel is confirmed; a refused or unconfirmed cancel parks the payment for review.
 */
export function abandonAuthentication(d: Draft, attempt: Attempt, why: string): void {
  const auth = attempt.authentication!;
  const a = d.updateAttempt(attempt.id, { authentication: { ...auth, stage: 'abandoned' }, maybeReached: true });
  fence(d, a, why);
}

export function onAuthenticationExpiry(d: Draft, attemptId: string | undefined): StepResult | null {
  const attempt = attemptId === undefined ? undefined : d.attempt(attemptId);
  const auth = attempt?.authentication;
  if (attempt === undefined || auth === undefined || attempt.status !== 'authenticating' || auth.stage !== 'awaiting_customer') {
    return noop('no customer awaited');
  }
  if (auth.expiresAt === null || d.now.getTime() < Date.parse(auth.expiresAt)) return noop('authentication not expired yet');
  abandonAuthentication(d, attempt, `the customer did not complete authentication by ${auth.expiresAt}`);
  return null;
}
