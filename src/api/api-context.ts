// What the routes share: the runtime, the waits and the idempotency settings; and consistent reads.

import type { Runtime } from '../app/runtime.ts';
import type { Payment } from '../core/payment.ts';
import type { DbOrTx } from '../store/db.ts';
import { loadAggregateRow } from '../store/payment-load.ts';
import { paymentUpdatedAt } from '../store/payment-timestamps.ts';
import type { IdempotencySettings } from './idempotent-post.ts';
import type { PaymentResource } from './resource-schemas.ts';
import { paymentResource } from './serializers.ts';

export interface ApiContext {
  readonly rt: Runtime;
  /** How long POST /v1/payments waits for the authorization outcome before answering 202. */
  readonly authorizationWaitMs: number;
  /** How long capture, void and refund wait for the provider's confirmation before answering 202. */
  readonly modificationWaitMs: number;
  readonly idempotency: IdempotencySettings;
}

/**
 * Reads in one repeatable-read snapshot. The aggregate is loaded with several queries (the row,
 * then attempts, captures, refunds); outside a snapshot a transition committing in between shows
 * a capture succeeded on a payment row still `capturing`.
 */
export function inSnapshot<T>(ctx: ApiContext, read: (tx: DbOrTx) => Promise<T>): Promise<T> {
  return ctx.rt.database.db.transaction(read, { isolationLevel: 'repeatable read', accessMode: 'read only' });
}

export async function paymentResources(tx: DbOrTx, list: readonly Payment[]): Promise<PaymentResource[]> {
  const updated = await paymentUpdatedAt(tx, list.map((p) => p.id));
  return list.map((p) => paymentResource(p, updated.get(p.id) ?? p.createdAt));
}

/**
 * The payment and its resource from one snapshot (one statement), or null when it is not this
 * merchant's or not of the key's mode (`livemode`, src/api/http.ts livemodeScopeOf; null: either).
 */
export async function paymentSnapshot(ctx: ApiContext, merchantId: string, id: string, livemode: boolean | null): Promise<{ payment: Payment; resource: PaymentResource } | null> {
  const loaded = await loadAggregateRow(ctx.rt.database.db, id, { merchantId, ...(livemode === null ? {} : { livemode }) });
  if (loaded === null) return null;
  return { payment: loaded.payment, resource: paymentResource(loaded.payment, loaded.updatedAt.toISOString()) };
}
