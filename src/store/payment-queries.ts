// Read side of payments, always tenant-scoped where a merchant asks: another merchant's payment
// is simply not found. Writes go through transition.ts only.

import { and, asc, desc, eq, lt } from 'drizzle-orm';
import type { Attempt, Payment } from '../core/payment.ts';
import { historyCopy } from '../core/secret-mask.ts';
import type { PaymentState } from '../core/states.ts';
import type { DbOrTx } from './db.ts';
import { inSnapshot, loadAggregate, withChildren } from './payment-load.ts';
import { attemptFromRow } from './payment-rows.ts';
import { paymentAttempts, paymentTransitions, payments } from './schema.ts';
import type { TransitionOrigin } from './transition.ts';

/** `livemode`: the key's scope (true: live payments only, false: test only; null or absent: both). */
export function loadPayment(db: DbOrTx, merchantId: string, id: string, livemode: boolean | null = null): Promise<Payment | null> {
  return loadAggregate(db, id, { merchantId, ...(livemode === null ? {} : { livemode }) });
}

export interface ListPaymentsQuery {
  readonly reference?: string;
  readonly status?: PaymentState;
  /** Only live (true) or only test (false) payments: the key's mode. */
  readonly livemode?: boolean;
  readonly limit: number;
  /** Cursor: the last id of the previous page; ids sort by creation time. */
  readonly startingAfter?: string;
}

export interface PaymentPage {
  readonly data: readonly Payment[];
  readonly hasMore: boolean;
}

/** Newest first. */
export async function listPayments(db: DbOrTx, merchantId: string, q: ListPaymentsQuery): Promise<PaymentPage> {
  if (!Number.isSafeInteger(q.limit) || q.limit < 1 || q.limit > 1000) throw new RangeError(`limit ${q.limit} must be 1..1000`);
  const where = and(
    eq(payments.merchantId, merchantId),
    q.reference === undefined ? undefined : eq(payments.reference, q.reference),
    q.status === undefined ? undefined : eq(payments.state, q.status),
    q.livemode === undefined ? undefined : eq(payments.livemode, q.livemode),
    q.startingAfter === undefined ? undefined : lt(payments.id, q.startingAfter),
  );
  return inSnapshot(db, async (tx) => {
    const rows = await tx.select().from(payments).where(where).orderBy(desc(payments.id)).limit(q.limit + 1);
    const page = rows.slice(0, q.limit);
    return { data: await withChildren(tx, page), hasMore: rows.length > q.limit };
  });
}

export interface TimelineEntry {
  readonly id: number;
  readonly from: PaymentState;
  readonly to: PaymentState;
  readonly input: unknown;
  readonly origin: TransitionOrigin;
  readonly attemptId: string | null;
  readonly rawProvider: unknown;
  readonly outcome: 'applied' | 'ignored';
  readonly code: string | null;
  readonly reason: string;
  readonly version: number;
  readonly at: string;
}

/** Every input the payment received, applied or ignored, oldest first; null when not this merchant's payment (or not of the key's mode). */
export async function loadTimeline(db: DbOrTx, merchantId: string, id: string, livemode: boolean | null = null): Promise<TimelineEntry[] | null> {
  const owner = await db.select({ id: payments.id }).from(payments)
    .where(and(eq(payments.id, id), eq(payments.merchantId, merchantId), livemode === null ? undefined : eq(payments.livemode, livemode)));
  if (owner.length === 0) return null;
  const rows = await db.select().from(paymentTransitions).where(eq(paymentTransitions.paymentId, id)).orderBy(asc(paymentTransitions.id));
  return rows.map((r) => ({
    id: r.id,
    from: r.fromState as PaymentState,
    to: r.toState as PaymentState,
    // Rows written before issue 42 may hold a provider page's query: served as history is now written.
    input: historyCopy(r.input),
    origin: r.origin as TransitionOrigin,
    attemptId: r.attemptId,
    rawProvider: historyCopy(r.rawProvider),
    outcome: r.outcome as 'applied' | 'ignored',
    code: r.code,
    reason: r.reason,
    version: r.version,
    at: r.at.toISOString(),
  }));
}

/** Webhooks and reports name the provider's reference; this finds our attempt (and its payment). */
export async function findAttemptByProviderRef(
  db: DbOrTx,
  connector: string,
  providerRef: string,
): Promise<{ paymentId: string; attempt: Attempt } | null> {
  const rows = await db
    .select()
    .from(paymentAttempts)
    .where(and(eq(paymentAttempts.connector, connector), eq(paymentAttempts.providerRef, providerRef)))
    .orderBy(desc(paymentAttempts.createdAt))
    .limit(1);
  const row = rows[0];
  return row === undefined ? null : { paymentId: row.paymentId, attempt: attemptFromRow(row) };
}

