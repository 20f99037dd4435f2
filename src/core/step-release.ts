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
import type { Attempt, OperationFailure, ReleaseOperation, ReleaseRound } from './payment.ts';
import { releaseRefundId } from './payment.ts';
import type { CallOutcome, Declined, NotSent } from './outcome.ts';
import { emitLookup, isAlreadyDone } from './lookup-effect.ts';

export const DEFAULT_MAX_RELEASES = 3;

/** The discrepancy a late approval of this attempt is recorded as (and its release's confirmation settles). */
export function lateApprovalKind(attempt: Attempt): 'late_authentication' | 'late_approval' {
  return attempt.authentication?.stage === 'abandoned' ? 'late_authentication' : 'late_approval';
}

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
    amount: r.amount, currency: d.p.currency, reference: releaseRefundId(a.id, r), ...(r.kind === 'refund' ? { refundId: releaseRefundId(a.id, r) } : {}),
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
  // The round that ends here keeps what names it: its late answers and events stay its own.
  const earlier: ReleaseRound[] = prev === null ? [] : [...(prev.earlier ?? []), { round: prev.round, no: prev.no, providerKey: prev.providerKey, providerRef: prev.providerRef, status: 'failed' }];
  const release: ReleaseOperation = {
    no,
    round: (base.release?.round ?? 0) + 1,
    kind: d.p.captureMethod === 'automatic' ? 'refund' : 'void',
    amount: base.amountAuthorized,
    providerKey: providerIdempotencyKey(d.p.id, 'release', no, policy.maxKeyLength),
    status: 'requested',
    providerRef: null,
    earlierRefs,
    earlier,
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
  // The live money of a late approval is given back: its open discrepancy (none for a partial approval) has its answer.
  d.emit({ type: 'discrepancy_settled', kind: lateApprovalKind(a), attemptId: a.id, subject: a.id, resolution: `settled by the provider: release ${r.no} of attempt ${a.no} confirmed, the approval given back` });
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

/** What names a release round: our reference on its object, its key, the provider's id for it. */
export interface RoundNames {
  readonly reference?: string;
  readonly providerKey?: string;
  readonly providerRef?: string;
}

type RoundMatch =
  | { readonly kind: 'current' }
  | { readonly kind: 'earlier'; readonly round: ReleaseRound | null }
  /** Names no round we know of: only a connector that echoes neither reference nor id sends these. */
  | { readonly kind: 'unnamed' };

/**
 * The round an answer or event is about, by the object it names — never "whichever round is
 * current": a failed round's late events would otherwise fail, or confirm, the round after it.
 */
export function releaseRoundNamed(attempt: Attempt, r: ReleaseOperation, by: RoundNames): RoundMatch {
  const earlier = r.earlier ?? [];
  if (by.reference !== undefined) {
    if (by.reference === releaseRefundId(attempt.id, r)) return { kind: 'current' };
    const e = earlier.find((x) => releaseRefundId(attempt.id, x) === by.reference);
    if (e !== undefined) return { kind: 'earlier', round: e };
  }
  if (by.providerKey !== undefined) {
    if (by.providerKey === r.providerKey) return { kind: 'current' };
    const e = earlier.find((x) => x.providerKey === by.providerKey);
    return { kind: 'earlier', round: e ?? null };
  }
  if (by.providerRef !== undefined && by.providerRef !== '') {
    if (by.providerRef === r.providerRef) return { kind: 'current' };
    const e = earlier.find((x) => x.providerRef === by.providerRef);
    if (e !== undefined) return { kind: 'earlier', round: e };
    // Another object than the current round's, known or not: an earlier round's (legacy records).
    if (r.earlierRefs.includes(by.providerRef) || r.providerRef !== null) return { kind: 'earlier', round: null };
  }
  return { kind: 'unnamed' };
}

/** Writes the provider's id on the round it belongs to, as soon as an answer or event names it. */
function recordRoundRef(d: Draft, a: Attempt, m: RoundMatch, providerRef: string | undefined): Attempt {
  if (providerRef === undefined || providerRef === '') return a;
  const r = releaseOf(d, a);
  if (m.kind === 'current' && r.providerRef === null) return setRelease(d, a, { providerRef });
  if (m.kind === 'earlier' && m.round !== null && m.round.providerRef === null) {
    const round = m.round.round;
    return setRelease(d, a, { earlier: (r.earlier ?? []).map((x) => (x.round === round ? { ...x, providerRef } : x)) });
  }
  return a;
}

/**
 * News about an earlier round (all of them failed): old news, but for one thing. A void's final
 * answer is the authorization's own state (Stripe has no object per cancel: the PaymentIntent
 * `canceled`), so a late answer that it is canceled is the release done, whichever round asked.
 */
function onEarlierRound(d: Draft, attempt: Attempt, round: ReleaseRound | null, canceled: boolean, what: string): void {
  const r = releaseOf(d, attempt);
  const named = round === null ? 'an earlier release' : `release ${round.no}`;
  if (canceled && r.kind === 'void' && r.status !== 'succeeded' && (attempt.status === 'releasing' || parkedForRelease(attempt))) {
    d.note(`${what} of ${named} of attempt ${attempt.no}: the authorization is canceled`);
    return releaseConfirmed(d, attempt);
  }
  d.note(`${what} of ${named} of attempt ${attempt.no} (failed already): old news`);
}

/** The late answer to an earlier round's call (its key is not the current round's). */
export function onEarlierReleaseOutcome(d: Draft, attempt: Attempt, providerKey: string, o: CallOutcome): void {
  if (attempt.release === null) return d.note(`release answer for attempt ${attempt.no} without a release ignored`);
  const m = releaseRoundNamed(attempt, attempt.release, { providerKey });
  const ref = 'providerRef' in o && typeof o.providerRef === 'string' && attempt.release.kind === 'refund' ? o.providerRef : undefined;
  const a = recordRoundRef(d, attempt, m, ref);
  onEarlierRound(d, a, m.kind === 'earlier' ? m.round : null, o.kind === 'succeeded', `a late ${o.kind} answer`);
}

export interface ReleaseEvent extends RoundNames {
  readonly ok: boolean;
  readonly reversal?: boolean;
}

/** A provider event about a release (CANCELLATION, REFUND, refund.updated, …), matched to its round. */
export function onReleaseEvent(d: Draft, attempt: Attempt, ev: ReleaseEvent): void {
  const r = attempt.release;
  if (r === null && attempt.status !== 'releasing') return d.note(`release event for attempt ${attempt.no} in ${attempt.status} ignored`);
  const m = releaseRoundNamed(attempt, releaseOf(d, attempt), { ...(ev.reference === undefined ? {} : { reference: ev.reference }), ...(ev.providerRef === undefined ? {} : { providerRef: ev.providerRef }) });
  const a = recordRoundRef(d, attempt, m, releaseOf(d, attempt).kind === 'refund' ? ev.providerRef : undefined);
  // An event names a round's own object (a refund, an Adyen cancel): about that round only.
  if (m.kind === 'earlier') return onEarlierRound(d, a, m.round, false, ev.ok ? 'a confirmation' : 'a failure');
  const current = releaseOf(d, a);
  if (ev.ok) {
    if (current.status === 'succeeded') return d.note('duplicate release confirmation');
    return releaseConfirmed(d, a, ev.providerRef);
  }
  if (current.status === 'failed') return d.note('duplicate release failure');
  if (parkedForRelease(a)) return d.note('release failure while parked for review');
  // A failure after a confirmation: the release refund was reversed, the customer is charged again
  // (held again, when it was booked as held).
  const reversed = current.status === 'succeeded';
  const heldAgain = reversed && current.kind === 'refund' && current.held !== undefined ? hold(d, a, { ...current, held: 0 }) : null;
  const next = reversed ? d.updateAttempt(a.id, { status: 'releasing', ...(heldAgain === null ? {} : { release: heldAgain }) }) : a;
  releaseFailed(d, next, { kind: 'declined', code: ev.reversal === true ? 'release_reversed' : 'release_failed', providerCode: 'release_failed', declineClass: 'hard', message: null });
}
