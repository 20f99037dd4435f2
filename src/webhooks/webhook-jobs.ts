// Webhook work runs from outbox rows like every other job: the relay publishes them, a worker
// claims each row, and a crash leaves it pending for the sweep. A retry later is a new row with a
// later run_at (a fresh job id), never a reschedule of the job that is running.

import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../store/db.ts';
import type { RelayRow } from '../jobs/relay.ts';

export const INBOUND_QUEUE = 'webhooks.inbound';
export const MERCHANT_EVENT_QUEUE = 'webhooks.events';
export const DELIVERY_QUEUE = 'webhooks.deliveries';

/** Outbox kinds the webhook workers consume ('merchant_event' rows are written by transition()). */
export const WEBHOOK_OUTBOX_KINDS = ['inbound_event', 'merchant_event', 'event_delivery'] as const;
export type WebhookOutboxKind = (typeof WEBHOOK_OUTBOX_KINDS)[number];
/**
 * The ones the relay publishes to BullMQ. 'event_delivery' rows are taken from PostgreSQL by the
 * delivery dispatcher (fleet-wide endpoint limits, fairness); DELIVERY_QUEUE only names them in
 * metrics and holds jobs published before that change, which nothing consumes.
 */
export const RELAYED_WEBHOOK_KINDS = ['inbound_event', 'merchant_event'] as const;

export function webhookQueueFor(kind: RelayRow['kind']): string | null {
  switch (kind) {
    case 'inbound_event':
      return INBOUND_QUEUE;
    case 'merchant_event':
      return MERCHANT_EVENT_QUEUE;
    case 'event_delivery':
      return DELIVERY_QUEUE;
    default:
      return null;
  }
}

export interface InboundJob {
  readonly inboundEventId: number;
}

export interface DeliveryJob {
  readonly deliveryId: string;
  /** The delivery's attempt count when this job was made: a job whose count has moved on is stale. */
  readonly seq: number;
}

export async function enqueueWebhookJob(
  tx: DbOrTx,
  kind: 'inbound_event' | 'event_delivery',
  payload: InboundJob | DeliveryJob,
  runAt: Date,
  paymentId: string | null = null,
): Promise<number> {
  const res = await tx.execute<{ id: string }>(sql`
    INSERT INTO outbox (payment_id, kind, payload, run_at) VALUES (${paymentId}, ${kind}, ${JSON.stringify(payload)}::jsonb, ${runAt})
    RETURNING id`);
  return Number(res.rows[0]!.id);
}
