// Records one merchant event and its deliveries: the merchant_events row, a delivery row per
// enabled endpoint subscribed to the type, and each delivery's outbox row (its job). transition()
// writes these parts in the statement of the state change that causes the event, so the event
// exists exactly when the change does; the old path (a 'merchant_event' outbox row, a job, a
// worker that fanned out) took two commits and a queue hop to reach the same rows.

import { sql } from 'drizzle-orm';
import { idTimePrefix, newId } from '../core/ids.ts';
import type { DbOrTx } from './db.ts';
import { withClause } from './write-parts.ts';
import type { WritePart } from './write-parts.ts';
import { ALL_EVENTS, merchantEventBody } from '../resources/event-body.ts';
import { LATEST_API_VERSION } from '../resources/api-version.ts';
import type { MerchantEventRowPayload } from '../resources/event-body.ts';

export interface RecordedEvent {
  /** False when `sourceOutboxId` already produced its event (a second run of a legacy fan-out job). */
  readonly created: boolean;
  readonly eventId: string;
  readonly deliveries: number;
  /** The deliveries' outbox rows: the relay publishes them after COMMIT. */
  readonly outboxIds: readonly number[];
}

/**
 * The event's write parts, named `<prefix>_ev|_ep|_dl|_ob`: `_ev` returns the event id (nothing
 * when `sourceOutboxId` already made its event), `_ob` the deliveries' outbox ids.
 */
export function merchantEventParts(prefix: string, row: MerchantEventRowPayload, now: Date, sourceOutboxId: number | null = null): { eventId: string; parts: WritePart[] } {
  const eventId = newId('event', now.getTime());
  const body = merchantEventBody(eventId, now, row);
  const merchantId = row.payment.merchantId;
  const [ev, ep, dl] = [`${prefix}_ev`, `${prefix}_ep`, `${prefix}_dl`].map((n) => sql.identifier(n)) as [ReturnType<typeof sql.identifier>, ReturnType<typeof sql.identifier>, ReturnType<typeof sql.identifier>];
  return {
    eventId,
    parts: [
      {
        name: `${prefix}_ev`,
        body: sql`INSERT INTO merchant_events (id, merchant_id, payment_id, type, payload, created_at, source_outbox_id)
          VALUES (${eventId}, ${merchantId}, ${row.payment.id}, ${row.event},
            -- The merchant's pinned API version, read in this statement (no round trip of its own).
            ${JSON.stringify(body)}::jsonb || jsonb_build_object('api_version', COALESCE((SELECT api_version FROM merchants WHERE id = ${merchantId}), ${LATEST_API_VERSION}::text)),
            ${now}, ${sourceOutboxId})
          ON CONFLICT (source_outbox_id) DO NOTHING RETURNING id`,
      },
      {
        name: `${prefix}_ep`,
        body: sql`SELECT w.id FROM webhook_endpoints w JOIN ${ev} ON true
          WHERE w.merchant_id = ${merchantId} AND w.status = 'enabled' AND w.enabled_events && ARRAY[${ALL_EVENTS}, ${row.event}]::text[]`,
      },
      {
        name: `${prefix}_dl`,
        body: sql`INSERT INTO event_deliveries (id, merchant_id, event_id, endpoint_id, status, next_attempt_at, created_at)
          SELECT ${idTimePrefix('delivery', now.getTime())} || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16), ${merchantId}, ${eventId}, ${ep}.id, 'pending', ${now}, ${now}
            FROM ${ep} RETURNING id`,
      },
      {
        name: `${prefix}_ob`,
        body: sql`INSERT INTO outbox (payment_id, kind, payload, run_at)
          SELECT ${row.payment.id}, 'event_delivery', jsonb_build_object('deliveryId', ${dl}.id, 'seq', 0), ${now} FROM ${dl} RETURNING id`,
        outboxIds: true,
      },
    ],
  };
}

/** Records the event on its own (a legacy fan-out row, a dispute). */
export async function recordMerchantEvent(tx: DbOrTx, row: MerchantEventRowPayload, now: Date, sourceOutboxId: number | null = null): Promise<RecordedEvent> {
  const { eventId, parts } = merchantEventParts('me', row, now, sourceOutboxId);
  const r = await tx.execute<{ created: number; ids: string[] }>(
    sql`${withClause(parts)}SELECT (SELECT count(*) FROM me_ev)::int AS created, coalesce((SELECT array_agg(id ORDER BY id) FROM me_ob), '{}')::text[] AS ids`,
  );
  const outboxIds = r.rows[0]!.ids.map(Number);
  return { created: r.rows[0]!.created === 1, eventId, deliveries: outboxIds.length, outboxIds };
}
