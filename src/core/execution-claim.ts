// How an answer from one execution of an outbox row is judged. A success or a decline is a fact
// about money and always counts, whoever sent it. A refusal (`not_sent`) is proof only about the
// send this execution made: it proves nothing when any other execution of the same row claimed it
// (before this one — a crashed worker's send may have arrived — or since — a stalled job's twin may
// be charging right now).

import type { CallOutcome } from './outcome.ts';
import type { ProviderOperation } from './inputs.ts';

/** This execution's claim, and the row's claim as seen when the answer is applied (null: row gone). */
export interface ClaimJudgement {
  readonly mine: { readonly token: string; readonly executions: number };
  readonly now: { readonly token: string | null; readonly executions: number } | null;
}

/** A query or a lookup reads; its refusal says nothing about money, so it is never re-judged. */
export function judgeAnswerAgainstClaim(outcome: CallOutcome, op: ProviderOperation, claim: ClaimJudgement): CallOutcome {
  if (outcome.kind !== 'not_sent' || op === 'query' || op === 'lookup') return outcome;
  const current = claim.now;
  if (current === null || current.token !== claim.mine.token || current.executions !== claim.mine.executions) {
    return {
      kind: 'unknown', reason: 'superseded_execution',
      detail: `not sent (${outcome.reason}), but another execution claimed this call since (${current?.executions ?? 'row gone'} claims now, ${claim.mine.executions} when this one claimed) and may have reached the provider`,
    };
  }
  if (current.executions > 1) {
    return {
      kind: 'unknown', reason: 'earlier_execution',
      detail: `not sent on execution ${current.executions} (${outcome.reason}), but an earlier execution of this call may have reached the provider`,
    };
  }
  return outcome;
}
