// The cancel of the uncaptured remainder after a final partial capture, where the provider keeps it
// authorized (Adyen with multiple partial captures: a capture never closes the payment; /cancels
// does). It is a void of the payment with its own number and key; the payment stays captured, and
// the remainder counts as released only once the provider confirms the cancel (CANCELLATION).
// A cancel the provider refuses, or that stays unanswered past its resends, is a release_failed
// discrepancy: the remainder stays held on the customer's card until the authorization lapses.

import { backoffDelayMs, providerIdempotencyKey } from './keys.ts';
import { isAlreadyDone } from './lookup-effect.ts';
import { noop } from './draft.ts';
import type { Draft, StepResult } from './draft.ts';
import type { CallOutcome } from './outcome.ts';
import type { Attempt, OperationFailure, VoidOperation } from './payment.ts';

function emitRemainderCancel(d: Draft, attempt: Attempt, v: VoidOperation, runAt?: string): void {
  d.emit({
    type: 'provider_call', op: 'void', connector: attempt.connector, attemptId: attempt.id, providerKey: v.providerKey, voidNo: v.no,
    amount: v.remainder ?? 0, currency: d.p.currency, ...(runAt === undefined ? {} : { runAt }),
  });
}

export function startRemainderCancel(d: Draft, attempt: Attempt, remainder: number): void {
  const no = (d.p.voidOp?.no ?? 0) + 1;
  const v: VoidOperation = { no, providerKey: providerIdempotencyKey(d.p.id, 'void', no, d.policy(attempt.connector).maxKeyLength), calls: 1, requestedAt: d.nowIso, remainder };
  d.setVoidOp(v);
  emitRemainderCancel(d, attempt, v);
  d.note(`final capture: cancelling the remaining ${remainder} ${d.p.currency} at ${attempt.connector}`);
}

function remainderCancelFailed(d: Draft, attempt: Attempt, v: VoidOperation, failure: OperationFailure): void {
  d.setVoidOp({ ...v, failure });
  d.emit({
    type: 'discrepancy', kind: 'release_failed', attemptId: attempt.id, subject: v.providerKey,
    detail: `the cancel of the remaining ${v.remainder ?? 0} ${d.p.currency} after the final capture did not succeed (${failure.code}): it stays held at ${attempt.connector} until the authorization lapses`,
  });
}

export function onRemainderCancelOutcome(d: Draft, v: VoidOperation, attempt: Attempt, o: CallOutcome, n?: number): StepResult | null {
  if (n !== undefined && n !== v.no) return noop(`answer for void ${n}, not the remainder cancel (void ${v.no})`);
  if (v.released === true || v.failure !== undefined) return noop(`remainder cancel already ${v.released === true ? 'confirmed' : 'failed'}`);
  switch (o.kind) {
    case 'succeeded':
      d.setVoidOp({ ...v, released: true });
      d.note(`the remaining ${v.remainder ?? 0} ${d.p.currency} released (cancel confirmed)`);
      return null;
    case 'pending':
      d.note('remainder cancel accepted; confirmation comes later');
      return null;
    case 'declined':
      remainderCancelFailed(d, attempt, v, { kind: 'declined', code: o.code, providerCode: o.providerCode, declineClass: o.class, message: o.message ?? null });
      return null;
    case 'not_sent':
    case 'unknown':
    case 'action_required':
      // Cancelled already (by another hand): nothing of the remainder is held any more.
      if (isAlreadyDone(o)) {
        d.setVoidOp({ ...v, released: true });
        d.note('remainder cancel answered already done: released');
        return null;
      }
      if (v.calls <= d.env.core.maxResends) {
        const next = { ...v, calls: v.calls + 1 };
        d.setVoidOp(next);
        emitRemainderCancel(d, attempt, next, d.at(backoffDelayMs(next.calls, d.env.core.backoffBaseMs, d.env.core.backoffCapMs, v.providerKey)));
        return null;
      }
      remainderCancelFailed(d, attempt, v, {
        kind: o.kind === 'not_sent' ? 'not_sent' : 'declined', code: o.kind === 'action_required' ? 'action_required' : o.reason, providerCode: null, declineClass: null,
        message: o.kind === 'action_required' ? null : (o.detail ?? null),
      });
      return null;
  }
}
