// Disputes and evidence files as the merchant API reads and records them: a merchant's disputes
// newest first (keyset on created_at, id), one dispute, what the merchant did about it (evidence
// sent or submitted, acceptance), and the files it uploaded.

import { and, desc, eq, lt, or, sql } from 'drizzle-orm';
import type { DbOrTx } from './db.ts';
import { disputes, files } from './schema.ts';

export type DisputeRow = typeof disputes.$inferSelect;
export type FileRow = typeof files.$inferSelect;
export type FileMeta = Omit<FileRow, 'content'>;

/** A key of one mode sees the disputes of that mode's payments only (null: a legacy key, both). */
function inMode(livemode: boolean | null | undefined) {
  return livemode === null || livemode === undefined ? undefined : sql`EXISTS (SELECT 1 FROM payments p WHERE p.id = ${disputes.paymentId} AND p.livemode = ${livemode})`;
}

export async function listDisputes(db: DbOrTx, merchantId: string, opts: { limit: number; startingAfter?: string; livemode?: boolean | null }): Promise<{ data: DisputeRow[]; hasMore: boolean }> {
  let after = undefined;
  if (opts.startingAfter !== undefined) {
    const [cursor] = await db.select({ createdAt: disputes.createdAt, id: disputes.id }).from(disputes).where(and(eq(disputes.merchantId, merchantId), eq(disputes.id, opts.startingAfter)));
    // An unknown cursor lists nothing after it (never another merchant's position).
    if (cursor === undefined) return { data: [], hasMore: false };
    after = or(lt(disputes.createdAt, cursor.createdAt), and(eq(disputes.createdAt, cursor.createdAt), lt(disputes.id, cursor.id)));
  }
  const rows = await db.select().from(disputes).where(and(eq(disputes.merchantId, merchantId), after, inMode(opts.livemode))).orderBy(desc(disputes.createdAt), desc(disputes.id)).limit(opts.limit + 1);
  return { data: rows.slice(0, opts.limit), hasMore: rows.length > opts.limit };
}

export async function findDispute(db: DbOrTx, merchantId: string, id: string, livemode: boolean | null = null): Promise<DisputeRow | null> {
  const [row] = await db.select().from(disputes).where(and(eq(disputes.merchantId, merchantId), eq(disputes.id, id), inMode(livemode)));
  return row ?? null;
}

/** The provider took the evidence: when, whether it was submitted, with which reason. */
export async function recordEvidenceSent(db: DbOrTx, id: string, at: Date, submitted: boolean, defenseReason: string | null): Promise<void> {
  await db.update(disputes).set({
    evidenceSentAt: at,
    ...(submitted && { evidenceSubmittedAt: at, defenseReason }),
  }).where(eq(disputes.id, id));
}

export async function recordAccepted(db: DbOrTx, id: string, at: Date): Promise<void> {
  await db.update(disputes).set({ acceptedAt: sql`coalesce(${disputes.acceptedAt}, ${at.toISOString()}::timestamptz)` }).where(eq(disputes.id, id));
}

export async function insertFile(db: DbOrTx, row: typeof files.$inferInsert): Promise<void> {
  await db.insert(files).values(row).onConflictDoNothing({ target: files.id });
}

const META = { id: files.id, merchantId: files.merchantId, purpose: files.purpose, type: files.type, size: files.size, sha256: files.sha256, filename: files.filename, createdAt: files.createdAt };

export async function findFileMeta(db: DbOrTx, merchantId: string, id: string): Promise<FileMeta | null> {
  const [row] = await db.select(META).from(files).where(and(eq(files.merchantId, merchantId), eq(files.id, id)));
  return row ?? null;
}

/** The merchant's file with its bytes (to send to a provider), or null when it is not this merchant's. */
export async function findFile(db: DbOrTx, merchantId: string, id: string): Promise<FileRow | null> {
  const [row] = await db.select().from(files).where(and(eq(files.merchantId, merchantId), eq(files.id, id)));
  return row ?? null;
}
