// The merchant's events as the API lists them: their own only, newest first, no older than the
// window the caller gives (GET /v1/events: 30 days). An older event stays readable by id
// (webhooks/outbound/endpoint-store.ts loadEventView) for as long as its row is kept.

import { and, gte, inArray, sql } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { DbOrTx } from './db.ts';
import { createdWithin, keysetPage } from './keyset-page.ts';
import type { CreatedRange, Page, PageRequest } from './keyset-page.ts';
import { inSnapshot } from './payment-load.ts';
import { merchantEvents } from './schema.ts';

export interface EventFilters {
  /** Any of these types (exact names; the API expands `payment.*`). */
  readonly types?: readonly string[];
  readonly created?: CreatedRange;
  /** The window: no event created before this instant is listed. */
  readonly notBefore: Date;
}

export interface ListedEvent {
  readonly id: string;
  readonly type: string;
  readonly paymentId: string | null;
  readonly createdAt: Date;
  /** The body its deliveries carried: {id, type, created, data}. */
  readonly payload: unknown;
}

function eventConditions(f: EventFilters): SQL | undefined {
  return and(
    gte(merchantEvents.createdAt, f.notBefore),
    f.types === undefined ? undefined : inArray(merchantEvents.type, [...f.types]),
    createdWithin(merchantEvents.createdAt, f.created),
  );
}

const EVENT_KEYSET = { table: merchantEvents, id: merchantEvents.id, createdAt: merchantEvents.createdAt, merchantId: merchantEvents.merchantId };

/** A page of the merchant's events of the key's mode (`livemode`; null: both), newest first (UnknownCursorError when the cursor is not one of them). */
export function listMerchantEvents(db: DbOrTx, merchantId: string, livemode: boolean | null, filters: EventFilters, page: PageRequest): Promise<Page<ListedEvent>> {
  // An event is of its payment's mode; one without a payment is every mode's (as GET /v1/events/{id} reads them).
  const mode = livemode === null ? undefined : sql`(${merchantEvents.paymentId} IS NULL OR EXISTS (SELECT 1 FROM payments m WHERE m.id = ${merchantEvents.paymentId} AND m.livemode = ${livemode}))`;
  return inSnapshot(db, async (tx) => {
    const found = await keysetPage(tx, EVENT_KEYSET, merchantId, eventConditions(filters), page, (where, orderBy, limit) =>
      tx.select().from(merchantEvents).where(where).orderBy(...orderBy).limit(limit), mode);
    return { data: found.data.map((e) => ({ id: e.id, type: e.type, paymentId: e.paymentId, createdAt: e.createdAt, payload: e.payload })), hasMore: found.hasMore };
  });
}
