// Disputes and evidence files as the merchant API reads and records them: a merchant's disputes
// newest first (keyset on created_at, id), one dispute, what the merchant did about it (evidence
// sent or submitted, acceptance), and the files it uploaded.

import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from './db.ts';
import { keysetPage } from './keyset-page.ts';
import type { Page, PageRequest } from './keyset-page.ts';
import { disputes, files } from './schema.ts';

export type DisputeRow = typeof disputes.$inferSelect;
export type FileRow = typeof files.$inferSelect;
export type FileMeta = Omit<FileRow, 'content'>;

/** A key of one mode sees the disputes of that mode's payments only (null: a legacy key, both). */
function inMode(livemode: boolean | null | undefined) {
  return livemode === null || livemode === undefined ? undefined : sql`EXISTS (SELECT 1 FROM payments p WHERE p.id = ${disputes.paymentId} AND p.livemode = ${livemode})`;
}

const DISPUTE_KEYSET = { table: disputes, id: disputes.id, createdAt: disputes.createdAt, merchantId: disputes.merchantId };

/** A page of the merchant's disputes of the key's mode, newest first (the shared keyset page: UnknownCursorError when the cursor is not one of theirs). */
export function listDisputes(db: DbOrTx, merchantId: string, livemode: boolean | null, page: PageRequest): Promise<Page<DisputeRow>> {
  return keysetPage(db, DISPUTE_KEYSET, merchantId, undefined, page, (where, orderBy, limit) =>
    db.select().from(disputes).where(where).orderBy(...orderBy).limit(limit), inMode(livemode));
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
