// Records one merchant event and its deliveries in ONE statement: the merchant_events row, a
// delivery row per enabled endpoint subscribed to the type, and each delivery's outbox row (its
// job). transition() calls it inside the transaction of the state change that causes the event,
// so the event exists exactly when the change does; the old path (a 'merchant_event' outbox row,
// a job, a worker that fanned out) took two commits and a queue hop to reach the same rows.

import { sql } from 'drizzle-orm';
import { idTimePrefix, newId } from '../../core/ids.ts';
import type { DbOrTx } from '../../store/db.ts';
import { merchantEventBody } from './event-body.ts';
import type { MerchantEventRowPayload } from './event-body.ts';
import { ALL_EVENTS } from './endpoint-store.ts';

export interface RecordedEvent {
  /** False when `sourceOutboxId` already produced its event (a second run of a legacy fan-out job). */
  readonly created: boolean;
  readonly eventId: string;
  readonly deliveries: number;
  /** The deliveries' outbox rows: the relay publishes them after COMMIT. */
  readonly outboxIds: readonly number[];
}

export async function recordMerchantEvent(tx: DbOrTx, row: MerchantEventRowPayload, now: Date, sourceOutboxId: number | null = null): Promise<RecordedEvent> {
  const eventId = newId('event', now.getTime());
  const body = merchantEventBody(eventId, now, row);
  const merchantId = row.payment.merchantId;
  const r = await tx.execute<{ created: number; outbox_ids: string[] }>(sql`
    WITH ev AS (
      INSERT INTO merchant_events (id, merchant_id, payment_id, type, payload, created_at, source_outbox_id)
      VALUES (${eventId}, ${merchantId}, ${row.payment.id}, ${row.event}, ${JSON.stringify(body)}::jsonb, ${now}, ${sourceOutboxId})
      ON CONFLICT (source_outbox_id) DO NOTHING
      RETURNING id
    ), ep AS (
      SELECT w.id FROM webhook_endpoints w JOIN ev ON true
       WHERE w.merchant_id = ${merchantId} AND w.status = 'enabled' AND w.enabled_events && ARRAY[${ALL_EVENTS}, ${row.event}]::text[]
    ), dl AS (
      INSERT INTO event_deliveries (id, merchant_id, event_id, endpoint_id, status, next_attempt_at, created_at)
      SELECT ${idTimePrefix('delivery', now.getTime())} || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16), ${merchantId}, ${eventId}, ep.id, 'pending', ${now}, ${now}
        FROM ep
      RETURNING id
    ), ob AS (
      INSERT INTO outbox (payment_id, kind, payload, run_at)
      SELECT ${row.payment.id}, 'event_delivery', jsonb_build_object('deliveryId', dl.id, 'seq', 0), ${now} FROM dl
      RETURNING id
    )
    SELECT (SELECT count(*) FROM ev)::int AS created, coalesce((SELECT array_agg(id ORDER BY id)::text[] FROM ob), '{}') AS outbox_ids`);
  const out = r.rows[0]!;
  const outboxIds = out.outbox_ids.map(Number);
  return { created: out.created === 1, eventId, deliveries: outboxIds.length, outboxIds };
}
