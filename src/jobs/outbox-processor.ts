// Executes one outbox row: claim it, check the payment still wants it, call the provider through
// its breaker, and apply the answer with transition() — marking the row done in that same
// transaction. A crash anywhere leaves the row pending, and a rerun uses the same provider key.

import { isCallStillWanted } from '../core/effect-wanted.ts';
import { judgeAnswerAgainstClaim } from '../core/execution-claim.ts';
import { keyExpiredAtExecution } from '../core/key-retention.ts';
import type { ProviderCallEffect, TimerEffect } from '../core/effects.ts';
import type { CallOutcome } from '../core/outcome.ts';
import type { Connector } from '../connectors/contract.ts';
import type { ConnectorBreakers } from '../routing/breakers.ts';
import type { Db } from '../store/db.ts';
import type { LoadedAggregate } from '../store/payment-load.ts';
import type { Payment } from '../core/payment.ts';
import { transition } from '../store/transition.ts';
import { executeCall, operationRef, usesBreaker } from './call-executor.ts';
import type { StoredPaymentMethod, StoredShopper } from './call-executor.ts';
import { cardForSend, forgetCodeAfterResponse } from './card-reveal.ts';
import type { CardVaultDeps } from './card-reveal.ts';
import type { AccountBudget } from './account-budget.ts';
import { claimAsApplied, claimOutboxRowLoaded, executionToken, keepClaim, markOutboxDone, outboxDoneStatement, releaseOutboxRow, unpublishOutboxRow } from './outbox-claims.ts';
import type { ClaimedRow } from './outbox-claims.ts';
import type { StepEnvFactory } from './step-env.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

export interface ProcessorDeps {
  readonly db: Db;
  readonly connectors: ReadonlyMap<string, Connector>;
  readonly breakers: ConnectorBreakers;
  readonly envs: StepEnvFactory;
  /** Called after each commit that wrote outbox rows, with their ids (the relay publishes them). */
  readonly kick: (outboxIds?: readonly number[]) => void;
  readonly now?: () => Date;
  /**
   * The claim's lease, renewed every third of it while the execution runs (default 15 s): a killed
   * worker's row is taken over within one lease. A stalled process that cannot renew loses the claim
   * to another execution; its answer is still applied, and judged against the row as it is then.
   */
  readonly leaseMs?: number;
  /** False: the lease is not renewed (tests: an execution whose process stalls). */
  readonly renewLease?: boolean;
  /** Test seam: wraps the provider call; `call` may be given a changed effect (the chaos harness plants bugs here). */
  readonly aroundCall?: (effect: ProviderCallEffect, call: (effect?: ProviderCallEffect) => Promise<CallOutcome>) => Promise<CallOutcome>;
  /** Test seams (the chaos harness plants broken versions): the execution-time checks. */
  readonly checks?: ExecutionChecks;
  /** The fleet-wide budget of each connector account (src/jobs/account-budget.ts); absent: none. */
  readonly budget?: AccountBudget;
  /** The vault, for payments paid with a vaulted card; absent: such a payment's calls are retried (and dead-lettered). */
  readonly cards?: CardVaultDeps;
}

/** How a provider call row gets its slot in its account's budget. */
export type BudgetSlot =
  /** The caller already holds one (the process that committed the row took it without waiting). */
  | { readonly kind: 'held'; readonly release: () => Promise<void> }
  /** Wait for one, at most this long (a BullMQ worker: the job already holds the row's turn). */
  | { readonly kind: 'wait'; readonly account: string; readonly maxWaitMs: number };

export interface ExecutionChecks {
  readonly keyExpired?: typeof keyExpiredAtExecution;
  readonly judgeAnswer?: typeof judgeAnswerAgainstClaim;
}

export type ProcessResult =
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'applied' | 'noop' | 'illegal'; readonly op: string; readonly outcome?: CallOutcome['kind'] };

/**
 * `jobId`: the BullMQ job, or `local-…` when the committing process runs the row (for the record);
 * the claim itself is a token of this execution's own. `slot`: a provider call's place in its
 * account's budget, taken before the claim, so a row waiting for a slot is not claimed (a claim
 * that sent nothing would still count as an execution when a later refusal is judged).
 */
export async function processOutboxRow(deps: ProcessorDeps, outboxId: number, jobId: string, slot?: BudgetSlot): Promise<ProcessResult> {
  const now = deps.now ?? (() => new Date());
  let release: (() => Promise<void>) | null = null;
  if (slot?.kind === 'held') release = slot.release;
  else if (slot?.kind === 'wait' && deps.budget !== undefined) {
    release = await deps.budget.take(slot.account, slot.maxWaitMs);
    // No slot in time: the row goes back to the relay (its sweep publishes it again shortly).
    if (release === null) {
      await unpublishOutboxRow(deps.db, outboxId);
      return { kind: 'skipped', reason: 'budget' };
    }
  }
  try {
    return await claimAndRun(deps, outboxId, jobId, now);
  } finally {
    await release?.().catch(() => undefined);
  }
}

async function claimAndRun(deps: ProcessorDeps, outboxId: number, jobId: string, now: () => Date): Promise<ProcessResult> {
  const token = executionToken(jobId);
  // The claim reads the row's payment in the same statement.
  const leaseMs = deps.leaseMs ?? DEFAULT_LEASE_MS;
  const claim = await claimOutboxRowLoaded(deps.db, outboxId, token, now(), leaseMs);
  if (!claim.ok) return { kind: 'skipped', reason: claim.reason };
  const stopRenewing = deps.renewLease === false ? () => undefined : keepClaim(deps.db, outboxId, token, now, leaseMs);
  try {
    switch (claim.row.kind) {
      case 'provider_call':
        return await runProviderCall(deps, { ...claim.row, token, keyFirstDueAt: claim.keyFirstDueAt }, claim.loaded, now);
      case 'timer':
        return await runTimer(deps, claim.row, claim.loaded?.payment ?? null, now);
      default:
        return { kind: 'skipped', reason: `no consumer for ${claim.row.kind}` };
    }
  } catch (err) {
    stopRenewing();
    await releaseOutboxRow(deps.db, outboxId, token, safeErrorText(err)).catch(() => undefined);
    throw err;
  } finally {
    stopRenewing();
  }
}

const DEFAULT_LEASE_MS = 15_000;

async function skip(deps: ProcessorDeps, row: ClaimedRow, now: () => Date, reason: string): Promise<ProcessResult> {
  await markOutboxDone(deps.db, row.id, now(), `skipped: ${reason}`);
  return { kind: 'skipped', reason };
}

type ExecutedRow = ClaimedRow & { readonly token: string; readonly keyFirstDueAt: Date | null };

async function runProviderCall(deps: ProcessorDeps, row: ExecutedRow, loaded: LoadedAggregate | null, now: () => Date): Promise<ProcessResult> {
  const effect = row.payload as ProviderCallEffect;
  if (row.paymentId === null) return skip(deps, row, now, 'no payment');
  // The claim's read gives the aggregate and the payment method; transition() starts from this aggregate.
  if (loaded === null) return skip(deps, row, now, 'payment missing');
  const payment = loaded.payment;
  const wanted = isCallStillWanted(payment, effect);
  if (!wanted.wanted) return skip(deps, row, now, wanted.reason);
  const attempt = payment.attempts.find((a) => a.id === effect.attemptId)!;
  const connector = deps.connectors.get(effect.connector);
  let outcome: CallOutcome;
  const expired = connector === undefined ? null : keyExpiredNow(deps, effect, row, connector, now());
  if (connector === undefined) {
    // The account left the config: nothing can be sent to it.
    outcome = { kind: 'not_sent', reason: 'local_validation', detail: `connector account ${effect.connector} is not configured` };
  } else if (expired !== null) {
    // Not sent, and not proof either: an earlier send with this key may have moved money. The core decides.
    outcome = { kind: 'unknown', reason: 'key_expired', detail: expired };
  } else {
    const pm = loaded.paymentMethod as StoredPaymentMethod | null;
    const shopper = loaded.shopper as StoredShopper | null;
    const vaulted = effect.op === 'authorize' && pm?.id !== undefined ? pm.id : null;
    const forSend = vaulted === null ? null : await cardForSend(deps.cards, vaulted, attempt.id, effect.providerKey ?? '');
    if (forSend?.kind === 'not_sent') {
      outcome = forSend.outcome;
    } else {
      const card = forSend?.card;
      if (card !== undefined) await deps.cards?.sent?.(row.id, card);
      const call = (e: ProviderCallEffect = effect) => executeCall(connector, payment, attempt, e, pm, shopper, card);
      const guarded = (e?: ProviderCallEffect) => (usesBreaker(effect.op) ? deps.breakers.call(effect.connector, () => call(e)) : call(e));
      outcome = deps.aroundCall === undefined ? await guarded() : await deps.aroundCall(effect, guarded);
      if (vaulted !== null) await forgetCodeAfterResponse(deps.cards, vaulted, outcome);
    }
  }
  const answered = outcome;
  // Breaker states and time are read after the call: they are what the decision sees.
  const env = await deps.envs.forSnapshot(deps.db, payment.routing.snapshot);
  const result = await transition(deps.db, payment.id, { type: 'call_result', ref: operationRef(effect), outcome: answered }, 'worker', env, {
    rawProvider: answered,
    attemptId: attempt.id,
    now,
    loaded: payment,
    alsoWrite: outboxDoneStatement(row.id, now()),
    onCommitted: (ids) => deps.kick(ids),
    // Only a refusal can change when judged against the claim; the lock costs a round trip, so other answers skip it.
    ...(answered.kind === 'not_sent' ? { judgeInput: judgeRefusal(deps, row, effect, answered) } : {}),
  });
  return { kind: result.kind, op: effect.op, outcome: answered.kind };
}

/**
 * A refusal is judged against the row as it is when the answer is applied, in that transaction,
 * with the row locked: another execution that claimed it since this one did (a stalled job's twin)
 * may be charging with the same key right now; an execution before this one (a worker killed after
 * its call) may have charged. Either way the refusal is `unknown`, resolved like any unknown.
 * Found by the chaos harness (the earlier execution: a confirm reached Stripe, the rerun was refused
 * during an outage, taken as proof, failed over — a double charge) and by review (the later one).
 */
function judgeRefusal(deps: ProcessorDeps, row: ExecutedRow, effect: ProviderCallEffect, outcome: CallOutcome) {
  const judge = deps.checks?.judgeAnswer ?? judgeAnswerAgainstClaim;
  return async (tx: Parameters<typeof claimAsApplied>[0]) => {
    const current = await claimAsApplied(tx, row.id);
    const judged = judge(outcome, effect.op, { mine: { token: row.token, executions: row.attempts }, now: current });
    return { input: { type: 'call_result' as const, ref: operationRef(effect), outcome: judged }, rawProvider: judged };
  };
}

/**
 * The connector's declared retention (the account's override included) against the age of the
 * key: checked on every execution, so a delayed, replayed or recovered row is covered too.
 */
function keyExpiredNow(deps: ProcessorDeps, effect: ProviderCallEffect, row: ExecutedRow, connector: Connector, now: Date): string | null {
  const check = deps.checks?.keyExpired ?? keyExpiredAtExecution;
  return check(effect.op, row.keyFirstDueAt, now, connector.policy.keyRetentionMs, deps.envs.core.retentionMarginMs);
}

/**
 * "Not sent" proves nothing when this row was claimed before (kept for callers that judge by a
 * claim count alone; the worker judges with judgeAnswerAgainstClaim, which also sees later claims).
 */
export function notSentOnlyOnce(outcome: CallOutcome, effect: ProviderCallEffect, executions: number): CallOutcome {
  return judgeAnswerAgainstClaim(outcome, effect.op, { mine: { token: '', executions }, now: { token: '', executions } });
}

async function runTimer(deps: ProcessorDeps, row: ClaimedRow, payment: Payment | null, now: () => Date): Promise<ProcessResult> {
  const timer = row.payload as TimerEffect;
  if (row.paymentId === null) return skip(deps, row, now, 'no payment');
  if (payment === null) return skip(deps, row, now, 'payment missing');
  const env = await deps.envs.forSnapshot(deps.db, payment.routing.snapshot);
  const input = { type: 'timer_fired' as const, timer: timer.timer, ...(timer.attemptId === undefined ? {} : { attemptId: timer.attemptId }) };
  const result = await transition(deps.db, payment.id, input, 'timer', env, {
    now,
    loaded: payment,
    alsoWrite: outboxDoneStatement(row.id, now()),
    onCommitted: (ids) => deps.kick(ids),
  });
  return { kind: result.kind, op: `timer:${timer.timer}` };
}
