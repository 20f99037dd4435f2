// Loads payment aggregates (the row with its attempts, captures and refunds), one or many.

import { asc, getTableColumns, inArray, sql } from 'drizzle-orm';
import type { Column, SQL, Table } from 'drizzle-orm';
import type { Payment } from '../core/payment.ts';
import type { DbOrTx } from './db.ts';
import { paymentFromRows } from './payment-rows.ts';
import { preparedSql } from './prepared.ts';
import type { AttemptRow, CaptureRow, PaymentRow, RefundRow } from './payment-rows.ts';
import { captures, paymentAttempts, payments, refunds } from './schema.ts';

export interface LoadOptions {
  /** Tenant scope: a payment of another merchant is not found. */
  readonly merchantId?: string;
  /** Mode scope (a test or live key): a payment of the other mode is not found. */
  readonly livemode?: boolean;
  /** Lock the payment row until the transaction ends (SELECT ... FOR UPDATE). */
  readonly forUpdate?: boolean;
}

function groupBy<T extends { paymentId: string }>(rows: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const list = out.get(r.paymentId);
    if (list === undefined) out.set(r.paymentId, [r]);
    else list.push(r);
  }
  return out;
}

/** Assembles aggregates for payment rows, keeping their order. */
export async function withChildren(db: DbOrTx, rows: readonly PaymentRow[]): Promise<Payment[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  // Sequential: inside a transaction all three share one connection anyway.
  const a = await db.select().from(paymentAttempts).where(inArray(paymentAttempts.paymentId, ids)).orderBy(asc(paymentAttempts.no));
  const c = await db.select().from(captures).where(inArray(captures.paymentId, ids)).orderBy(asc(captures.no));
  const r = await db.select().from(refunds).where(inArray(refunds.paymentId, ids)).orderBy(asc(refunds.no));
  const [byA, byC, byR] = [groupBy<AttemptRow>(a), groupBy<CaptureRow>(c), groupBy<RefundRow>(r)];
  return rows.map((p) => paymentFromRows(p, byA.get(p.id) ?? [], byC.get(p.id) ?? [], byR.get(p.id) ?? []));
}

/**
 * Runs reads in one snapshot. The payment row and its children are separate statements; under
 * READ COMMITTED a commit between them would mix two versions (a refund already succeeded on a
 * payment whose amount_refunded is still the old one). Inside a caller's transaction, that
 * transaction decides.
 */
export async function inSnapshot<T>(db: DbOrTx, read: (tx: DbOrTx) => Promise<T>): Promise<T> {
  if ('rollback' in db) return read(db);
  return db.transaction((tx) => read(tx), { isolationLevel: 'repeatable read', accessMode: 'read only' });
}

/**
 * One payment with its children in ONE statement: a single statement reads one snapshot, so the
 * row and its attempts, captures and refunds are always from the same version, without the
 * BEGIN/COMMIT of a repeatable-read transaction (one round trip instead of six).
 * With `forUpdate` (inside a transaction) the row is locked first, then read: a read after the
 * lock is granted sees the latest committed version, and nobody can change it until we commit.
 */
export async function loadAggregate(db: DbOrTx, paymentId: string, options: LoadOptions = {}): Promise<Payment | null> {
  return (await loadAggregateRow(db, paymentId, options))?.payment ?? null;
}

/** The aggregate plus the row's columns it does not carry (when this version was written, the payment method), from the same statement. */
export interface LoadedAggregate {
  readonly payment: Payment;
  readonly updatedAt: Date;
  readonly paymentMethod: unknown;
  /** The shopper's browser_info and shopper_ip (snake case, as the API took them), or null. */
  readonly shopper: unknown;
}

export async function loadAggregateRow(db: DbOrTx, paymentId: string, options: LoadOptions = {}): Promise<LoadedAggregate | null> {
  if (options.forUpdate === true) {
    const locked = await db.execute(sql`SELECT 1 FROM payments WHERE id = ${paymentId} FOR UPDATE`);
    if (locked.rows.length === 0) return null;
  }
  const res = options.merchantId === undefined
    ? await aggregateById(db, { id: paymentId })
    : await aggregateByIdForMerchant(db, { id: paymentId, merchantId: options.merchantId });
  const row = res.rows[0];
  const loaded = row === undefined ? null : aggregateFromRow(row);
  return loaded === null || (options.livemode !== undefined && loaded.payment.livemode !== options.livemode) ? null : loaded;
}

// ---- the one-statement aggregate read, generated from the drizzle schema ----

type Columns = Record<string, Column>;

/** Children as a JSON array; BIGINT as text, so an amount beyond 2^53 is refused (safeBigint), not rounded by JSON.parse. */
function childrenJson(table: Table, tableName: string, alias: string): SQL {
  const cols = getTableColumns(table) as Columns;
  const fields = Object.entries(cols).map(([key, col]) => `'${key}', ${alias}.${col.name}${col.getSQLType() === 'bigint' ? '::text' : ''}`);
  return sql.raw(`(SELECT coalesce(json_agg(json_build_object(${fields.join(', ')}) ORDER BY ${alias}.no), '[]') FROM ${tableName} ${alias} WHERE ${alias}.payment_id = p.id)`);
}

const PAYMENT_COLUMNS = getTableColumns(payments) as Columns;
const ATTEMPT_COLUMNS = getTableColumns(paymentAttempts) as Columns;
const CAPTURE_COLUMNS = getTableColumns(captures) as Columns;
const REFUND_COLUMNS = getTableColumns(refunds) as Columns;

const AGGREGATE_SELECT = sql.join([
  sql.raw(`SELECT ${Object.values(PAYMENT_COLUMNS).map((c) => `p.${c.name}`).join(', ')}, `),
  childrenJson(paymentAttempts, 'payment_attempts', 'a'), sql.raw(' AS sy_attempts, '),
  childrenJson(captures, 'captures', 'c'), sql.raw(' AS sy_captures, '),
  childrenJson(refunds, 'refunds', 'r'), sql.raw(' AS sy_refunds FROM payments p'),
]);

// The hottest reads of a lifecycle (~9 per payment): prepared once, planned once per connection.
const aggregateById = preparedSql<Record<string, unknown>, { id: string }>('sy_aggregate_by_id', sql`${AGGREGATE_SELECT} WHERE p.id = ${sql.placeholder('id')}`);
const aggregateByIdForMerchant = preparedSql<Record<string, unknown>, { id: string; merchantId: string }>(
  'sy_aggregate_by_id_merchant', sql`${AGGREGATE_SELECT} WHERE p.id = ${sql.placeholder('id')} AND p.merchant_id = ${sql.placeholder('merchantId')}`,
);
const aggregateByAttempt = preparedSql<Record<string, unknown>, { attemptId: string }>(
  'sy_aggregate_by_attempt', sql`${AGGREGATE_SELECT} WHERE p.id = (SELECT payment_id FROM payment_attempts WHERE id = ${sql.placeholder('attemptId')})`,
);

/** The payment one of its attempts belongs to, in one statement (a provider webhook names our attempt). */
export async function loadAggregateByAttempt(db: DbOrTx, attemptId: string): Promise<Payment | null> {
  const res = await aggregateByAttempt(db, { attemptId });
  const row = res.rows[0];
  return row === undefined ? null : aggregateFromRow(row).payment;
}

/**
 * The aggregate of the payment `paymentIdExpr` names, as columns to add to another statement's
 * SELECT (`LEFT JOIN LATERAL (…) agg ON true`): the outbox claim reads the payment it works on in
 * the claiming statement. Decode the row with aggregateFromJoinedRow.
 */
export function aggregateLateral(paymentIdExpr: SQL): SQL {
  return sql`LEFT JOIN LATERAL (${AGGREGATE_SELECT} WHERE p.id = ${paymentIdExpr}) agg ON true`;
}

/** The aggregate in a row that joined aggregateLateral (null when the payment does not exist). */
export function aggregateFromJoinedRow(row: Record<string, unknown>): LoadedAggregate | null {
  return row['sy_attempts'] === null || row['sy_attempts'] === undefined ? null : aggregateFromRow(row);
}

/** Maps driver values (by column name, or by key inside the children's JSON) through the columns' own decoders. */
function decode<T>(cols: Columns, raw: Record<string, unknown>, by: 'name' | 'key'): T {
  const out: Record<string, unknown> = {};
  for (const [key, col] of Object.entries(cols)) {
    const v = raw[by === 'name' ? col.name : key];
    out[key] = v === null || v === undefined ? null : col.mapFromDriverValue(v);
  }
  return out as T;
}

function aggregateFromRow(row: Record<string, unknown>): LoadedAggregate {
  const list = <T>(cols: Columns, v: unknown): T[] => (v as Record<string, unknown>[]).map((x) => decode<T>(cols, x, 'key'));
  const p = decode<PaymentRow>(PAYMENT_COLUMNS, row, 'name');
  const payment = paymentFromRows(
    p,
    list<AttemptRow>(ATTEMPT_COLUMNS, row['sy_attempts']),
    list<CaptureRow>(CAPTURE_COLUMNS, row['sy_captures']),
    list<RefundRow>(REFUND_COLUMNS, row['sy_refunds']),
  );
  return { payment, updatedAt: p.updatedAt, paymentMethod: p.paymentMethod, shopper: p.shopper };
}
