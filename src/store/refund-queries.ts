// Refund lookups for the merchant API, tenant-scoped: another merchant's refund is not found, and
// a list holds only the merchant's own (refunds.merchant_id, its payment's by a foreign key).

import { and, eq, inArray, sql } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { Refund } from '../core/payment.ts';
import type { RefundState } from '../core/states.ts';
import type { DbOrTx } from './db.ts';
import { createdWithin, keysetPage } from './keyset-page.ts';
import type { CreatedRange, Page, PageRequest } from './keyset-page.ts';
import { inSnapshot } from './payment-load.ts';
import { refundFromRow } from './payment-rows.ts';
import { payments, refunds } from './schema.ts';

/** The payment a refund belongs to, or null when the refund is not this merchant's. */
export async function findRefundPaymentId(db: DbOrTx, merchantId: string, refundId: string): Promise<string | null> {
  const rows = await db
    .select({ paymentId: refunds.paymentId })
    .from(refunds)
    .innerJoin(payments, eq(payments.id, refunds.paymentId))
    .where(and(eq(refunds.id, refundId), eq(payments.merchantId, merchantId)));
  return rows[0]?.paymentId ?? null;
}

export interface RefundFilters {
  readonly payment?: string;
  /** Any of these states. */
  readonly status?: readonly RefundState[];
  readonly created?: CreatedRange;
}

/** A refund with what its resource needs of its payment. */
export interface ListedRefund {
  readonly refund: Refund;
  readonly payment: { readonly id: string; readonly currency: string; readonly livemode: boolean };
}

function refundConditions(f: RefundFilters): SQL | undefined {
  return and(
    f.payment === undefined ? undefined : eq(refunds.paymentId, f.payment),
    f.status === undefined ? undefined : f.status.length === 1 ? eq(refunds.status, f.status[0]!) : inArray(refunds.status, [...f.status]),
    createdWithin(refunds.createdAt, f.created),
  );
}

const REFUND_KEYSET = { table: refunds, id: refunds.id, createdAt: refunds.createdAt, merchantId: refunds.merchantId };

/** A page of the merchant's refunds of the key's mode (`livemode`; null: both), newest first (UnknownCursorError when the cursor is not one of them). */
export function listRefunds(db: DbOrTx, merchantId: string, livemode: boolean | null, filters: RefundFilters, page: PageRequest): Promise<Page<ListedRefund>> {
  // A refund is of its payment's mode (a payment's mode never changes).
  const mode = livemode === null ? undefined : sql`EXISTS (SELECT 1 FROM payments m WHERE m.id = ${refunds.paymentId} AND m.livemode = ${livemode})`;
  return inSnapshot(db, async (tx) => {
    const found = await keysetPage(tx, REFUND_KEYSET, merchantId, refundConditions(filters), page, (where, orderBy, limit) =>
      tx.select({ refund: refunds, currency: payments.currency, livemode: payments.livemode }).from(refunds).innerJoin(payments, eq(payments.id, refunds.paymentId))
        .where(where).orderBy(...orderBy).limit(limit), mode);
    return {
      data: found.data.map((r) => ({ refund: refundFromRow(r.refund), payment: { id: r.refund.paymentId, currency: r.currency, livemode: r.livemode } })),
      hasMore: found.hasMore,
    };
  });
}
