// Releasing an approval we do not keep (a late approval, a partial one without opt-in): a void, or
// a refund under automatic capture. The release is done only when the provider confirms it — the
// call's final answer, or its event. An accepted release (`pending`, Adyen's "received") stays
// `releasing`. An unknown answer is resent with the same key; a release the provider confirms as
// failed is followed by a new numbered operation with a new key (a same-key resend would only get
// the stored failure back), at most `maxReleases` of them; past that the payment is parked for
// review with a release_failed discrepancy, never silently dropped.

import { backoffDelayMs, providerIdempotencyKey } from './keys.ts';
import { isLegalEdge } from './states.ts';
import type { Draft } from './draft.ts';
import type { Attempt, OperationFailure, ReleaseOperation } from './payment.ts';
import { releaseRefundId } from './payment.ts';
import type { CallOutcome, Declined, NotSent } from './outcome.ts';
import { emitLookup, isAlreadyDone } from './lookup-effect.ts';

export const DEFAULT_MAX_RELEASES = 3;

const maxReleases = (d: Draft): number => d.env.core.maxReleases ?? DEFAULT_MAX_RELEASES;

/**
 * The next release number of the payment. A first release of attempt n is at least n, so keys
 * written before releases were numbered (`<payment>:release:<attempt no>`) stay what they were.
 */
function nextReleaseNo(d: Draft, attempt: Attempt): number {
  const used = Math.max(0, ...d.attempts.map((a) => a.release?.no ?? 0));
  return attempt.release === null ? Math.max(attempt.no, used + 1) : used + 1;
}

function emitRelease(d: Draft, a: Attempt, runAt?: string): void {
  const r = a.release!;
  d.emit({
    type: 'provider_call', op: 'release', connector: a.connector, attemptId: a.id, providerKey: r.providerKey,
    amount: r.amount, currency: d.p.currency, ...(r.kind === 'refund' ? { refundId: releaseRefundId(a.id, r) } : {}),
    ...(runAt === undefined ? {} : { runAt }),
  });
}

/** Starts a release (round 1, or the next round after a confirmed failure) and writes its call. */
export function startRelease(d: Draft, attempt: Attempt, patch: Partial<Attempt>, runAt?: string): Attempt {
  const base = d.updateAttempt(attempt.id, patch);
  const policy = d.policy(base.connector);
  const no = nextReleaseNo(d, base);
  const prev = base.release;
  const earlierRefs = prev === null ? [] : [...prev.earlierRefs, ...(prev.providerRef === null ? [] : [prev.providerRef])];
  const release: ReleaseOperation = {
    no,
    round: (base.release?.round ?? 0) + 1,
    kind: d.p.captureMethod === 'automatic' ? 'refund' : 'void',
    amount: base.amountAuthorized,
    providerKey: providerIdempotencyKey(d.p.id, 'release', no, policy.maxKeyLength),
    status: 'requested',
    providerRef: null,
    earlierRefs,
    calls: 1,
    maybeReached: false,
    requestedAt: d.nowIso,
    failure: null,
    ...(prev?.held === undefined ? {} : { held: prev.held }),
  };
  const a = d.updateAttempt(base.id, { status: 'releasing', release: prev === null && release.kind === 'refund' ? hold(d, base, release) : release });
  emitRelease(d, a, runAt);
  return a;
}

/**
 * The approval captured money we give back (automatic capture): book it as held for release, not
 * as the merchant's, from the provider's confirmation of the approval until that of the release.
 */
function hold(d: Draft, a: Attempt, r: ReleaseOperation): ReleaseOperation {
  if (r.amount <= 0) return r;
  d.emit({ type: 'ledger', posting: 'held_for_release', amount: r.amount, currency: d.p.currency, connector: a.connector, attemptId: a.id });
  return { ...r, held: (r.held ?? 0) + r.amount };
}

function isFinalRefusal(o: CallOutcome): o is NotSent {
  return o.kind === 'not_sent' && (o.reason === 'validation' || o.reason === 'authentication' || o.reason === 'permission' || o.reason === 'local_validation');
}

function declinedFailure(o: Declined): OperationFailure {
  return { kind: 'declined', code: o.code, providerCode: o.providerCode, declineClass: o.class, message: o.message ?? null };
}

function refusedFailure(o: NotSent): OperationFailure {
  return { kind: 'rejected', code: o.reason, providerCode: null, declineClass: null, message: o.detail ?? null };
}

/** The legacy shape: an attempt in `releasing` written before releases were kept has no release record. */
function releaseOf(d: Draft, a: Attempt): ReleaseOperation {
  if (a.release !== null) return a.release;
  const policy = d.policy(a.connector);
  return {
    no: a.no, round: 1, kind: d.p.captureMethod === 'automatic' ? 'refund' : 'void', amount: a.amountAuthorized,
    providerKey: providerIdempotencyKey(d.p.id, 'release', a.no, policy.maxKeyLength), status: 'requested', providerRef: null,
    earlierRefs: [], calls: 1, maybeReached: false, requestedAt: a.createdAt, failure: null,
  };
}

function setRelease(d: Draft, a: Attempt, patch: Partial<ReleaseOperation>, attemptPatch: Partial<Attempt> = {}): Attempt {
  return d.updateAttempt(a.id, { ...attemptPatch, release: { ...releaseOf(d, a), ...patch } });
}

/** The provider confirmed the release: the approval is given back. A payment parked for it returns to where it was. */
export function releaseConfirmed(d: Draft, attempt: Attempt, providerRef?: string): void {
  const r = releaseOf(d, attempt);
  // The release refund is confirmed: the money held for it goes back to the customer.
  if (r.held !== undefined && r.held > 0) d.emit({ type: 'ledger', posting: 'release_refunded', amount: r.held, currency: d.p.currency, connector: attempt.connector, attemptId: attempt.id });
  const a = setRelease(d, attempt, { status: 'succeeded', ...(providerRef === undefined || providerRef === '' ? {} : { providerRef }), ...(r.held === undefined ? {} : { held: 0 }) }, { status: 'released' });
  d.note(`release ${r.no} of attempt ${a.no} confirmed`);
  const back = r.reviewFrom;
  const otherParked = d.attempts.some((x) => x.id !== a.id && x.status === 'review');
  if (d.p.state === 'needs_review' && back !== undefined && !otherParked && isLegalEdge('needs_review', back)) d.setState(back, `release ${r.no} confirmed after review`);
}

/**
 * The provider confirmed the release did not happen (declined, refused as invalid, a failed
 * CANCELLATION or REFUND, a release refund reversed): a new release with a new key, or review.
 */
export function releaseFailed(d: Draft, attempt: Attempt, failure: OperationFailure): void {
  const r = releaseOf(d, attempt);
  const failedOne = setRelease(d, attempt, { status: 'failed', failure });
  if (r.round < maxReleases(d)) {
    const delay = backoffDelayMs(r.round, d.env.core.backoffBaseMs, d.env.core.backoffCapMs, `${attempt.id}:release`);
    const a = startRelease(d, failedOne, {}, d.at(delay));
    d.note(`release ${r.no} of attempt ${a.no} failed (${failure.code}): release ${a.release!.no} with a new key`);
    return;
  }
  parkRelease(d, failedOne, `release of attempt ${attempt.no} failed ${r.round} times (last: ${failure.code})`);
}

function parkRelease(d: Draft, attempt: Attempt, why: string): void {
  const from = d.p.state;
  const parks = from !== 'needs_review' && isLegalEdge(from, 'needs_review');
  setRelease(d, attempt, { status: 'review', ...(parks ? { reviewFrom: from } : {}) }, { status: 'review' });
  d.emit({ type: 'discrepancy', kind: 'release_failed', attemptId: attempt.id, detail: `${why}; the customer may still be charged on ${attempt.connector}` });
  if (parks) d.setState('needs_review', why);
  else d.note(why);
}

const parkedForRelease = (a: Attempt): boolean => a.status === 'review' && a.release?.status === 'review';

/** The answer to a release call. */
export function onReleaseOutcome(d: Draft, attempt: Attempt, o: CallOutcome): void {
  const parked = parkedForRelease(attempt);
  if (attempt.status !== 'releasing' && !parked) return d.note(`release answer for attempt in ${attempt.status} ignored`);
  const r = releaseOf(d, attempt);
  switch (o.kind) {
    case 'succeeded':
      return releaseConfirmed(d, attempt, r.kind === 'refund' ? o.providerRef : undefined);
    case 'pending':
      // Accepted, not done: only the provider's confirmation releases the money.
      if (parked) return d.note('release accepted while parked for review');
      setRelease(d, attempt, { status: 'pending', maybeReached: true, providerRef: o.providerRef });
      return d.note(`release ${r.no} accepted; waiting for the provider's confirmation`);
    case 'declined':
      if (parked) return d.note('release declined while parked for review');
      return releaseFailed(d, attempt, declinedFailure(o));
    case 'not_sent':
    case 'unknown':
    case 'action_required': {
      if (parked) return d.note(`release answered ${o.kind} while parked for review`);
      // "Already canceled / refunded": looked up (step-lookup.ts) rather than refused again with this key.
      if (isAlreadyDone(o)) {
        const a = setRelease(d, attempt, { maybeReached: true });
        emitLookup(d, a, { op: 'release', attemptId: a.id, key: r.providerKey }, 1, r.amount, r.kind === 'refund' ? releaseRefundId(a.id, r) : undefined);
        return d.note(`release ${r.no} answered already done: looking it up`);
      }
      const reached = r.maybeReached || r.status === 'pending' || o.kind !== 'not_sent';
      if (!reached && isFinalRefusal(o)) return releaseFailed(d, attempt, refusedFailure(o));
      if (r.calls <= d.env.core.maxResends) {
        // Unknown (or never sent): the same release again, with the same key.
        const a = setRelease(d, attempt, { calls: r.calls + 1, maybeReached: reached });
        const delay = backoffDelayMs(r.calls + 1, d.env.core.backoffBaseMs, d.env.core.backoffCapMs, r.providerKey);
        emitRelease(d, a, d.at(delay));
        return d.note(`release ${r.no} answered ${o.kind}: sent again with the same key`);
      }
      return parkRelease(d, attempt, `release ${r.no} of attempt ${attempt.no} unresolved after ${r.calls} calls (${o.kind})`);
    }
  }
}

/** A provider event about a release (CANCELLATION, REFUND, refund.updated, …), matched to the attempt. */
export function onReleaseEvent(d: Draft, attempt: Attempt, ok: boolean, providerRef: string | undefined): void {
  const r = attempt.release;
  if (r === null && attempt.status !== 'releasing') return d.note(`release event for attempt ${attempt.no} in ${attempt.status} ignored`);
  const current = releaseOf(d, attempt);
  // An event about an earlier release of this attempt (its reference is not the current one's).
  const earlier = providerRef !== undefined && (current.earlierRefs.includes(providerRef) || (current.providerRef !== null && current.providerRef !== providerRef));
  if (earlier) {
    return d.note(`event about an earlier release of attempt ${attempt.no} (${providerRef}) ignored`);
  }
  if (ok) {
    if (current.status === 'succeeded') return d.note('duplicate release confirmation');
    return releaseConfirmed(d, attempt, providerRef);
  }
  if (current.status === 'failed') return d.note('duplicate release failure');
  if (parkedForRelease(attempt)) return d.note('release failure while parked for review');
  // A failure after a confirmation: the release refund was reversed, the customer is charged again
  // (held again, when it was booked as held).
  const reversed = current.status === 'succeeded';
  const heldAgain = reversed && current.kind === 'refund' && current.held !== undefined ? hold(d, attempt, { ...current, held: 0 }) : null;
  const a = reversed ? d.updateAttempt(attempt.id, { status: 'releasing', ...(heldAgain === null ? {} : { release: heldAgain }) }) : attempt;
  releaseFailed(d, a, { kind: 'declined', code: 'release_failed', providerCode: 'release_failed', declineClass: 'hard', message: null });
}
