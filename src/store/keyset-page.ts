// One page of a merchant's rows, newest first by (created_at, id): the list helper every list of
// the merchant API shares (payments, refunds, events). Keyset paging, not OFFSET: a page costs the
// same however deep it is, and rows written meanwhile neither repeat nor skip a row on the next
// page. The cursor is a row id; its (created_at, id) is the position, read in the caller's
// snapshot and scoped to the merchant, so another merchant's id is as unknown as a made-up one.

import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { DbOrTx } from './db.ts';

/** `after`: the rows older than this one (Stripe's starting_after); `before`: the rows newer than it (ending_before). */
export type PageCursor = { readonly after: string } | { readonly before: string };

export interface PageRequest {
  /** 1..MAX_PAGE_SIZE. */
  readonly limit: number;
  readonly cursor?: PageCursor;
}

export interface Page<T> {
  /** Newest first, whichever way the page was read. */
  readonly data: readonly T[];
  /** More rows lie beyond this page in the direction it was read: older for `after` (and no cursor), newer for `before`. */
  readonly hasMore: boolean;
}

/** The columns a keyset page reads by: every listed table has them. */
export interface KeysetColumns {
  readonly table: PgTable;
  readonly id: PgColumn;
  readonly createdAt: PgColumn;
  readonly merchantId: PgColumn;
}

export const MAX_PAGE_SIZE = 100;

/** The cursor names no row of this merchant (never existed, another merchant's, or another kind's). */
export class UnknownCursorError extends Error {
  override readonly name = 'UnknownCursorError';
  constructor(
    readonly side: 'after' | 'before',
    readonly id: string,
  ) {
    super(`no row ${id} to page from`);
  }
}

/** Runs the page's query: the caller selects its own columns (and joins), with this WHERE, ORDER BY and LIMIT. */
export type PageSelect<Row> = (where: SQL | undefined, orderBy: readonly SQL[], limit: number) => Promise<Row[]>;

/**
 * The page of `merchantId`'s rows (of the key's `mode`, when given) matching `filters`. Run it
 * inside one snapshot (the cursor's position and the page must be read from the same one).
 */
export async function keysetPage<Row>(db: DbOrTx, k: KeysetColumns, merchantId: string, filters: SQL | undefined, page: PageRequest, select: PageSelect<Row>, mode?: SQL): Promise<Page<Row>> {
  if (!Number.isSafeInteger(page.limit) || page.limit < 1 || page.limit > MAX_PAGE_SIZE) throw new RangeError(`limit ${page.limit} must be 1..${MAX_PAGE_SIZE}`);
  // `mode`: the key's mode as a condition on the listed table; like the merchant, it scopes the cursor too.
  const scope = and(eq(k.merchantId, merchantId), mode);
  const backwards = page.cursor !== undefined && 'before' in page.cursor;
  let position: SQL | undefined;
  if (page.cursor !== undefined) {
    const id = 'before' in page.cursor ? page.cursor.before : page.cursor.after;
    // As text: a JS Date would drop the microseconds a timestamptz may hold, and move the position.
    const found = await db.select({ at: sql<string>`${k.createdAt}::text` }).from(k.table).where(and(scope, eq(k.id, id)));
    const at = found[0]?.at;
    if (at === undefined) throw new UnknownCursorError(backwards ? 'before' : 'after', id);
    // A row comparison: with the merchant (and any equality filter) before (created_at, id) in
    // the index, it is one range of that index.
    position = backwards
      ? sql`(${k.createdAt}, ${k.id}) > (${at}::timestamptz, ${id}::text)`
      : sql`(${k.createdAt}, ${k.id}) < (${at}::timestamptz, ${id}::text)`;
  }
  const order = backwards ? [asc(k.createdAt), asc(k.id)] : [desc(k.createdAt), desc(k.id)];
  const rows = await select(and(scope, filters, position), order, page.limit + 1);
  const data = rows.slice(0, page.limit);
  // Read oldest first when paging backwards (the rows right after the cursor), answered newest first.
  return { data: backwards ? data.reverse() : data, hasMore: rows.length > page.limit };
}

/** Bounds on created_at, ISO 8601 instants as the client gave them (PostgreSQL parses them: no precision lost). */
export interface CreatedRange {
  readonly gte?: string;
  readonly gt?: string;
  readonly lte?: string;
  readonly lt?: string;
}

export function createdWithin(column: PgColumn, r: CreatedRange | undefined): SQL | undefined {
  if (r === undefined) return undefined;
  return and(
    r.gte === undefined ? undefined : sql`${column} >= ${r.gte}::timestamptz`,
    r.gt === undefined ? undefined : sql`${column} > ${r.gt}::timestamptz`,
    r.lte === undefined ? undefined : sql`${column} <= ${r.lte}::timestamptz`,
    r.lt === undefined ? undefined : sql`${column} < ${r.lt}::timestamptz`,
  );
}
