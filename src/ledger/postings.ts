// Writes a posting (src/core/ledger.ts decides its lines) as one ledger transaction with its
// entries, inside the caller's database transaction. `source` names the cause and is UNIQUE: a
// second posting of the same cause writes nothing and returns false, which is what makes dispute
// movements (src/core/disputes.ts) and settlement re-imports idempotent. The deferred trigger
// still refuses an unbalanced transaction at COMMIT.

import type { Posting } from '../core/ledger.ts';
import type { DbOrTx } from '../store/db.ts';
import { ledgerEntries, ledgerTransactions } from '../store/schema.ts';

export interface PostingRow {
  readonly id: string;
  readonly paymentId: string | null;
  /** The attempt whose money it moves, when one does (settlement rows name theirs). */
  readonly attemptId?: string | null;
  readonly source: string;
  readonly description: string | null;
  readonly createdAt: Date;
}

export async function writePosting(tx: DbOrTx, posting: Posting, row: PostingRow): Promise<boolean> {
  const inserted = await tx
    .insert(ledgerTransactions)
    .values({ id: row.id, paymentId: row.paymentId, attemptId: row.attemptId ?? null, kind: posting.kind, source: row.source, description: row.description, createdAt: row.createdAt })
    .onConflictDoNothing({ target: ledgerTransactions.source })
    .returning({ id: ledgerTransactions.id });
  if (inserted.length === 0) return false;
  await tx.insert(ledgerEntries).values(posting.lines.map((l) => ({ transactionId: row.id, account: l.account, direction: l.direction, amount: l.amount, currency: l.currency })));
  return true;
}
