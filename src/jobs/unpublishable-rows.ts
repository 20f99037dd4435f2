// Outbox rows the relay cannot publish: rows that go to their connector account's queue
// (provider calls) whose account is not in this process's config — removed or renamed. No worker
// consumes them, so the relay's sweep leaves them out (they must never fill its batches ahead of
// rows it can publish), readiness and a metric show them, and once the account has been absent
// longer than SWITCHYARD_ORPHAN_GRACE the sweep dead-letters them (`account_not_configured`),
// replayable with `switchyard dlq replay` when the account is back.

import { sql } from 'drizzle-orm';
import type { Db } from '../store/db.ts';

export interface AccountRows {
  /** Kinds whose rows go to their connector account's queue. */
  readonly kinds: readonly string[];
  /** The accounts in this process's config. */
  readonly configured: readonly string[];
}

/** The prefix of an unpublishable row's dead-letter reason (what `switchyard dlq list` shows). */
export const ACCOUNT_NOT_CONFIGURED = 'account_not_configured';

export const DEFAULT_ORPHAN_GRACE_MS = 15 * 60_000;

/** Pending rows waiting for accounts not in the config, by account (not yet due ones too: they will wait when due). */
export async function unpublishableRows(db: Db, spec: AccountRows): Promise<Record<string, number>> {
  if (spec.kinds.length === 0) return {};
  const res = await db.execute<{ connector: string | null; n: number }>(sql`
    SELECT connector, count(*)::int AS n FROM outbox
     WHERE status = 'pending' AND kind = ANY(${`{${spec.kinds.join(',')}}`}::text[]) AND coalesce(connector, '') <> ALL(${`{${spec.configured.map((a) => `"${a}"`).join(',')}}`}::text[])
     GROUP BY connector ORDER BY connector`);
  return Object.fromEntries(res.rows.map((r) => [r.connector ?? '(none)', Number(r.n)]));
}

/** One line for /readyz: 'ok', or how many rows wait for which absent accounts. */
export function describeUnpublishable(rows: Readonly<Record<string, number>>, graceMs: number): string {
  const entries = Object.entries(rows);
  if (entries.length === 0) return 'ok';
  const n = entries.reduce((s, [, c]) => s + c, 0);
  return `${n} row(s) wait for connector accounts not in the config: ${entries.map(([a, c]) => `${a} (${c})`).join(', ')}; dead-lettered (${ACCOUNT_NOT_CONFIGURED}) once an account has been absent ${Math.round(graceMs / 60_000)} min`;
}
