// The payment aggregate carries created_at but not updated_at (step() has no use for it); the
// merchant API shows both, so it reads the column here.

import { inArray } from 'drizzle-orm';
import type { DbOrTx } from './db.ts';
import { payments } from './schema.ts';

export async function paymentUpdatedAt(db: DbOrTx, paymentIds: readonly string[]): Promise<Map<string, string>> {
  if (paymentIds.length === 0) return new Map();
  const rows = await db.select({ id: payments.id, updatedAt: payments.updatedAt }).from(payments).where(inArray(payments.id, [...paymentIds]));
  return new Map(rows.map((r) => [r.id, r.updatedAt.toISOString()]));
}
