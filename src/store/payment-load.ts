// Loads payment aggregates (the row with its attempts, captures and refunds), one or many.

import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Payment } from '../core/payment.ts';
import type { DbOrTx } from './db.ts';
import { paymentFromRows } from './payment-rows.ts';
import type { AttemptRow, CaptureRow, PaymentRow, RefundRow } from './payment-rows.ts';
import { captures, paymentAttempts, payments, refunds } from './schema.ts';

export interface LoadOptions {
  /** Tenant scope: a payment of another merchant is not found. */
  readonly merchantId?: string;
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

export async function loadAggregate(db: DbOrTx, paymentId: string, options: LoadOptions = {}): Promise<Payment | null> {
  return inSnapshot(db, (snapshot) => loadAggregateIn(snapshot, paymentId, options));
}

async function loadAggregateIn(db: DbOrTx, paymentId: string, options: LoadOptions): Promise<Payment | null> {
  const where = options.merchantId === undefined ? eq(payments.id, paymentId) : and(eq(payments.id, paymentId), eq(payments.merchantId, options.merchantId));
  const query = db.select().from(payments).where(where);
  const rows = options.forUpdate === true ? await query.for('update') : await query;
  const [payment] = await withChildren(db, rows);
  return payment ?? null;
}
