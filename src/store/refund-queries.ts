// Refund lookups for the merchant API, tenant-scoped through the payment: another merchant's
// refund is not found.

import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from './db.ts';
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
