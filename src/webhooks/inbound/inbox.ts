// The inbox (inbound_events): every provider request is recorded — rejected ones with the reason
// and no body (they are unauthenticated: we keep their size and digest, not their bytes), verified
// events with the raw bytes and the normalized event, once per (account, provider event id).

import { createHash } from 'node:crypto';
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { NormalizedEvent } from '../../connectors/contract.ts';
import type { Db, DbOrTx } from '../../store/db.ts';
import { inboundEvents } from '../../store/schema.ts';
import { enqueueWebhookJob } from '../webhook-jobs.ts';

export type InboundOutcome = 'pending' | 'applied' | 'ignored' | 'unverified' | 'failed';

/** Headers worth keeping: never the signature or Authorization (they are credentials). */
function keptHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['content-type', 'user-agent']) {
    const v = headers[name];
    if (typeof v === 'string') out[name] = v.slice(0, 200);
  }
  return out;
}

export async function recordRejected(db: DbOrTx, account: string, rawBody: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>, status: number, reason: string, now: Date): Promise<void> {
  const digest = createHash('sha256').update(rawBody).digest('hex');
  await db.insert(inboundEvents).values({
    connector: account, providerEventId: null, rawBody: Buffer.alloc(0), verified: false, outcome: 'unverified',
    headers: { ...keptHeaders(headers), 'x-body-bytes': String(rawBody.length), 'x-body-sha256': digest },
    reason: `${status}: ${reason}`, receivedAt: now, processedAt: now,
  });
}

export interface StoredEvents {
  readonly inserted: number;
  readonly duplicates: number;
  /** The processing jobs' outbox rows, for the relay to publish right after COMMIT. */
  readonly outboxIds: readonly number[];
}

/** One transaction: each new event in the inbox plus its processing job; a known event id inserts nothing. */
export async function storeVerifiedEvents(db: Db, account: string, rawBody: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>, events: readonly NormalizedEvent[], now: Date): Promise<StoredEvents> {
  return db.transaction(async (tx) => {
    let inserted = 0;
    const outboxIds: number[] = [];
    for (const e of events) {
      const ignored = e.kind === 'ignored';
      const rows = await tx
        .insert(inboundEvents)
        .values({
          connector: account, providerEventId: e.providerEventId, rawBody, headers: keptHeaders(headers), verified: true, event: e, receivedAt: now,
          outcome: ignored ? 'ignored' : 'pending',
          ...(ignored ? { reason: `${e.rawType}: not an event the gateway acts on`, processedAt: now } : {}),
        })
        .onConflictDoNothing({ target: [inboundEvents.connector, inboundEvents.providerEventId] })
        .returning({ id: inboundEvents.id });
      const row = rows[0];
      if (row === undefined) continue;
      inserted++;
      if (!ignored) outboxIds.push(await enqueueWebhookJob(tx, 'inbound_event', { inboundEventId: row.id }, now));
    }
    return { inserted, duplicates: events.length - inserted, outboxIds };
  });
}

export interface InboundRow {
  readonly id: number;
  readonly connector: string;
  readonly outcome: InboundOutcome;
  readonly event: NormalizedEvent | null;
  readonly tries: number;
}

export async function loadInboundEvent(db: DbOrTx, id: number): Promise<InboundRow | null> {
  const rows = await db
    .select({ id: inboundEvents.id, connector: inboundEvents.connector, outcome: inboundEvents.outcome, event: inboundEvents.event, tries: inboundEvents.tries })
    .from(inboundEvents)
    .where(eq(inboundEvents.id, id));
  const r = rows[0];
  return r === undefined ? null : { ...r, outcome: r.outcome as InboundOutcome, event: r.event as NormalizedEvent | null };
}

/**
 * Outcomes still open to processing: pending, and failed (the dead letter) — a failed event is
 * only processed again through a deliberate replay, since no job for it is left pending.
 */
export const PROCESSABLE: readonly InboundOutcome[] = ['pending', 'failed'];

/** Settles an open event; a row already settled (a concurrent run) is left as it is. */
export async function settleInboundEvent(tx: DbOrTx, id: number, outcome: 'applied' | 'ignored' | 'failed', reason: string, paymentId: string | null, now: Date): Promise<void> {
  await tx
    .update(inboundEvents)
    .set({ outcome, reason: reason.slice(0, 1000), paymentId, processedAt: now })
    .where(and(eq(inboundEvents.id, id), inArray(inboundEvents.outcome, [...PROCESSABLE])));
}

/** The payment is not known yet: count the try and process the event again later. */
export async function retryInboundLater(tx: DbOrTx, id: number, tries: number, reason: string, at: Date): Promise<void> {
  await tx.update(inboundEvents).set({ tries, reason, outcome: 'pending' }).where(and(eq(inboundEvents.id, id), inArray(inboundEvents.outcome, [...PROCESSABLE])));
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
