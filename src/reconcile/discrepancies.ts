// Discrepancies for operators: list them (by status and category) and resolve one with a note and
// an owner. Resolution is a compare-and-set on status = 'open', so two operators cannot both
// resolve the same row; the note, the owner and the time are kept on the row.

import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../store/db.ts';
import { discrepancies } from '../store/schema.ts';
import type { DiscrepancyCategory } from './compare.ts';

export type DiscrepancyRow = typeof discrepancies.$inferSelect;
export type StatusFilter = 'open' | 'resolved' | 'all';

export interface ListOptions {
  readonly status: StatusFilter;
  readonly category?: DiscrepancyCategory;
  readonly limit: number;
}

/** Newest first. Rows the state machine records itself (late approvals…) have no category; they list too unless a category is asked for. */
export function listDiscrepancies(db: Db, o: ListOptions): Promise<DiscrepancyRow[]> {
  const where = and(o.status === 'all' ? undefined : eq(discrepancies.status, o.status), o.category === undefined ? undefined : eq(discrepancies.category, o.category));
  return db.select().from(discrepancies).where(where).orderBy(desc(discrepancies.createdAt), desc(discrepancies.id)).limit(o.limit);
}

export async function countDiscrepancies(db: Db, o: Omit<ListOptions, 'limit'>): Promise<number> {
  const where = and(o.status === 'all' ? undefined : eq(discrepancies.status, o.status), o.category === undefined ? undefined : eq(discrepancies.category, o.category));
  const [r] = await db.select({ n: sql<string>`count(*)` }).from(discrepancies).where(where);
  return Number(r?.n ?? 0);
}

export type ResolveResult =
  | { readonly ok: true; readonly row: DiscrepancyRow }
  | { readonly ok: false; readonly reason: 'not_found' }
  | { readonly ok: false; readonly reason: 'already_resolved'; readonly row: DiscrepancyRow };

export async function resolveDiscrepancy(db: Db, id: string, r: { readonly note: string; readonly owner?: string; readonly now: Date }): Promise<ResolveResult> {
  const [row] = await db
    .update(discrepancies)
    .set({ status: 'resolved', resolution: r.note, resolvedAt: r.now, ...(r.owner === undefined ? {} : { owner: r.owner }) })
    .where(and(eq(discrepancies.id, id), eq(discrepancies.status, 'open')))
    .returning();
  if (row !== undefined) return { ok: true, row };
  const [existing] = await db.select().from(discrepancies).where(eq(discrepancies.id, id));
  return existing === undefined ? { ok: false, reason: 'not_found' } : { ok: false, reason: 'already_resolved', row: existing };
}
