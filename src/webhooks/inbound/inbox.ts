// The inbox (inbound_events): verified events only, with the raw bytes and the normalized event,
// once per (account, provider event id). Rejected requests are unauthenticated and write nothing
// (intake-router.ts counts and logs them); 'unverified' rows are only those older versions wrote.

import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { AnnouncedReport, NormalizedEvent } from '../../connectors/contract.ts';
import type { Db, DbOrTx } from '../../store/db.ts';
import { inboundEvents } from '../../store/schema.ts';
import { claimStatement, outboxDoneStatement, whyNotClaimed } from '../../jobs/outbox-claims.ts';
import { enqueueWebhookJob } from '../webhook-jobs.ts';

export type InboundOutcome = 'pending' | 'applied' | 'ignored' | 'unverified' | 'failed';

/** Headers worth keeping: never the signature or Authorization (they are credentials). */
export function keptHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['content-type', 'user-agent']) {
    const v = headers[name];
    if (typeof v === 'string') out[name] = v.slice(0, 200);
  }
  return out;
}

export interface StoredEvents {
  readonly inserted: number;
  readonly duplicates: number;
  /** The processing jobs' outbox rows, for the relay to publish right after COMMIT. */
  readonly outboxIds: readonly number[];
}

/**
 * Each new event in the inbox plus its processing job, atomically; a known event id inserts
 * nothing. One event (the usual request) is ONE statement — the inbox row and its outbox row in
 * a CTE, atomic without BEGIN/COMMIT; a batch (Adyen sends several) runs those in one transaction.
 */
export async function storeVerifiedEvents(db: Db, account: string, rawBody: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>, events: readonly NormalizedEvent[], now: Date): Promise<StoredEvents> {
  const kept = JSON.stringify(keptHeaders(headers));
  const store = async (tx: DbOrTx): Promise<StoredEvents> => {
    let inserted = 0;
    const outboxIds: number[] = [];
    for (const e of events) {
      const stored = await storeOne(tx, account, rawBody, kept, e, now);
      if (stored === null) continue;
      inserted++;
      if (stored.outboxId !== null) outboxIds.push(stored.outboxId);
    }
    return { inserted, duplicates: events.length - inserted, outboxIds };
  };
  return events.length === 1 ? store(db) : db.transaction(store);
}

/** Null when the event was known; otherwise its processing job's outbox id (null for an event the gateway ignores). */
async function storeOne(tx: DbOrTx, account: string, rawBody: Buffer, headersJson: string, e: NormalizedEvent, now: Date): Promise<{ outboxId: number | null } | null> {
  const ignored = e.kind === 'ignored';
  const reason = ignored ? `${e.rawType}: not an event the gateway acts on` : null;
  // The job's payload is an InboundJob ({inboundEventId}), as enqueueWebhookJob writes it.
  const res = await tx.execute<{ inbound_id: string | null; outbox_id: string | null }>(sql`
    WITH ins AS (
      INSERT INTO inbound_events (connector, provider_event_id, raw_body, headers, verified, event, received_at, outcome, reason, processed_at)
      VALUES (${account}, ${e.providerEventId}, ${rawBody}, ${headersJson}::jsonb, true, ${JSON.stringify(e)}::jsonb, ${now},
              ${ignored ? 'ignored' : 'pending'}, ${reason}, ${ignored ? now : null})
      ON CONFLICT (connector, provider_event_id) DO NOTHING
      RETURNING id),
    job AS (
      INSERT INTO outbox (payment_id, kind, payload, run_at)
      SELECT NULL, 'inbound_event', jsonb_build_object('inboundEventId', ins.id), ${now}::timestamptz FROM ins WHERE NOT ${ignored}::boolean
      RETURNING id)
    SELECT (SELECT id FROM ins)::text AS inbound_id, (SELECT id FROM job)::text AS outbox_id`);
  const row = res.rows[0];
  if (row === undefined || row.inbound_id === null) return null;
  if (e.report !== undefined) await recordAnnouncedReport(tx, account, e.report, e.occurredAt);
  return { outboxId: row.outbox_id === null ? null : Number(row.outbox_id) };
}

/** An announced report, once per (account, file name): a redelivered or repeated announcement records nothing. */
// announced_at is the notification's eventDate (the provider's clock): the missing-report grace runs from it.
async function recordAnnouncedReport(tx: DbOrTx, account: string, r: AnnouncedReport, announcedAt: string): Promise<void> {
  await tx.execute(sql`
    INSERT INTO provider_reports (connector, file_name, kind, sequence, report_day, announced_at)
    VALUES (${account}, ${r.fileName}, ${r.kind}, ${r.sequence}, ${r.day}::date, ${announcedAt}::timestamptz)
    ON CONFLICT (connector, file_name) DO NOTHING`);
}

export interface InboundRow {
  readonly id: number;
  readonly connector: string;
  readonly outcome: InboundOutcome;
  readonly event: NormalizedEvent | null;
  readonly tries: number;
  /** When the event was first received (the intake's clock): bounds how long it may be held. */
  readonly receivedAt: Date;
}

export type ClaimedInbound = { readonly ok: true; readonly event: InboundRow | null } | { readonly ok: false; readonly reason: 'done' | 'claimed' | 'missing' };

/** Claims the inbound job's outbox row and, in the same statement, reads the event it names (null: the event is gone). */
export async function claimInboundJob(db: Db, outboxId: number, claimant: string, now: Date, leaseMs: number): Promise<ClaimedInbound> {
  const res = await db.execute<{ id: string | null; connector: string | null; outcome: string | null; event: NormalizedEvent | null; tries: number | null; received_at: string | Date | null }>(sql`
    WITH c AS (${claimStatement(outboxId, claimant, now, leaseMs)})
    SELECT e.id, e.connector, e.outcome, e.event, e.tries, e.received_at FROM c LEFT JOIN inbound_events e ON e.id = (c.payload->>'inboundEventId')::bigint`);
  const r = res.rows[0];
  if (r === undefined) return whyNotClaimed(db, outboxId);
  if (r.id === null) return { ok: true, event: null };
  return { ok: true, event: { id: Number(r.id), connector: r.connector!, outcome: r.outcome as InboundOutcome, event: r.event, tries: r.tries!, receivedAt: new Date(r.received_at!) } };
}

/**
 * Outcomes still open to processing: pending, and failed (the dead letter) — a failed event is
 * only processed again through a deliberate replay, since no job for it is left pending.
 */
export const PROCESSABLE: readonly InboundOutcome[] = ['pending', 'failed'];

/**
 * Settles an open event; a row already settled (a concurrent run) is left as it is. With
 * `jobOutboxId`, the same statement marks the processing job's outbox row done (one round trip,
 * atomic on its own).
 */
export async function settleInboundEvent(
  tx: DbOrTx, id: number, outcome: 'applied' | 'ignored' | 'failed', reason: string, paymentId: string | null, now: Date, jobOutboxId?: number,
): Promise<void> {
  const settle = tx
    .update(inboundEvents)
    .set({ outcome, reason: reason.slice(0, 1000), paymentId, processedAt: now })
    .where(and(eq(inboundEvents.id, id), inArray(inboundEvents.outcome, [...PROCESSABLE])));
  if (jobOutboxId === undefined) await settle;
  else await tx.execute(sql`WITH settled AS (${settle.getSQL()}) ${outboxDoneStatement(jobOutboxId, now)}`);
}

/** The payment is not known yet (or the event is held): count the try and process the event again later. */
export async function retryInboundLater(tx: DbOrTx, id: number, tries: number, reason: string, at: Date, paymentId?: string): Promise<void> {
  await tx.update(inboundEvents).set({ tries, reason, outcome: 'pending', ...(paymentId === undefined ? {} : { paymentId }) }).where(and(eq(inboundEvents.id, id), inArray(inboundEvents.outcome, [...PROCESSABLE])));
  await enqueueWebhookJob(tx, 'inbound_event', { inboundEventId: id }, at);
}

export interface DeadInboundEvent {
  readonly id: number;
  readonly connector: string;
  readonly providerEventId: string | null;
  readonly reason: string | null;
  readonly receivedAt: Date;
}

/** The dead letter: events whose processing gave up, newest first. */
export async function listFailedInboundEvents(db: DbOrTx, limit = 100): Promise<DeadInboundEvent[]> {
  return db
    .select({ id: inboundEvents.id, connector: inboundEvents.connector, providerEventId: inboundEvents.providerEventId, reason: inboundEvents.reason, receivedAt: inboundEvents.receivedAt })
    .from(inboundEvents)
    .where(eq(inboundEvents.outcome, 'failed'))
    .orderBy(desc(inboundEvents.receivedAt))
    .limit(limit);
}

/** Puts a dead-lettered event back through the same processing (lookup, mapping, transition()). */
export async function replayInboundEvent(db: Db, id: number, now: Date): Promise<boolean> {
  return db.transaction(async (tx) => {
    const res = await tx.execute(sql`UPDATE inbound_events SET outcome = 'pending', tries = 0, reason = 'replayed', processed_at = NULL WHERE id = ${id} AND outcome = 'failed' AND verified RETURNING id`);
    if (res.rows.length === 0) return false;
    await enqueueWebhookJob(tx, 'inbound_event', { inboundEventId: id }, now);
    return true;
  });
}
