// The unit of work (architecture §4): the only code that writes payment state. One input, one
// database transaction: load the aggregate, run the pure step(), and write the new version, its
// changed attempts/captures/refunds, the transition log row and the effects' outbox rows together.
// Commit before any network call: the onCommitted hook (relay kick) runs after COMMIT.

import { and, eq, getTableColumns, sql } from 'drizzle-orm';
import type { SQL, Table } from 'drizzle-orm';
import type { Effect } from '../core/effects.ts';
import type { PaymentInput } from '../core/inputs.ts';
import type { Payment } from '../core/payment.ts';
import type { PaymentState } from '../core/states.ts';
import { historyCopy } from '../core/secret-mask.ts';
import { newPayment, step } from '../core/step.ts';
import type { NewPaymentRequest, StepEnv, StepResult } from '../core/step.ts';
import type { Db, DbOrTx } from './db.ts';
import { effectParts } from './effect-rows.ts';
import { outboxIdsOf, runParts, withClause } from './write-parts.ts';
import type { WritePart } from './write-parts.ts';
import { loadAggregate } from './payment-load.ts';
import { executeByShape } from './prepared.ts';
import { attemptRow, captureRow, paymentRow, refundRow, vaultedCardOf } from './payment-rows.ts';
import { captures, paymentAttempts, paymentTransitions, payments, refunds } from './schema.ts';
import { announceCreated, announceTransition } from '../observability/transition-feed.ts';

type IllegalCode = Extract<StepResult, { kind: 'illegal' }>['code'];

export const TRANSITION_ORIGINS = ['api', 'worker', 'webhook', 'poll', 'timer', 'operator', 'reconcile'] as const;
export type TransitionOrigin = (typeof TRANSITION_ORIGINS)[number];

export interface TransitionHooks {
  /** Test seam: inside the transaction, right after the aggregate was loaded. */
  afterLoad?(ctx: { tryNo: number; payment: Payment }): Promise<void>;
  /** Test seam: inside the transaction, after every write, right before COMMIT. */
  beforeCommit?(ctx: { backendPid: number }): Promise<void>;
}

/**
 * Dependency-injection seams. Production passes none; the chaos harness swaps in deliberately
 * broken parts (chaos/planted-bugs.ts) to prove its invariants catch them.
 */
export interface TransitionSeams {
  /** Replaces step(). */
  readonly step?: typeof step;
  /** Replaces the optimistic write of the payment row; resolves true when the row was written. */
  readonly writePayment?: (tx: DbOrTx, paymentId: string, changes: Record<string, unknown>, loadedVersion: number) => Promise<boolean>;
}

/** What transition() runs step() with: the core's environment, plus the seams (none in production). */
export interface TransitionEnv extends StepEnv {
  readonly seams?: TransitionSeams;
}

/** The version check that makes concurrent transitions of one payment serialize (the UPDATE; transition() runs it together with the log row). */
function guardedUpdate(tx: DbOrTx, paymentId: string, changes: Record<string, unknown>, loadedVersion: number) {
  return tx
    .update(payments)
    .set({ ...changes, version: sql`${payments.version} + 1` })
    .where(and(eq(payments.id, paymentId), eq(payments.version, loadedVersion)))
    .returning({ version: payments.version });
}

export interface TransitionOptions {
  /** Tenant scope: another merchant's payment is not found. */
  readonly merchantId?: string;
  /** The provider's own payload (webhook body, API answer), kept on the transition row. */
  readonly rawProvider?: unknown;
  /** The attempt this input concerns, when the input itself does not name one. */
  readonly attemptId?: string;
  readonly now?: () => Date;
  /** Optimistic tries before giving up with VersionConflictError (default 5). */
  readonly maxTries?: number;
  /** Called after COMMIT with the new outbox ids (the relay kick); the relay's sweep covers a failure here. */
  readonly onCommitted?: (outboxIds: readonly number[]) => void | Promise<void>;
  /**
   * More writes in the same transaction, whatever step() decided (a worker marks its outbox row
   * done here); `logged` is what the transition row just written says.
   */
  readonly inTransaction?: (tx: DbOrTx, logged: LoggedTransition) => Promise<void>;
  /**
   * A data-modifying statement written in the transition's own statement, whatever step() decided
   * (the worker's "outbox row done"): like inTransaction, without a round trip of its own.
   */
  readonly alsoWrite?: SQL;
  readonly hooks?: TransitionHooks;
  /**
   * Judges the input inside the transaction, before step() sees it, against rows this callback
   * reads and locks there (the worker judges a refusal against its outbox row's claim as it is
   * when the answer is applied). Returns the input to apply and what to log as the provider's answer.
   */
  readonly judgeInput?: (tx: DbOrTx, input: PaymentInput) => Promise<{ readonly input: PaymentInput; readonly rawProvider?: unknown }>;
  /**
   * The aggregate the caller read moments ago: the first try runs step() on it instead of reading
   * it again. A stale one is caught like any concurrent change — the guarded write (WHERE version =
   * its version) or, for an ignored input, a version check — and the retry reads afresh.
   */
  readonly loaded?: Payment;
}

/** The outcome and reason of the transition row this transaction wrote. */
export interface LoggedTransition {
  readonly outcome: 'applied' | 'ignored';
  readonly reason: string;
}

interface Written {
  readonly payment: Payment;
  readonly transitionId: number;
}

export type TransitionResult =
  | (Written & {
      readonly kind: 'applied';
      readonly effects: readonly Effect[];
      readonly outboxIds: readonly number[];
      readonly from: PaymentState;
      readonly to: PaymentState;
      readonly note: string;
    })
  | (Written & { readonly kind: 'noop'; readonly effects: readonly []; readonly outboxIds: readonly []; readonly reason: string })
  | (Written & {
      readonly kind: 'illegal';
      readonly effects: readonly [];
      readonly outboxIds: readonly [];
      readonly code: IllegalCode;
      readonly reason: string;
    });

export class PaymentNotFoundError extends Error {
  override readonly name = 'PaymentNotFoundError';
  constructor(readonly paymentId: string) {
    super(`payment ${paymentId} not found`);
  }
}

export class VersionConflictError extends Error {
  override readonly name = 'VersionConflictError';
  constructor(readonly paymentId: string, readonly tries: number) {
    super(`payment ${paymentId} kept changing underneath: gave up after ${tries} tries`);
  }
}

/** Thrown inside the transaction to roll it back when the version moved since we loaded. */
class StaleVersion extends Error {
  override readonly name = 'StaleVersion';
}

/** The attempt an input concerns, for the transition row (webhook and worker lookups use it). */
export function attemptIdOf(input: PaymentInput): string | null {
  switch (input.type) {
    case 'call_result':
      return 'attemptId' in input.ref ? input.ref.attemptId : null;
    case 'provider_fact':
      return 'attemptId' in input.fact ? input.fact.attemptId : null;
    case 'timer_fired':
      return input.attemptId ?? null;
    case 'customer_returned':
      return input.attemptId;
    case 'submit':
    case 'capture_requested':
    case 'void_requested':
    case 'metadata_updated':
    case 'refund_requested':
    case 'operator_resolved':
      return null;
  }
}

async function backendPid(tx: DbOrTx): Promise<number> {
  const r = await tx.execute<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid`);
  return r.rows[0]!.pid;
}

/** Upserts of the attempts, captures and refunds that step() added or changed, as write parts. */
function childParts(tx: DbOrTx, before: Payment, after: Payment, now: Date): WritePart[] {
  const changed = <T extends { id: string }>(old: readonly T[], next: readonly T[]): T[] => {
    const prior = new Map(old.map((x) => [x.id, JSON.stringify(x)]));
    if (next.length < old.length) throw new Error(`step bug: payment ${after.id} lost children`);
    return next.filter((x) => prior.get(x.id) !== JSON.stringify(x));
  };
  const a = changed(before.attempts, after.attempts).map((x) => attemptRow(after.id, x, now));
  const c = changed(before.captures, after.captures).map((x) => captureRow(after.id, x, now));
  const r = changed(before.refunds, after.refunds).map((x) => refundRow(after, x, now));
  // Every column but the keys comes from the new row: `excluded` is the row we tried to insert.
  const all = (table: Table) =>
    Object.fromEntries(
      Object.entries(getTableColumns(table))
        .filter(([k]) => k !== 'id' && k !== 'paymentId')
        .map(([k, col]) => [k, sql.raw(`excluded.${col.name}`)]),
    );
  const parts: WritePart[] = [];
  if (a.length > 0) parts.push({ name: 'c_att', body: tx.insert(paymentAttempts).values(a).onConflictDoUpdate({ target: paymentAttempts.id, set: all(paymentAttempts) }).getSQL() });
  if (c.length > 0) parts.push({ name: 'c_cap', body: tx.insert(captures).values(c).onConflictDoUpdate({ target: captures.id, set: all(captures) }).getSQL() });
  if (r.length > 0) parts.push({ name: 'c_rfd', body: tx.insert(refunds).values(r).onConflictDoUpdate({ target: refunds.id, set: all(refunds) }).getSQL() });
  return parts;
}

/**
 * A unique violation in the optimistic first try's one-statement write: the children and effects
 * are written in the statement that also checks the version, so a stale aggregate (another writer
 * added attempt no. 2 first) can fail on UNIQUE (payment_id, no) before the guard is looked at.
 * That try is retried like a stale version; the retry holds the row lock, so there a violation is real.
 */
function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if ((e as { code?: unknown }).code === '23505') return true;
  }
  return false;
}

/**
 * A write run without a transaction divides by the number of rows its guard matched (not a
 * constant, so the planner cannot fold it): none matched — a concurrent writer got there first —
 * raises division_by_zero, which aborts the statement with every part of it, as ROLLBACK does for
 * the transactional path. It is then retried like any stale version.
 */
function isStaleGuard(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if ((e as { code?: unknown }).code === '22012') return true;
  }
  return false;
}

async function refusingStale<T>(alone: boolean, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (alone && isStaleGuard(err)) throw new StaleVersion();
    throw err;
  }
}

const also = (opts: TransitionOptions): WritePart[] => (opts.alsoWrite === undefined ? [] : [{ name: 'also', body: opts.alsoWrite }]);

async function attemptOnce(
  db: Db,
  paymentId: string,
  input: PaymentInput,
  origin: TransitionOrigin,
  env: TransitionEnv,
  opts: TransitionOptions,
  tryNo: number,
): Promise<TransitionResult> {
  // Without a transaction when nothing needs one (issue 25 item 4: BEGIN and COMMIT were 2 of every
  // transition's 3-4 round trips): a first try whose only write is the one statement below, which
  // is atomic on its own — no judgeInput or inTransaction callback, no test hooks, no seam writing
  // the payment separately. That statement then refuses itself when its guard fails (see
  // isStaleGuard), so a stale version still writes nothing; later tries lock the row, in a transaction.
  const alone = tryNo === 1 && opts.judgeInput === undefined && opts.inTransaction === undefined && opts.hooks === undefined && env.seams?.writePayment === undefined;
  const unit = <T>(work: (tx: DbOrTx) => Promise<T>): Promise<T> => (alone ? work(db) : db.transaction(work));
  return unit(async (tx) => {
    const now = opts.now?.() ?? new Date();
    const judged = opts.judgeInput === undefined ? { input } : await opts.judgeInput(tx, input);
    input = judged.input;
    // First try is optimistic (no lock while step() runs). After a conflict we lock the row, so the
    // retry queues behind the current writer instead of racing it again: one retry always suffices.
    const given = opts.loaded;
    const preloaded = tryNo === 1 && given !== undefined && given.id === paymentId && (opts.merchantId === undefined || given.merchantId === opts.merchantId) ? given : null;
    const loaded = preloaded ?? (await loadAggregate(tx, paymentId, {
      ...(opts.merchantId === undefined ? {} : { merchantId: opts.merchantId }),
      forUpdate: tryNo > 1,
    }));
    if (loaded === null) throw new PaymentNotFoundError(paymentId);
    await opts.hooks?.afterLoad?.({ tryNo, payment: loaded });

    const result = (env.seams?.step ?? step)(loaded, input, now, env);
    // History is append-only and served (timeline, operator view): it keeps a provider's page
    // without its query and no client secret; step() saw the whole input.
    const log = {
      paymentId,
      input: historyCopy(input),
      origin,
      attemptId: opts.attemptId ?? attemptIdOf(input),
      rawProvider: historyCopy(judged.rawProvider ?? opts.rawProvider ?? null),
      at: now,
    };

    if (result.kind !== 'applied') {
      const insert = tx
        .insert(paymentTransitions)
        .values({
          ...log, fromState: loaded.state, toState: loaded.state, outcome: 'ignored', version: loaded.version,
          code: result.kind === 'illegal' ? result.code : 'noop', reason: result.reason,
        })
        .returning({ id: paymentTransitions.id });
      // Nothing guards an ignored input's write: in the same statement, check that the caller's
      // aggregate is still current (a stale one rolls the row back and the retry reads afresh; a
      // locked read is current).
      const parts: WritePart[] = [{ name: 't', body: insert.getSQL() }, ...also(opts)];
      // Whether the aggregate was handed in or read here (unlocked), a version that moved since aborts the whole statement.
      const guard = alone ? sql`, 1 / (SELECT count(*)::int FROM payments WHERE id = ${paymentId} AND version = ${loaded.version}) AS guard` : sql``;
      const r = await refusingStale(alone, () => executeByShape<{ id: string; version: number | null }>(
        tx,
        sql`${withClause(parts)}SELECT (SELECT id FROM t)::text AS id, (SELECT version FROM payments WHERE id = ${paymentId}) AS version${guard}`,
      ));
      if (preloaded !== null && r.rows[0]?.version !== loaded.version) throw new StaleVersion();
      const transitionId = Number(r.rows[0]!.id);
      const written = { payment: loaded, transitionId, effects: [] as const, outboxIds: [] as const };
      await opts.inTransaction?.(tx, { outcome: 'ignored', reason: result.reason });
      if (opts.hooks?.beforeCommit !== undefined) await opts.hooks.beforeCommit({ backendPid: await backendPid(tx) });
      return result.kind === 'noop'
        ? { kind: 'noop', reason: result.reason, ...written }
        : { kind: 'illegal', code: result.code, reason: result.reason, ...written };
    }

    const next = result.payment;
    if (next.version !== loaded.version + 1) throw new Error(`step bug: applied version ${next.version} after ${loaded.version}`);
    const { id: _id, merchantId: _m, createdAt: _c, version: _v, ...changes } = paymentRow(next, now);
    const insert = tx
      .insert(paymentTransitions)
      .values({ ...log, fromState: result.from, toState: result.to, outcome: 'applied', version: next.version, reason: result.note })
      .returning({ id: paymentTransitions.id });
    let transitionId: number;
    let outboxIds: number[];
    if (env.seams?.writePayment !== undefined) {
      if (!(await env.seams.writePayment(tx, paymentId, changes, loaded.version))) throw new StaleVersion();
      transitionId = (await insert)[0]!.id;
      await runParts(tx, [...childParts(tx, loaded, next, now), ...also(opts)]);
      outboxIds = await runParts(tx, effectParts(tx, 'e', result.effects, { payment: next, transitionId, now, newId: env.newId }));
    } else {
      // ONE statement: the guarded write, the log row, the changed children and the effects. Every
      // part runs whatever the guard finds; when it matched nothing (a concurrent writer got there
      // first) the throw rolls it all back.
      const parts: WritePart[] = [
        { name: 'u', body: guardedUpdate(tx, paymentId, changes, loaded.version).getSQL() },
        { name: 't', body: insert.getSQL() },
        ...childParts(tx, loaded, next, now),
        ...effectParts(tx, 'e', result.effects, { payment: next, transitionId: sql`(SELECT id FROM t)`, now, newId: env.newId }),
        ...also(opts),
      ];
      let r;
      // Alone (no transaction to roll back), a guard that matched nothing fails the statement itself.
      const updated = alone ? sql`1 / (SELECT count(*)::int FROM u)` : sql`(SELECT count(*) FROM u)::int`;
      try {
        r = await refusingStale(alone, () => executeByShape<{ updated: number; id: string; ids: string[] }>(
          tx,
          sql`${withClause(parts)}SELECT ${updated} AS updated, (SELECT id FROM t)::text AS id, ${outboxIdsOf(parts)}::text[] AS ids`,
        ));
      } catch (err) {
        if (tryNo === 1 && isUniqueViolation(err)) throw new StaleVersion();
        throw err;
      }
      if (r.rows[0]?.updated !== 1) throw new StaleVersion();
      transitionId = Number(r.rows[0].id);
      outboxIds = r.rows[0].ids.map(Number);
    }
    await opts.inTransaction?.(tx, { outcome: 'applied', reason: result.note });
    if (opts.hooks?.beforeCommit !== undefined) await opts.hooks.beforeCommit({ backendPid: await backendPid(tx) });
    return { kind: 'applied', payment: next, effects: result.effects, outboxIds, from: result.from, to: result.to, note: result.note, transitionId };
  });
}

/** `payment`: the version this commit wrote (what a read right after it would see, unless a later commit changed it again). */
type CommitWatcher = (paymentId: string, payment: Payment) => void;
const commitWatchers = new WeakMap<object, Set<CommitWatcher>>();

/**
 * Calls `watcher` with the payment id after every COMMIT that changed a payment through this `db`
 * (transition() applied, or createPayment()). The API's waits use it to re-read a payment when it
 * changed instead of polling. Returns the unsubscribe function.
 */
export function watchPaymentCommits(db: Db, watcher: CommitWatcher): () => void {
  let set = commitWatchers.get(db);
  if (set === undefined) {
    set = new Set();
    commitWatchers.set(db, set);
  }
  set.add(watcher);
  return () => {
    set.delete(watcher);
  };
}

function notifyCommitted(db: Db, payment: Payment): void {
  const set = commitWatchers.get(db);
  if (set === undefined) return;
  for (const w of set) {
    try {
      w(payment.id, payment);
    } catch {
      // A watcher must never fail a committed transition.
    }
  }
}

async function committed(opts: { onCommitted?: (ids: readonly number[]) => void | Promise<void> }, outboxIds: readonly number[]): Promise<void> {
  if (opts.onCommitted === undefined || outboxIds.length === 0) return;
  try {
    await opts.onCommitted(outboxIds);
  } catch {
    // The transition is committed; the relay's periodic sweep publishes what the kick missed.
  }
}

/** Applies one input to one payment in one transaction. Ignored inputs are recorded and returned, not thrown. */
export async function transition(
  db: Db,
  paymentId: string,
  input: PaymentInput,
  origin: TransitionOrigin,
  env: TransitionEnv,
  opts: TransitionOptions = {},
): Promise<TransitionResult> {
  const maxTries = opts.maxTries ?? 5;
  for (let tryNo = 1; tryNo <= maxTries; tryNo++) {
    try {
      const result = await attemptOnce(db, paymentId, input, origin, env, opts, tryNo);
      if (result.kind === 'applied') notifyCommitted(db, result.payment);
      await committed(opts, result.outboxIds);
      announceTransition(result, origin);
      return result;
    } catch (err) {
      if (!(err instanceof StaleVersion)) throw err;
    }
  }
  throw new VersionConflictError(paymentId, maxTries);
}

export interface CreatePaymentOptions {
  readonly origin?: TransitionOrigin;
  /** What the worker sends to the provider: tokens by connector account, or a sandbox test card. */
  readonly paymentMethod?: unknown;
  /** The shopper's browser_info and shopper_ip (forwarded where a provider uses them); written once. */
  readonly shopper?: unknown;
  /** More writes in the creating transaction (the API records the payment id on its idempotency key here). */
  readonly inTransaction?: (tx: DbOrTx) => Promise<void>;
  readonly now?: () => Date;
  readonly onCommitted?: (outboxIds: readonly number[]) => void | Promise<void>;
}

export interface CreatedPayment {
  readonly payment: Payment;
  readonly effects: readonly Effect[];
  readonly outboxIds: readonly number[];
  readonly transitionId: number;
}

/** Writes a new payment (already submitted by newPayment()), its first attempt, its first transition and its outbox rows in one transaction. */
export async function createPayment(db: Db, req: NewPaymentRequest, env: StepEnv, opts: CreatePaymentOptions = {}): Promise<CreatedPayment> {
  const now = opts.now?.() ?? new Date();
  const submitted = newPayment(req, now, env);
  // What the payment method column holds that the resource shows (a vaulted card's summary), as a load would read it.
  const payment: Payment = { ...submitted.payment, ...vaultedCardOf(opts.paymentMethod ?? null) };
  const { effects, to } = submitted;
  const result = await db.transaction(async (tx) => {
    const empty: Payment = { ...payment, attempts: [], captures: [], refunds: [] };
    // ONE statement: the payment, its first attempt, its first log row and its effects.
    const parts: WritePart[] = [
      { name: 'p', body: tx.insert(payments).values({ ...paymentRow(payment, now), paymentMethod: opts.paymentMethod ?? null, shopper: opts.shopper ?? null }).getSQL() },
      ...childParts(tx, empty, payment, now),
      {
        name: 't',
        body: tx
          .insert(paymentTransitions)
          .values({
            paymentId: payment.id, fromState: 'created', toState: to, input: { type: 'submit' } satisfies PaymentInput, origin: opts.origin ?? 'api',
            attemptId: payment.attempts[0]?.id ?? null, outcome: 'applied', version: payment.version, reason: 'created and submitted', at: now,
          })
          .returning({ id: paymentTransitions.id })
          .getSQL(),
      },
      ...effectParts(tx, 'e', effects, { payment, transitionId: sql`(SELECT id FROM t)`, now, newId: env.newId }),
    ];
    const r = await executeByShape<{ id: string; ids: string[] }>(tx, sql`${withClause(parts)}SELECT (SELECT id FROM t)::text AS id, ${outboxIdsOf(parts)}::text[] AS ids`);
    const transitionId = Number(r.rows[0]!.id);
    const outboxIds = r.rows[0]!.ids.map(Number);
    await opts.inTransaction?.(tx);
    return { payment, effects, outboxIds, transitionId };
  });
  notifyCommitted(db, result.payment);
  await committed(opts, result.outboxIds);
  announceCreated(result, opts.origin ?? 'api');
  return result;
}
