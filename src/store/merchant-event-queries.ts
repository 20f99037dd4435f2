// The merchant's events as the API lists them: their own only, newest first, no older than the
// window the caller gives (GET /v1/events: 30 days). An older event stays readable by id
// (webhooks/outbound/endpoint-store.ts loadEventView) for as long as its row is kept.

import { and, gte, inArray } from 'drizzle-orm';
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

/** A page of the merchant's events, newest first (UnknownCursorError when the cursor is not one of theirs). */
export function listMerchantEvents(db: DbOrTx, merchantId: string, filters: EventFilters, page: PageRequest): Promise<Page<ListedEvent>> {
  return inSnapshot(db, async (tx) => {
    const found = await keysetPage(tx, EVENT_KEYSET, merchantId, eventConditions(filters), page, (where, orderBy, limit) =>
      tx.select().from(merchantEvents).where(where).orderBy(...orderBy).limit(limit));
    return { data: found.data.map((e) => ({ id: e.id, type: e.type, paymentId: e.paymentId, createdAt: e.createdAt, payload: e.payload })), hasMore: found.hasMore };
  });
}
