// Read side of payments, always tenant-scoped where a merchant asks: another merchant's payment
// is simply not found. Writes go through transition.ts only.

import { and, asc, desc, eq, gte, inArray, lte } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { Attempt, Payment } from '../core/payment.ts';
import { historyCopy } from '../core/secret-mask.ts';
import type { PaymentState } from '../core/states.ts';
import type { DbOrTx } from './db.ts';
import { createdWithin, keysetPage } from './keyset-page.ts';
import type { CreatedRange, Page, PageRequest } from './keyset-page.ts';
import { inSnapshot, loadAggregate, withChildren } from './payment-load.ts';
import { attemptFromRow } from './payment-rows.ts';
import { paymentAttempts, paymentTransitions, payments } from './schema.ts';
import type { TransitionOrigin } from './transition.ts';

/** `livemode`: the key's scope (true: live payments only, false: test only; null or absent: both). */
export function loadPayment(db: DbOrTx, merchantId: string, id: string, livemode: boolean | null = null): Promise<Payment | null> {
  return loadAggregate(db, id, { merchantId, ...(livemode === null ? {} : { livemode }) });
}

export interface PaymentFilters {
  /** Any of these states. */
  readonly status?: readonly PaymentState[];
  readonly created?: CreatedRange;
  /** The connector the resource shows (payments.connector). */
  readonly connector?: string;
  readonly currency?: string;
  readonly amount?: { readonly gte?: number; readonly lte?: number };
  readonly reference?: string;
}

/** What a filter becomes in SQL: each is a condition on an indexed column of payments (migrations/0023). */
function paymentConditions(f: PaymentFilters): SQL | undefined {
  return and(
    f.status === undefined ? undefined : f.status.length === 1 ? eq(payments.state, f.status[0]!) : inArray(payments.state, [...f.status]),
    createdWithin(payments.createdAt, f.created),
    f.connector === undefined ? undefined : eq(payments.connector, f.connector),
    f.currency === undefined ? undefined : eq(payments.currency, f.currency),
    f.amount?.gte === undefined ? undefined : gte(payments.amount, f.amount.gte),
    f.amount?.lte === undefined ? undefined : lte(payments.amount, f.amount.lte),
    f.reference === undefined ? undefined : eq(payments.reference, f.reference),
  );
}

const PAYMENT_KEYSET = { table: payments, id: payments.id, createdAt: payments.createdAt, merchantId: payments.merchantId };

/** A page of the merchant's payments of the key's mode (`livemode`; null: both), newest first (UnknownCursorError when the cursor is not one of them). */
export async function listPayments(db: DbOrTx, merchantId: string, livemode: boolean | null, filters: PaymentFilters, page: PageRequest): Promise<Page<Payment>> {
  return inSnapshot(db, async (tx) => {
    const found = await keysetPage(tx, PAYMENT_KEYSET, merchantId, paymentConditions(filters), page, (where, orderBy, limit) =>
      tx.select().from(payments).where(where).orderBy(...orderBy).limit(limit), livemode === null ? undefined : eq(payments.livemode, livemode));
    return { data: await withChildren(tx, found.data), hasMore: found.hasMore };
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

