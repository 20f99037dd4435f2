// Discrepancies for operators: list them (by status and category) and resolve one with a note,
// under the operator's name. A resolution is a history row of its own (discrepancy_resolutions);
// the discrepancy's status is derived from it and cannot be written otherwise (migration 0018).

import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../store/db.ts';
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
  | { readonly ok: true; readonly row: DiscrepancyRow; readonly evidence: ReleaseEvidence | null }
  | { readonly ok: false; readonly reason: 'not_found' }
  | { readonly ok: false; readonly reason: 'already_resolved'; readonly row: DiscrepancyRow }
  | { readonly ok: false; readonly reason: 'needs_reason'; readonly row: DiscrepancyRow; readonly evidence: ReleaseEvidence | null };

/** Findings about customer money the gateway meant to give back: closing one takes the provider's word or a reason from this list. */
export const MONEY_AT_STAKE_KINDS = ['late_approval', 'late_authentication', 'release_failed'] as const;

/** Why an operator may close a money-at-stake finding the provider's records do not (yet) settle. */
export const CLOSING_REASONS = [
  'returned_outside_switchyard', // refunded or voided by hand in the provider's dashboard
  'confirmed_with_provider', // the provider's support confirmed the money was never taken or was returned
  'customer_refunded_otherwise', // the merchant paid the customer back by other means
  'written_off', // finance accepted the loss
  'duplicate_finding', // another finding covers the same money
] as const;
export type ClosingReason = (typeof CLOSING_REASONS)[number];

export interface ReleaseEvidence {
  readonly attemptId: string;
  readonly attemptStatus: string;
  readonly providerRef: string | null;
  /** True when the provider confirmed the release (the attempt is `released` only on its word). */
  readonly agrees: boolean;
}

async function releaseEvidence(db: DbOrTx, row: DiscrepancyRow): Promise<ReleaseEvidence | null> {
  if (row.attemptId === null) return null;
  const r = await db.execute<{ status: string; provider_ref: string | null }>(sql`SELECT status, provider_ref FROM payment_attempts WHERE id = ${row.attemptId}`);
  const a = r.rows[0];
  return a === undefined ? null : { attemptId: row.attemptId, attemptStatus: a.status, providerRef: a.provider_ref, agrees: a.status === 'released' };
}

export interface Resolution {
  readonly note: string;
  /** Who resolves it: an operator's name (from their token) or `reconcile`. */
  readonly operator: string;
  readonly reason?: ClosingReason;
  readonly now: Date;
  /** More writes in the resolution's transaction (the operator's audit row). */
  readonly alsoInTransaction?: (tx: DbOrTx, row: DiscrepancyRow, evidence: ReleaseEvidence | null) => Promise<void>;
}

/**
 * Appends the discrepancy's resolution row (its status, resolution and owner follow from it,
 * migration 0018), once: the row is unique per discrepancy, so two operators cannot both resolve
 * it. A late approval or failed release closes only when the provider confirmed the release, or
 * with a reason from CLOSING_REASONS.
 */
export async function resolveDiscrepancy(db: Db, id: string, r: Resolution): Promise<ResolveResult> {
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(discrepancies).where(eq(discrepancies.id, id)).for('update');
    if (row === undefined) return { ok: false, reason: 'not_found' } as const;
    if (row.status !== 'open') return { ok: false, reason: 'already_resolved', row } as const;
    const atStake = (MONEY_AT_STAKE_KINDS as readonly string[]).includes(row.kind);
    const evidence = atStake ? await releaseEvidence(tx, row) : null;
    if (atStake && evidence?.agrees !== true && r.reason === undefined) return { ok: false, reason: 'needs_reason', row, evidence } as const;
    await tx.execute(sql`INSERT INTO discrepancy_resolutions (discrepancy_id, at, operator, reason, note, evidence)
      VALUES (${id}, ${r.now.toISOString()}::timestamptz, ${r.operator}, ${r.reason ?? null}, ${r.note}, ${evidence === null ? null : JSON.stringify(evidence)}::jsonb)`);
    const [resolved] = await tx.select().from(discrepancies).where(eq(discrepancies.id, id));
    await r.alsoInTransaction?.(tx, resolved!, evidence);
    return { ok: true, row: resolved!, evidence } as const;
  });
}
