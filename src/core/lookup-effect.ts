// "Already done" is an answer, not a refusal: the provider refused our capture, void, refund,
// release or fence because its object is already in the state the operation would put it in
// (unknown{already_done}). That says nothing about who did it, and a resend with the same key is
// refused the same way, so the core reads the object back instead: a `lookup` call, written as an
// outbox row like any provider call, whose answer the operation's own handler applies
// (step-lookup.ts). A leaf module: the operation handlers emit lookups without importing the
// handler of their answers.

import type { Draft } from './draft.ts';
import type { LookupSubject } from './inputs.ts';
import type { CallOutcome, Unknown } from './outcome.ts';
import type { Attempt } from './payment.ts';
import { backoffDelayMs } from './keys.ts';

/**
 * A lookup is a read: the next one waits at most this long, so the lookups of an operation whose
 * outcome stays unknown end (and it parks) within about a minute, not the many minutes a resend's
 * backoff grows to.
 */
export const LOOKUP_BACKOFF_CAP_MS = 10_000;

export function isAlreadyDone(o: CallOutcome): o is Unknown {
  return o.kind === 'unknown' && o.reason === 'already_done';
}

function seedOf(about: LookupSubject): string {
  switch (about.op) {
    case 'capture':
      return about.captureId;
    case 'refund':
      return about.refundId;
    case 'void':
    case 'release':
      return about.key;
    case 'fence':
      return `${about.attemptId}:fence`;
  }
}

/**
 * Writes lookup `n` of an operation: the first one at once, the next ones with the core's backoff.
 * `refundId`: the provider-side id of a refund (a merchant refund's, or a release refund's round id).
 */
export function emitLookup(d: Draft, attempt: Attempt, about: LookupSubject, n: number, amount: number, refundId?: string): void {
  const cap = Math.min(d.env.core.backoffCapMs, LOOKUP_BACKOFF_CAP_MS);
  const runAt = n <= 1 ? undefined : d.at(backoffDelayMs(n, d.env.core.backoffBaseMs, cap, `${seedOf(about)}:lookup`));
  d.emit({
    type: 'provider_call', op: 'lookup', connector: attempt.connector, attemptId: attempt.id, providerKey: null, amount, currency: d.p.currency,
    ...(about.op === 'capture' ? { captureId: about.captureId } : {}),
    ...(refundId !== undefined ? { refundId } : about.op === 'refund' ? { refundId: about.refundId } : {}),
    lookup: { ...about, n },
    ...(runAt === undefined ? {} : { runAt }),
  });
}
