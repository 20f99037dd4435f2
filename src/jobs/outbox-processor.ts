// Executes one outbox row: claim it, check the payment still wants it, call the provider through
// its breaker, and apply the answer with transition() — marking the row done in that same
// transaction. A crash anywhere leaves the row pending, and a rerun uses the same provider key.

import { isCallStillWanted } from '../core/effect-wanted.ts';
import type { ProviderCallEffect, TimerEffect } from '../core/effects.ts';
import type { CallOutcome } from '../core/outcome.ts';
import type { Connector } from '../connectors/contract.ts';
import type { ConnectorBreakers } from '../routing/breakers.ts';
import type { Db } from '../store/db.ts';
import type { LoadedAggregate } from '../store/payment-load.ts';
import type { Payment } from '../core/payment.ts';
import { transition } from '../store/transition.ts';
import { executeCall, operationRef, usesBreaker } from './call-executor.ts';
import type { StoredPaymentMethod } from './call-executor.ts';
import { claimOutboxRowLoaded, markOutboxDone, outboxDoneStatement, releaseOutboxRow } from './outbox-claims.ts';
import type { ClaimedRow } from './outbox-claims.ts';
import type { StepEnvFactory } from './step-env.ts';

export interface ProcessorDeps {
  readonly db: Db;
  readonly connectors: ReadonlyMap<string, Connector>;
  readonly breakers: ConnectorBreakers;
  readonly envs: StepEnvFactory;
  /** Called after each commit that wrote outbox rows, with their ids (the relay publishes them). */
  readonly kick: (outboxIds?: readonly number[]) => void;
  readonly now?: () => Date;
  /** Longer than any provider call can take, so a live worker never loses its claim. */
  readonly leaseMs?: number;
  /** Test seam: wraps the provider call; `call` may be given a changed effect (the chaos harness plants bugs here). */
  readonly aroundCall?: (effect: ProviderCallEffect, call: (effect?: ProviderCallEffect) => Promise<CallOutcome>) => Promise<CallOutcome>;
}

export type ProcessResult =
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'applied' | 'noop' | 'illegal'; readonly op: string; readonly outcome?: CallOutcome['kind'] };

export async function processOutboxRow(deps: ProcessorDeps, outboxId: number, claimant: string): Promise<ProcessResult> {
  const now = deps.now ?? (() => new Date());
  // The claim reads the row's payment in the same statement.
  const claim = await claimOutboxRowLoaded(deps.db, outboxId, claimant, now(), deps.leaseMs ?? 120_000);
  if (!claim.ok) return { kind: 'skipped', reason: claim.reason };
  try {
    switch (claim.row.kind) {
      case 'provider_call':
        return await runProviderCall(deps, claim.row, claim.loaded, now);
      case 'timer':
        return await runTimer(deps, claim.row, claim.loaded?.payment ?? null, now);
      default:
        return { kind: 'skipped', reason: `no consumer for ${claim.row.kind}` };
    }
  } catch (err) {
    await releaseOutboxRow(deps.db, outboxId, claimant, (err as Error).message).catch(() => undefined);
    throw err;
  }
}

async function skip(deps: ProcessorDeps, row: ClaimedRow, now: () => Date, reason: string): Promise<ProcessResult> {
  await markOutboxDone(deps.db, row.id, now(), `skipped: ${reason}`);
  return { kind: 'skipped', reason };
}

async function runProviderCall(deps: ProcessorDeps, row: ClaimedRow, loaded: LoadedAggregate | null, now: () => Date): Promise<ProcessResult> {
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
  if (connector === undefined) {
    // The account left the config: nothing can be sent to it.
    outcome = { kind: 'not_sent', reason: 'local_validation', detail: `connector account ${effect.connector} is not configured` };
  } else {
    const pm = loaded.paymentMethod as StoredPaymentMethod | null;
    const call = (e: ProviderCallEffect = effect) => executeCall(connector, payment, attempt, e, pm);
    const guarded = (e?: ProviderCallEffect) => (usesBreaker(effect.op) ? deps.breakers.call(effect.connector, () => call(e)) : call(e));
    outcome = deps.aroundCall === undefined ? await guarded() : await deps.aroundCall(effect, guarded);
    outcome = notSentOnlyOnce(outcome, effect, row.attempts);
  }
  // Breaker states and time are read after the call: they are what the decision sees.
  const env = await deps.envs.forSnapshot(deps.db, payment.routing.snapshot);
  const result = await transition(deps.db, payment.id, { type: 'call_result', ref: operationRef(effect), outcome }, 'worker', env, {
    rawProvider: outcome,
    attemptId: attempt.id,
    now,
    loaded: payment,
    alsoWrite: outboxDoneStatement(row.id, now()),
    onCommitted: (ids) => deps.kick(ids),
  });
  return { kind: result.kind, op: effect.op, outcome: outcome.kind };
}

/**
 * "Not sent" proves nothing when this row was claimed before: an earlier execution (a worker killed,
 * or its database connection cut, after the call and before recording the answer) may have reached
 * the provider with the same key. Found by the chaos harness: a confirm that reached Stripe, then a
 * re-run during an outage refused at connect, taken as proof, failed over — a double charge.
 */
export function notSentOnlyOnce(outcome: CallOutcome, effect: ProviderCallEffect, executions: number): CallOutcome {
  if (outcome.kind !== 'not_sent' || executions <= 1 || effect.op === 'query') return outcome;
  return {
    kind: 'unknown', reason: 'earlier_execution',
    detail: `not sent on execution ${executions} (${outcome.reason}), but an earlier execution of this call may have reached the provider`,
  };
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
