// A worker claims its outbox row with a lease before any provider call, and marks it done in the
// same transaction that applies the answer. A row already done is skipped: job ids vanish when
// Redis is flushed, so this check, not BullMQ, is the last guard against running an effect twice.
//
// Each execution claims with its own token (compare-and-set on an expired lease): a stalled BullMQ
// job, or a job the relay republished after a Redis restart, carries the same job id as the live
// one, so the job id cannot tell two executions apart — a token can.

import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { Db, DbOrTx } from '../store/db.ts';
import { aggregateFromJoinedRow, aggregateLateral } from '../store/payment-load.ts';
import type { LoadedAggregate } from '../store/payment-load.ts';

export interface ClaimedRow {
  readonly id: number;
  readonly paymentId: string | null;
  readonly kind: string;
  readonly payload: unknown;
  /** How many executions have claimed this row, this one included. */
  readonly attempts: number;
}

/** A claim token for one execution: the job id (for people reading the row) and a random part (for the CAS). */
export function executionToken(jobId: string): string {
  return `${jobId}~${randomUUID()}`;
}

export type Claim = { readonly ok: true; readonly row: ClaimedRow } | { readonly ok: false; readonly reason: 'done' | 'claimed' | 'missing' };

/**
 * The claiming UPDATE, as the first part of a statement that reads more about the row (`c`).
 * `token` is this execution's own (executionToken): only a free or expired lease is taken, never a
 * live one, not even by a job with the same id.
 */
export function claimStatement(id: number, token: string, now: Date, leaseMs: number): SQL {
  const until = new Date(now.getTime() + leaseMs);
  return sql`UPDATE outbox SET claimed_until = ${until}, claimed_by = ${token}, attempts = attempts + 1
     WHERE id = ${id} AND status = 'pending'
       AND (claimed_until IS NULL OR claimed_until < ${now})
     RETURNING id, payment_id, kind, payload, attempts, created_at`;
}

/** Takes the row for `leaseMs` unless it is done or another live execution holds it. */
export async function claimOutboxRow(db: Db, id: number, token: string, now: Date, leaseMs: number): Promise<Claim> {
  const res = await db.execute<{ id: string; payment_id: string | null; kind: string; payload: unknown; attempts: number }>(claimStatement(id, token, now, leaseMs));
  const row = res.rows[0];
  if (row !== undefined) return { ok: true, row: { id: Number(row.id), paymentId: row.payment_id, kind: row.kind, payload: row.payload, attempts: row.attempts } };
  return whyNotClaimed(db, id);
}

export async function whyNotClaimed(db: Db, id: number): Promise<Extract<Claim, { ok: false }>> {
  const probe = await db.execute<{ status: string }>(sql`SELECT status FROM outbox WHERE id = ${id}`);
  const status = probe.rows[0]?.status;
  if (status === undefined) return { ok: false, reason: 'missing' };
  return { ok: false, reason: status === 'pending' ? 'claimed' : 'done' };
}

export type LoadedClaim =
  | {
      readonly ok: true;
      readonly row: ClaimedRow;
      readonly loaded: LoadedAggregate | null;
      /**
       * When the first outbox row carrying this row's provider key was due (its run_at, on the
       * gateway's clock like every decision): no execution sends before it, so it is no later than
       * the first time the provider can have seen the key (null: no key).
       */
      readonly keyFirstDueAt: Date | null;
    }
  | Extract<Claim, { ok: false }>;

/**
 * claimOutboxRow, and in the same statement the payment the row works on (one round trip instead
 * of two). The read is the claiming statement's snapshot: callers use it as transition()'s
 * `loaded`, which the version guard checks anyway.
 */
export async function claimOutboxRowLoaded(db: Db, id: number, token: string, now: Date, leaseMs: number): Promise<LoadedClaim> {
  const res = await db.execute<Record<string, unknown>>(sql`
    WITH c AS (${claimStatement(id, token, now, leaseMs)})
    SELECT c.id AS sy_ob_id, c.payment_id AS sy_ob_payment, c.kind AS sy_ob_kind, c.payload AS sy_ob_payload, c.attempts AS sy_ob_attempts,
           CASE WHEN c.payload->>'providerKey' IS NULL THEN NULL ELSE
             (SELECT min(k.run_at) FROM outbox k WHERE k.payment_id = c.payment_id AND k.kind = c.kind AND k.payload->>'providerKey' = c.payload->>'providerKey') END AS sy_ob_key_first,
           agg.*
      FROM c ${aggregateLateral(sql`c.payment_id`)}`);
  const row = res.rows[0];
  if (row === undefined) return whyNotClaimed(db, id);
  const claimed: ClaimedRow = {
    id: Number(row['sy_ob_id']), paymentId: row['sy_ob_payment'] as string | null, kind: row['sy_ob_kind'] as string, payload: row['sy_ob_payload'], attempts: Number(row['sy_ob_attempts']),
  };
  const keyFirst = row['sy_ob_key_first'];
  return { ok: true, row: claimed, loaded: aggregateFromJoinedRow(row), keyFirstDueAt: keyFirst == null ? null : new Date(keyFirst as string | Date) };
}

/** Who holds the row now and how often it was claimed, as seen by a transaction applying an answer. */
export interface ClaimAsApplied {
  readonly token: string | null;
  readonly executions: number;
}

/**
 * Reads the row's claim inside the transaction that applies an answer, and locks it: a claim by
 * another execution waits until this answer is committed (the row is then done, and it skips), so
 * what the answer is judged against cannot change before it is applied.
 */
export async function claimAsApplied(tx: DbOrTx, id: number): Promise<ClaimAsApplied | null> {
  const res = await tx.execute<{ claimed_by: string | null; attempts: number }>(sql`SELECT claimed_by, attempts FROM outbox WHERE id = ${id} FOR UPDATE`);
  const row = res.rows[0];
  return row === undefined ? null : { token: row.claimed_by, executions: Number(row.attempts) };
}

export async function markOutboxDone(tx: DbOrTx, id: number, now: Date, note: string | null = null): Promise<void> {
  await tx.execute(outboxDoneStatement(id, now, note));
}

/** The statement markOutboxDone runs, to compose with another write into one statement. */
export function outboxDoneStatement(id: number, now: Date, note: string | null = null): SQL {
  return sql`UPDATE outbox SET status = 'done', done_at = ${now}, claimed_until = NULL, last_error = ${note} WHERE id = ${id}`;
}

/** Extends this execution's lease, if it still holds the claim; false when another execution took it (or the row is done). */
export async function renewOutboxClaim(db: Db, id: number, token: string, now: Date, leaseMs: number): Promise<boolean> {
  const res = await db.execute(sql`UPDATE outbox SET claimed_until = ${new Date(now.getTime() + leaseMs)} WHERE id = ${id} AND claimed_by = ${token} AND status = 'pending' RETURNING id`);
  return res.rows.length === 1;
}

/**
 * Renews the lease every third of it while the execution runs, so the lease can be short: a killed
 * worker's row is free again within one lease, while a live one keeps it however long its provider
 * call takes. A stalled process cannot renew, and loses the claim to a twin; its answer is then
 * judged against the row as it is (judgeAnswerAgainstClaim). Returns the stop function.
 */
export function keepClaim(db: Db, id: number, token: string, now: () => Date, leaseMs: number): () => void {
  let stopped = false;
  const timer = setInterval(() => {
    if (stopped) return;
    renewOutboxClaim(db, id, token, now(), leaseMs)
      .then((held) => {
        if (!held) stop();
      })
      .catch(() => undefined); // a lost connection: the next tick tries again, the lease covers the gap
  }, Math.max(50, Math.floor(leaseMs / 3)));
  timer.unref();
  const stop = (): void => {
    stopped = true;
    clearInterval(timer);
  };
  return stop;
}

/** Gives the row back after an infrastructure failure, so the next try need not wait for the lease. */
export async function releaseOutboxRow(db: Db, id: number, token: string, error: string): Promise<void> {
  await db.execute(sql`UPDATE outbox SET claimed_until = NULL, last_error = ${error.slice(0, 500)} WHERE id = ${id} AND claimed_by = ${token} AND status = 'pending'`);
}

/** Takes the relay's stamp back from an unclaimed pending row, so its next sweep publishes it again. */
export async function unpublishOutboxRow(db: Db, id: number): Promise<void> {
  await db.execute(sql`UPDATE outbox SET published_at = NULL WHERE id = ${id} AND status = 'pending'`);
}

/**
 * The committing process takes rows it will run itself from the relay: due now, pending, not yet
 * published, of the given kinds, stamped as published (`published_at`) so the relay leaves them;
 * at most `limit`. A process that dies before its claim leaves them stamped: the relay's sweep
 * publishes them again after its republish interval, as it does for a relay killed mid-publish.
 */
export async function takeForLocalRun(db: Db, ids: readonly number[], kinds: readonly string[], now: Date, limit: number): Promise<{ id: number; kind: string; connector: string | null }[]> {
  if (ids.length === 0 || limit <= 0) return [];
  const res = await db.execute<{ id: string; kind: string; connector: string | null }>(sql`
    UPDATE outbox SET published_at = ${now}
     WHERE id IN (SELECT id FROM outbox
                   WHERE id = ANY(${`{${ids.join(',')}}`}::bigint[]) AND status = 'pending' AND published_at IS NULL AND run_at <= ${now}
                     AND kind = ANY(${`{${kinds.join(',')}}`}::text[])
                   ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
     RETURNING id, kind, connector`);
  return res.rows.map((r) => ({ id: Number(r.id), kind: r.kind, connector: r.connector }));
}

/** Hands a row taken for a local run back to the relay (no budget slot for it now). */
export async function returnToRelay(db: Db, ids: readonly number[], stamp: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.execute(sql`UPDATE outbox SET published_at = NULL WHERE id = ANY(${`{${ids.join(',')}}`}::bigint[]) AND published_at = ${stamp} AND status = 'pending'`);
}

/** A job that exhausted its infrastructure retries: visible, counted and replayable. */
export async function markOutboxDead(db: Db, id: number, error: string): Promise<void> {
  await db.execute(sql`UPDATE outbox SET status = 'dead', claimed_until = NULL, last_error = ${error.slice(0, 500)} WHERE id = ${id} AND status = 'pending'`);
}

/**
 * Replay of a dead row goes through the same path as any row: the relay publishes it, the worker
 * checks it. Its execution count stays: a refusal after a replay is no proof the earlier tries never sent.
 */
/** Back to pending; `alsoInTransaction` writes more in the same transaction when the row was revived (the operator's audit row). */
export async function reviveOutboxRow(db: Db, id: number, alsoInTransaction?: (tx: DbOrTx) => Promise<void>): Promise<boolean> {
  return db.transaction(async (tx) => {
    const res = await tx.execute(sql`UPDATE outbox SET status = 'pending', published_at = NULL, claimed_until = NULL WHERE id = ${id} AND status = 'dead' RETURNING id`);
    if (res.rows.length !== 1) return false;
    await alsoInTransaction?.(tx);
    return true;
  });
}

export async function loadPaymentMethod(db: DbOrTx, paymentId: string): Promise<unknown> {
  const res = await db.execute<{ payment_method: unknown }>(sql`SELECT payment_method FROM payments WHERE id = ${paymentId}`);
  return res.rows[0]?.payment_method ?? null;
}
