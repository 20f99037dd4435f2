// The answer to a lookup (lookup-effect.ts): the provider's object of an operation that was
// answered "already done". A conclusive answer — succeeded, declined, or pending at the provider —
// is the operation's answer and goes to its own handler, which applies it as it would the call's;
// not_sent{validation} says the object shows it did not happen and never can (a capture or refund:
// all of it captured or refunded by someone else), so the provider's refusal stands.
// An inconclusive one (nothing found, the provider could not be asked, a provider with no lookup
// such as Adyen, whose notification settles the operation instead) is looked up again with backoff,
// at most CorePolicy.maxQueries times; then the operation is unresolved as after spent resends:
// a capture or void parked for review, a refund kept pending for reconciliation, a release or a
// fence back to its own bounded resends.

import { noop } from './draft.ts';
import type { Draft, StepResult } from './draft.ts';
import type { LookupSubject } from './inputs.ts';
import { emitLookup } from './lookup-effect.ts';
import type { CallOutcome, NotSent } from './outcome.ts';
import type { Attempt } from './payment.ts';
import { releaseRefundId } from './payment.ts';
import { authorizedAttempt, captureFailed, captureUnresolved, notSentFailure, onCaptureOutcome, onRefundOutcome, onVoidOutcome, refundFailed, refundUnresolved, voidTarget, voidUnresolved } from './step-modify.ts';
import { onReleaseOutcome } from './step-release.ts';

const conclusive = (o: CallOutcome): boolean => o.kind === 'succeeded' || o.kind === 'declined' || o.kind === 'pending';

/**
 * A lookup that found the operation did not happen and never can (someone else captured or refunded
 * all of it): the provider's refusal stands, whatever earlier sends may have reached it.
 */
const refusedForGood = (o: CallOutcome): o is NotSent => o.kind === 'not_sent' && o.reason === 'validation';

/** Fences answer through the payment's step (step.ts), which owns onFenceOutcome: passed in to keep imports one way. */
export type FenceAnswer = (d: Draft, attempt: Attempt, o: CallOutcome) => void;

export function onLookupOutcome(d: Draft, about: LookupSubject, n: number, o: CallOutcome, onFence: FenceAnswer): StepResult | null {
  const again = n < d.env.core.maxQueries;
  const why = `after ${n} lookup${n === 1 ? '' : 's'} (${o.kind}${'reason' in o ? ` ${o.reason}` : ''})`;
  switch (about.op) {
    case 'capture': {
      const c = d.captures.find((x) => x.id === about.captureId);
      const attempt = authorizedAttempt(d);
      if (c === undefined || attempt === undefined || (c.status !== 'requested' && c.status !== 'pending')) return noop(`lookup of capture ${about.captureId}: capture ${c?.status ?? 'missing'}`);
      if (conclusive(o)) return onCaptureOutcome(d, c.id, o);
      if (refusedForGood(o)) {
        captureFailed(d, c, `rejected: ${o.reason} (looked up)`, notSentFailure(o));
        return null;
      }
      if (again) emitLookup(d, attempt, about, n + 1, c.amount);
      else captureUnresolved(d, c, attempt, why);
      return null;
    }
    case 'refund': {
      const r = d.refunds.find((x) => x.id === about.refundId);
      const attempt = authorizedAttempt(d);
      if (r === undefined || attempt === undefined || (r.status !== 'requested' && r.status !== 'pending')) return noop(`lookup of refund ${about.refundId}: refund ${r?.status ?? 'missing'}`);
      if (conclusive(o)) return onRefundOutcome(d, r.id, o);
      if (refusedForGood(o)) {
        refundFailed(d, r, notSentFailure(o));
        return null;
      }
      if (again) emitLookup(d, attempt, about, n + 1, r.amount);
      else refundUnresolved(d, r, attempt, why);
      return null;
    }
    case 'void': {
      const v = d.p.voidOp;
      const attempt = v === null ? undefined : voidTarget(d, v);
      const open = d.p.state === 'voiding' || (d.p.state === 'needs_review' && v !== null);
      if (v === null || v.providerKey !== about.key || attempt === undefined || !open) return noop(`lookup of void ${about.key}: payment ${d.p.state}, current void ${v?.providerKey ?? 'none'}`);
      if (conclusive(o)) return onVoidOutcome(d, o);
      if (again) emitLookup(d, attempt, about, n + 1, d.p.amountAuthorized);
      else if (d.p.state === 'voiding') voidUnresolved(d);
      else d.note(`void ${v.no} still unresolved ${why}`);
      return null;
    }
    case 'release': {
      const attempt = d.attempt(about.attemptId);
      const r = attempt?.release ?? null;
      if (attempt === undefined || r === null || r.providerKey !== about.key || attempt.status !== 'releasing') return noop(`lookup of release ${about.key}: attempt ${attempt?.status ?? 'missing'}, current release ${r?.providerKey ?? 'none'}`);
      if (conclusive(o)) {
        onReleaseOutcome(d, attempt, o);
        return null;
      }
      if (again) emitLookup(d, attempt, about, n + 1, r.amount, r.kind === 'refund' ? releaseRefundId(attempt.id, r) : undefined);
      // Back to the release's own bounded same-key resends, then review.
      else onReleaseOutcome(d, attempt, { kind: 'unknown', reason: 'not_found', detail: `release ${r.no} unresolved ${why}` });
      return null;
    }
    case 'fence': {
      const attempt = d.attempt(about.attemptId);
      if (attempt === undefined || attempt.status !== 'fencing') return noop(`lookup of the fence of ${about.attemptId}: attempt ${attempt?.status ?? 'missing'}`);
      if (conclusive(o)) {
        onFence(d, attempt, o);
        return null;
      }
      if (again) emitLookup(d, attempt, about, n + 1, d.p.amount);
      // Back to the fence's own bounded calls, then review.
      else onFence(d, attempt, { kind: 'unknown', reason: 'not_found', detail: `fence unresolved ${why}` });
      return null;
    }
  }
}
