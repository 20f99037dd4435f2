// Writes a posting (src/core/ledger.ts decides its lines) as one ledger transaction with its
// entries, inside the caller's database transaction. `source` names the cause and is UNIQUE: a
// second posting of the same cause writes nothing and returns false, which is what makes dispute
// redeliveries and settlement re-imports idempotent. The deferred trigger still refuses an
// unbalanced transaction at COMMIT.

import { disputePosting } from '../core/ledger.ts';
import type { DisputeStatus, Posting } from '../core/ledger.ts';
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

export interface DisputeLedgerChange {
  readonly disputeId: string;
  readonly paymentId: string;
  readonly merchantId: string;
  readonly connector: string;
  readonly from: DisputeStatus | null;
  readonly to: DisputeStatus;
  readonly amount: number;
  readonly currency: string;
  readonly now: Date;
  readonly newId: () => string;
}

const STATUSES: readonly string[] = ['opened', 'won', 'lost'];

export function asDisputeStatus(s: string | null | undefined): DisputeStatus | null {
  return s !== null && s !== undefined && STATUSES.includes(s) ? (s as DisputeStatus) : null;
}

/** The dispute's move from → to, posted once per (dispute, new status); false when it moves no money. */
export async function postDisputeChange(tx: DbOrTx, c: DisputeLedgerChange): Promise<boolean> {
  const posting = disputePosting({ from: c.from, to: c.to, amount: c.amount, currency: c.currency, connector: c.connector, merchantId: c.merchantId });
  if (posting === null) return false;
  return writePosting(tx, posting, { id: c.newId(), paymentId: c.paymentId, source: `dispute:${c.disputeId}:${c.to}`, description: c.disputeId, createdAt: c.now });
}
