// Settlement import: the provider's settlement rows for a window (Adyen's settlement-details
// report) become postings — receivable to bank by the gross, the commission to fees — once per
// row: the row's stable id is the posting's UNIQUE source, so re-importing a report posts nothing.
// A row is posted against the payment whose attempt it names; a row that names none of ours is
// counted as unmatched and left to reconciliation (it reports the provider record as a finding).

import { and, eq, inArray, or } from 'drizzle-orm';
import type { Connector, ReconciliationWindow, SettlementLine } from '../connectors/contract.ts';
import { newId } from '../core/ids.ts';
import { settlementPosting } from '../core/ledger.ts';
import type { Db, DbOrTx } from '../store/db.ts';
import { paymentAttempts } from '../store/schema.ts';
import { writePosting } from './postings.ts';

export interface SettlementImport {
  /** Money-moving rows the provider reported for the window. */
  readonly lines: number;
  /** Rows posted by this import (a re-import posts 0). */
  readonly posted: number;
  /** Rows that name no attempt of ours on this account. */
  readonly unmatched: number;
}

/** The row's type first: the ledger check tells capture rows from the others by it (held-checks.ts). */
export const settlementDescription = (line: SettlementLine): string => `${line.type} ${line.modificationRef ?? line.providerRef} batch ${line.batch}`;

export const settlementSource = (account: string, line: SettlementLine): string => `settlement:${account}:${line.lineId}`;

interface LineOwner {
  readonly paymentId: string;
  readonly attemptId: string;
}

async function paymentsOf(db: DbOrTx, account: string, lines: readonly SettlementLine[]): Promise<(l: SettlementLine) => LineOwner | null> {
  const attemptIds = [...new Set(lines.map((l) => l.attemptId).filter((x): x is string => x !== null))];
  const refs = [...new Set(lines.map((l) => l.providerRef))];
  if (lines.length === 0) return () => null;
  const rows = await db
    .select({ id: paymentAttempts.id, paymentId: paymentAttempts.paymentId, providerRef: paymentAttempts.providerRef })
    .from(paymentAttempts)
    .where(and(eq(paymentAttempts.connector, account), or(inArray(paymentAttempts.providerRef, refs), ...(attemptIds.length === 0 ? [] : [inArray(paymentAttempts.id, attemptIds)]))));
  const owner = (r: (typeof rows)[number]): LineOwner => ({ paymentId: r.paymentId, attemptId: r.id });
  const byRef = new Map(rows.filter((r) => r.providerRef !== null).map((r) => [r.providerRef, owner(r)]));
  const byAttempt = new Map(rows.map((r) => [r.id, owner(r)]));
  return (l) => byRef.get(l.providerRef) ?? (l.attemptId === null ? undefined : byAttempt.get(l.attemptId)) ?? null;
}

/** Imports one account's settlement rows for the window; accounts whose connector reports none import nothing. */
export async function importSettlement(db: Db, account: string, connector: Connector, window: ReconciliationWindow, now: Date): Promise<SettlementImport> {
  if (connector.fetchSettlementLines === undefined) return { lines: 0, posted: 0, unmatched: 0 };
  const lines = await connector.fetchSettlementLines(window);
  return db.transaction((tx) => postSettlementLines(tx, account, lines, now));
}

/** Posts each line once (its source is UNIQUE), inside the caller's transaction. */
export async function postSettlementLines(tx: DbOrTx, account: string, lines: readonly SettlementLine[], now: Date): Promise<SettlementImport> {
  const paymentOf = await paymentsOf(tx, account, lines);
  let posted = 0;
  let unmatched = 0;
  {
    for (const line of lines) {
      const owner = paymentOf(line);
      if (owner === null) {
        unmatched++;
        continue;
      }
      const posting = settlementPosting({ connector: account, currency: line.currency, gross: line.gross, fee: line.fee });
      if (posting === null) continue;
      const description = settlementDescription(line);
      const row = { id: newId('ledger', now.getTime()), paymentId: owner.paymentId, attemptId: owner.attemptId, source: settlementSource(account, line), description, createdAt: now };
      if (await writePosting(tx, posting, row)) posted++;
    }
  }
  return { lines: lines.length, posted, unmatched };
}
