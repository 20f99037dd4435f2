// One 'merchant_event' outbox row -> one merchant_events row and one delivery per endpoint of that
// merchant subscribed to the type, each with its delivery job — all in one transaction with the
// outbox row marked done. merchant_events.source_outbox_id is unique, so a second run (a lease
// that expired under a slow worker) inserts nothing.

import { and, eq, sql } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { claimOutboxRow, markOutboxDone, releaseOutboxRow } from '../../jobs/outbox-claims.ts';
import { eventDeliveries, merchantEvents, webhookEndpoints } from '../../store/schema.ts';
import { enqueueWebhookJob } from '../webhook-jobs.ts';
import type { WebhookServices } from '../webhook-services.ts';
import { merchantEventBody } from './event-body.ts';
import type { MerchantEventRowPayload } from './event-body.ts';
import { ALL_EVENTS } from './endpoint-store.ts';

export type FanoutResult = { readonly kind: 'skipped'; readonly reason: string } | { readonly kind: 'created'; readonly eventId: string; readonly deliveries: number };

export async function fanOutMerchantEvent(s: WebhookServices, outboxId: number, claimant: string): Promise<FanoutResult> {
  const claim = await claimOutboxRow(s.db, outboxId, claimant, s.now(), 60_000);
  if (!claim.ok) return { kind: 'skipped', reason: claim.reason };
  try {
    const row = claim.row.payload as MerchantEventRowPayload;
    const now = s.now();
    const result = await s.db.transaction(async (tx): Promise<FanoutResult> => {
      const id = newId('event', now.getTime());
      const body = merchantEventBody(id, now, row);
      const inserted = await tx
        .insert(merchantEvents)
        .values({ id, merchantId: row.payment.merchantId, paymentId: row.payment.id, type: row.event, payload: body, createdAt: now, sourceOutboxId: outboxId })
        .onConflictDoNothing({ target: merchantEvents.sourceOutboxId })
        .returning({ id: merchantEvents.id });
      if (inserted.length === 0) {
        await markOutboxDone(tx, outboxId, now, 'skipped: event already created');
        return { kind: 'skipped', reason: 'event already created' };
      }
      const endpoints = await tx
        .select({ id: webhookEndpoints.id })
        .from(webhookEndpoints)
        .where(and(
          eq(webhookEndpoints.merchantId, row.payment.merchantId),
          eq(webhookEndpoints.status, 'enabled'),
          sql`(${webhookEndpoints.enabledEvents} && ARRAY[${ALL_EVENTS}, ${row.event}]::text[])`,
        ));
      for (const ep of endpoints) {
        const deliveryId = newId('delivery', now.getTime());
        await tx.insert(eventDeliveries).values({ id: deliveryId, merchantId: row.payment.merchantId, eventId: id, endpointId: ep.id, status: 'pending', nextAttemptAt: now, createdAt: now });
        await enqueueWebhookJob(tx, 'event_delivery', { deliveryId, seq: 0 }, now, row.payment.id);
      }
      await markOutboxDone(tx, outboxId, now);
      return { kind: 'created', eventId: id, deliveries: endpoints.length };
    });
    if (result.kind === 'created' && result.deliveries > 0) s.kick();
    return result;
  } catch (err) {
    await releaseOutboxRow(s.db, outboxId, claimant, (err as Error).message).catch(() => undefined);
    throw err;
  }
}
