// Merchant webhook endpoints and the event/delivery read side, always scoped to one merchant:
// another merchant's endpoint or event is simply not found. A deleted endpoint is disabled, not
// removed, because its past deliveries still point at it.

import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import type { MerchantEventType } from '../../core/effects.ts';
import type { Db, DbOrTx } from '../../store/db.ts';
import { eventDeliveries, eventDeliveryAttempts, merchantEvents, payments, webhookEndpoints } from '../../store/schema.ts';
import { enqueueWebhookJob } from '../webhook-jobs.ts';
import { endpointKid, signingVersionAt } from './endpoint-keys.ts';
import { KEY_ANNOUNCE_MS } from './delivery-signature.ts';

import { ALL_EVENTS } from '../../resources/event-body.ts';

export { ALL_EVENTS };

export interface EndpointView {
  readonly id: string;
  readonly object: 'webhook_endpoint';
  readonly url: string;
  readonly events: readonly string[];
  readonly status: string;
  /** Kept beside created_at, the shape every resource has (issue 48): answers of the first API version had only `created`. */
  readonly created: string;
  readonly created_at: string;
  readonly signing: {
    /** Path of this endpoint's public keys; pin it (the API answers `jwks_url` with this gateway's origin). */
    readonly jwks_path: string;
    /** The kid that signs now. */
    readonly kid: string;
    /** After a rotation: the next kid, already published, and when it starts signing (KEY_ANNOUNCE_MS later). */
    readonly next_kid?: string;
    readonly next_kid_signs_at?: string;
    /** True for endpoints from before per-endpoint keys: the global key signs Switchyard-Signature until the first rotation. */
    readonly global_signature: boolean;
  };
}

export function endpointJwksPath(endpointId: string): string {
  return `/.well-known/webhook-endpoints/${encodeURIComponent(endpointId)}/jwks.json`;
}

type EndpointRow = typeof webhookEndpoints.$inferSelect;

function endpointView(r: EndpointRow, now: Date): EndpointView {
  const signing = signingVersionAt(r.signingVersion, r.signingRotatedAt, now);
  const next = signing === r.signingVersion || r.signingRotatedAt === null ? {} : { next_kid: endpointKid(r.id, r.signingVersion), next_kid_signs_at: new Date(r.signingRotatedAt.getTime() + KEY_ANNOUNCE_MS).toISOString() };
  return {
    id: r.id, object: 'webhook_endpoint', url: r.url, events: r.enabledEvents.includes(ALL_EVENTS) ? [ALL_EVENTS] : r.enabledEvents, status: r.status,
    created: r.createdAt.toISOString(), created_at: r.createdAt.toISOString(),
    signing: { jwks_path: endpointJwksPath(r.id), kid: endpointKid(r.id, signing), ...next, global_signature: r.globalSignature },
  };
}

/** The merchant already has `limit` enabled endpoints: nothing was created. */
export class EndpointLimitError extends Error {
  override readonly name = 'EndpointLimitError';
  constructor(readonly limit: number) {
    super(`this merchant already has ${limit} enabled webhook endpoints, the most allowed; delete one (DELETE /v1/webhook_endpoints/{id}) before creating another`);
  }
}

/**
 * Creates an enabled endpoint, unless the merchant already has `limit` of them (EndpointLimitError;
 * nothing written). The merchant's row is locked first, so concurrent creations count one another.
 */
export async function createEndpoint(db: DbOrTx, merchantId: string, url: string, events: readonly MerchantEventType[] | undefined, now: Date, limit = Number.POSITIVE_INFINITY): Promise<EndpointView> {
  const enabled = events === undefined || events.length === 0 ? [ALL_EVENTS] : [...new Set(events)];
  return db.transaction(async (tx) => {
    if (Number.isFinite(limit)) {
      await tx.execute(sql`SELECT id FROM merchants WHERE id = ${merchantId} FOR UPDATE`);
      const [count] = await tx.select({ n: sql<number>`count(*)::int` }).from(webhookEndpoints)
        .where(and(eq(webhookEndpoints.merchantId, merchantId), eq(webhookEndpoints.status, 'enabled')));
      if ((count?.n ?? 0) >= limit) throw new EndpointLimitError(limit);
    }
    const [row] = await tx.insert(webhookEndpoints).values({ id: newId('endpoint', now.getTime()), merchantId, url, enabledEvents: enabled, status: 'enabled', createdAt: now }).returning();
    return endpointView(row!, now);
  });
}

export async function listEndpoints(db: DbOrTx, merchantId: string, now: Date = new Date()): Promise<EndpointView[]> {
  const rows = await db.select().from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.merchantId, merchantId), eq(webhookEndpoints.status, 'enabled')))
    .orderBy(desc(webhookEndpoints.id));
  return rows.map((r) => endpointView(r, now));
}

/**
 * A new signing key for the endpoint (the next version): published at once, signing only after
 * KEY_ANNOUNCE_MS (the previous one signs meanwhile); the previous one stays published for
 * RETIRED_KEY_GRACE_MS after that, so deliveries signed just before still verify. Ends the global
 * signature of an endpoint from before per-endpoint keys. A rotation while the previous one is
 * still announced is refused (RotationPendingError): the key that would be skipped never signed.
 * Null when not found (or not the merchant's).
 */
export async function rotateEndpointKey(db: DbOrTx, merchantId: string, id: string, now: Date): Promise<EndpointView | null> {
  const announcedSince = new Date(now.getTime() - KEY_ANNOUNCE_MS);
  const rows = await db.update(webhookEndpoints)
    .set({ signingVersion: sql`${webhookEndpoints.signingVersion} + 1`, signingRotatedAt: now, globalSignature: false })
    .where(and(
      eq(webhookEndpoints.id, id), eq(webhookEndpoints.merchantId, merchantId), eq(webhookEndpoints.status, 'enabled'),
      sql`(${webhookEndpoints.signingRotatedAt} IS NULL OR ${webhookEndpoints.signingRotatedAt} <= ${announcedSince})`,
    ))
    .returning();
  if (rows[0] !== undefined) return endpointView(rows[0], now);
  const [pending] = await db.select().from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.merchantId, merchantId), eq(webhookEndpoints.status, 'enabled')));
  if (pending === undefined) return null;
  throw new RotationPendingError(endpointView(pending, now));
}

/** The previous rotation's key is still only announced: rotating again would skip it before it ever signed. */
export class RotationPendingError extends Error {
  override readonly name = 'RotationPendingError';
  constructor(readonly endpoint: EndpointView) {
    super(`the key ${endpoint.signing.next_kid ?? '?'} of the last rotation starts signing at ${endpoint.signing.next_kid_signs_at ?? '?'}; rotate again after that`);
  }
}

/**
 * The versions whose public keys an endpoint's JWKS publishes now: the current (announced or
 * signing) one, and the one before while it signs (the announcement) and for the grace after.
 */
export async function publishedEndpointVersions(db: DbOrTx, id: string, now: Date, graceMs: number): Promise<number[] | null> {
  const [row] = await db.select({ v: webhookEndpoints.signingVersion, at: webhookEndpoints.signingRotatedAt }).from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  if (row === undefined) return null;
  const recent = row.at !== null && now.getTime() - row.at.getTime() < KEY_ANNOUNCE_MS + graceMs && row.v > 1;
  return recent ? [row.v, row.v - 1] : [row.v];
}

/**
 * Disables the endpoint and, in the same transaction, ends its pending deliveries (`failed`,
 * "endpoint deleted") with their outbox rows: workers only take deliveries of enabled endpoints,
 * so nothing else would. An attempt already in flight finishes and records nothing. False when not found.
 */
export async function deleteEndpoint(db: DbOrTx, merchantId: string, id: string, now: Date = new Date()): Promise<boolean> {
  return db.transaction(async (tx) => {
    const rows = await tx.update(webhookEndpoints).set({ status: 'disabled' })
      .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.merchantId, merchantId), eq(webhookEndpoints.status, 'enabled')))
      .returning({ id: webhookEndpoints.id });
    if (rows.length !== 1) return false;
    await tx.execute(sql`
      WITH dl AS (
        UPDATE event_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = 'endpoint deleted'
         WHERE endpoint_id = ${id} AND status = 'pending' RETURNING id
      )
      UPDATE outbox SET status = 'done', done_at = ${now}, claimed_until = NULL, last_error = 'skipped: endpoint deleted'
       WHERE kind = 'event_delivery' AND status = 'pending' AND payload->>'deliveryId' IN (SELECT id FROM dl)`);
    return true;
  });
}

export interface DeliveryView {
  readonly id: string;
  readonly endpoint_id: string;
  readonly status: string;
  readonly attempts: number;
  readonly next_attempt_at: string | null;
  readonly delivered_at: string | null;
  readonly last_status_code: number | null;
  readonly last_error: string | null;
  readonly attempt_log: readonly { attempt: number; at: string; status_code: number | null; error: string | null; duration_ms: number; kid: string }[];
}

export interface EventView {
  readonly id: string;
  readonly object: 'event';
  readonly type: string;
  readonly payment_id: string | null;
  readonly created: string;
  readonly created_at: string;
  readonly body: unknown;
  readonly deliveries: readonly DeliveryView[];
}

export async function loadEventView(db: DbOrTx, merchantId: string, eventId: string, livemode: boolean | null = null): Promise<EventView | null> {
  const [ev] = await db.select().from(merchantEvents).where(and(eq(merchantEvents.id, eventId), eq(merchantEvents.merchantId, merchantId)));
  if (ev === undefined || !(await eventInMode(db, ev.paymentId, livemode))) return null;
  const deliveries = await db.select().from(eventDeliveries).where(eq(eventDeliveries.eventId, eventId)).orderBy(asc(eventDeliveries.id));
  const ids = deliveries.map((d) => d.id);
  const attempts = ids.length === 0 ? [] : await db.select().from(eventDeliveryAttempts).where(inArray(eventDeliveryAttempts.deliveryId, ids)).orderBy(asc(eventDeliveryAttempts.id));
  return {
    id: ev.id, object: 'event', type: ev.type, payment_id: ev.paymentId, created: ev.createdAt.toISOString(), created_at: ev.createdAt.toISOString(), body: ev.payload,
    deliveries: deliveries.map((d) => ({
      id: d.id, endpoint_id: d.endpointId, status: d.status, attempts: d.attempts,
      next_attempt_at: d.nextAttemptAt?.toISOString() ?? null, delivered_at: d.deliveredAt?.toISOString() ?? null,
      last_status_code: d.lastStatusCode, last_error: d.lastError,
      attempt_log: attempts.filter((a) => a.deliveryId === d.id).map((a) => ({
        attempt: a.attempt, at: a.at.toISOString(), status_code: a.statusCode, error: a.error, duration_ms: a.durationMs, kid: a.kid,
      })),
    })),
  };
}

/**
 * Whether an event is of the key's mode (`livemode`; null: a legacy key sees both): its payment's
 * mode. A key of the other mode is answered as if the event did not exist.
 */
async function eventInMode(db: DbOrTx, paymentId: string | null, livemode: boolean | null): Promise<boolean> {
  if (livemode === null || paymentId === null) return true;
  const [p] = await db.select({ livemode: payments.livemode }).from(payments).where(eq(payments.id, paymentId));
  return p !== undefined && p.livemode === livemode;
}

/** Sends the event again now to each of its endpoints still enabled (or one of them); null when the event is not found (or not of the key's mode). */
/** `alsoInTransaction` writes more in the same transaction once deliveries were queued again (the operator's audit row). */
export async function redeliverEvent(
  db: Db, merchantId: string, eventId: string, now: Date, endpointId?: string, alsoInTransaction?: (tx: DbOrTx, deliveryIds: readonly string[]) => Promise<void>, livemode: boolean | null = null,
): Promise<string[] | null> {
  return db.transaction(async (tx) => {
    const [ev] = await tx.select({ id: merchantEvents.id, paymentId: merchantEvents.paymentId }).from(merchantEvents)
      .where(and(eq(merchantEvents.id, eventId), eq(merchantEvents.merchantId, merchantId)));
    if (ev === undefined || !(await eventInMode(tx, ev.paymentId, livemode))) return null;
    const rows = await tx.execute<{ id: string; attempts: number }>(sql`
      UPDATE event_deliveries d SET status = 'pending', next_attempt_at = ${now}
        FROM webhook_endpoints w
       WHERE d.event_id = ${eventId} AND w.id = d.endpoint_id AND w.status = 'enabled'
         AND (${endpointId ?? null}::text IS NULL OR d.endpoint_id = ${endpointId ?? null})
       RETURNING d.id, d.attempts`);
    for (const r of rows.rows) await enqueueWebhookJob(tx, 'event_delivery', { deliveryId: r.id, seq: r.attempts }, now, ev.paymentId);
    const ids = rows.rows.map((r) => r.id);
    if (ids.length > 0) await alsoInTransaction?.(tx, ids);
    return ids;
  });
}
