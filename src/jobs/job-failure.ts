// What a job's last failure means for its outbox row. BullMQ retries a job a few times (its
// infrastructure budget); the row's fate after the last try must not hang on a write made at that
// moment, since PostgreSQL may be what is down. So the reason travels with the job (BullMQ keeps
// its message as `failedReason`), and whoever finds the failed job — the worker at once, or the
// relay's sweep later (relay.ts), which is the guarantee — decides with failedJobFate().
//
// The decision (docs/operations.md, "The dead-letter queue is growing"):
// - Failed on infrastructure (PostgreSQL refused or dropped connections, Redis went away): the row
//   is run again once the sweep finds it. Its tries either never reached the row (a claim needs
//   PostgreSQL) or were cut off by the outage; the claim, isCallStillWanted(), the retention check
//   and the refusal judged against the claim guard a re-run like any other execution. An outage is
//   not a reason to park work for a person.
// - Failed for any other reason (a bug, data the code cannot handle): dead letter, as before.
// - Failed on infrastructure, but the row has been claimed `maxExecutions` times: dead letter too.
//   Its executions reached the row and still never finished; something about this row, not the
//   outage, is wrong, and re-running it for ever would hide that.

import { DrizzleQueryError } from 'drizzle-orm';
import { safeErrorText } from '../observability/safe-error-text.ts';
import { errorChain, isConnectionLoss } from '../store/connection-loss.ts';

const INFRASTRUCTURE = 'infrastructure: ';

/** The innermost message's first line: the driver's own words, not the query text a wrapper adds. */
function innermost(err: unknown): string {
  const chain = errorChain(err);
  const last = chain[chain.length - 1];
  return (last instanceof Error ? last.message : String(last)).split('\n')[0]!.slice(0, 300);
}

/**
 * What a job's processor throws: an infrastructure failure says so in its message, with the
 * original as its cause. A query error is told by its safe text: BullMQ keeps the message and the
 * stack (Redis, then the outbox row's last_error), and drizzle's carry the statement's parameters.
 */
export function asJobFailure(err: unknown): unknown {
  if (isConnectionLoss(err)) return new Error(`${INFRASTRUCTURE}${innermost(err)}`, { cause: err });
  if (errorChain(err).some((e) => e instanceof DrizzleQueryError || (e instanceof Error && e.message.includes('Failed query:')))) return new Error(safeErrorText(err), { cause: err });
  return err;
}

/** The failure (a job's failedReason, or an error) was an infrastructure failure. */
export function isInfrastructureFailure(failure: unknown): boolean {
  if (typeof failure === 'string') return failure.startsWith(INFRASTRUCTURE);
  return failure instanceof Error && failure.message.startsWith(INFRASTRUCTURE);
}

export type FailedJobFate = { readonly kind: 'rerun' } | { readonly kind: 'dead'; readonly reason: string };

/**
 * A failed job's row, decided: `executions` is how many executions have claimed the row (the
 * outbox row's `attempts`), `maxExecutions` the bound past which infrastructure failures after a
 * claim stop being re-run.
 */
export function failedJobFate(failedReason: string | undefined, executions: number, maxExecutions: number): FailedJobFate {
  const reason = failedReason ?? 'the job failed without a reason';
  if (!isInfrastructureFailure(reason)) return { kind: 'dead', reason };
  if (executions >= maxExecutions) return { kind: 'dead', reason: `${reason} (claimed ${executions} times without finishing)` };
  return { kind: 'rerun' };
}

/** Executions of one row past which infrastructure failures dead-letter it: three jobs' worth of tries. */
export function maxExecutionsFor(jobAttempts: number): number {
  return 3 * Math.max(1, jobAttempts);
}
