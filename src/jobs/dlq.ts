// The dead-letter state: outbox rows whose jobs exhausted their infrastructure retries. Visible,
// counted and replayable; a replay goes through the same claim and transition checks as any row.

import { sql } from 'drizzle-orm';
import { keyExpiredAtExecution } from '../core/key-retention.ts';
import type { ProviderOperation } from '../core/inputs.ts';
import type { Db, DbOrTx } from '../store/db.ts';
import { reviveOutboxRow } from './outbox-claims.ts';
import { outboxJobId } from './queues.ts';
import type { QueueSet } from './queues.ts';

export interface DeadLetter {
  readonly id: number;
  readonly paymentId: string | null;
  readonly kind: string;
  readonly connector: string | null;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly createdAt: string;
}

export async function listDeadLetters(db: Db, limit = 100): Promise<DeadLetter[]> {
  const res = await db.execute<{ id: string; payment_id: string | null; kind: string; connector: string | null; attempts: number; last_error: string | null; created_at: Date }>(
    sql`SELECT id, payment_id, kind, connector, attempts, last_error, created_at FROM outbox WHERE status = 'dead' ORDER BY id LIMIT ${limit}`,
  );
  return res.rows.map((r) => ({
    id: Number(r.id), paymentId: r.payment_id, kind: r.kind, connector: r.connector, attempts: r.attempts, lastError: r.last_error, createdAt: new Date(r.created_at).toISOString(),
  }));
}

export async function countDeadLetters(db: Db): Promise<{ count: number; oldest: string | null }> {
  const res = await db.execute<{ n: string; oldest: Date | null }>(sql`SELECT count(*) AS n, min(created_at) AS oldest FROM outbox WHERE status = 'dead'`);
  const row = res.rows[0];
  return { count: Number(row?.n ?? 0), oldest: row?.oldest == null ? null : new Date(row.oldest).toISOString() };
}

/** Puts a dead row back to pending and frees its job id, so the relay publishes it again. */
export async function replayDeadLetter(db: Db, queues: QueueSet, queueName: string, id: number, alsoInTransaction?: (tx: DbOrTx) => Promise<void>): Promise<boolean> {
  const revived = await reviveOutboxRow(db, id, alsoInTransaction);
  if (!revived) return false;
  const job = await queues.get(queueName).getJob(outboxJobId(id));
  if (job !== undefined) await job.remove();
  return true;
}

/**
 * What a replay of this dead row will do, said before it is done. A provider call whose key is past
 * its connector's retention (minus the margin) is not sent again when it runs — the worker reports
 * key_expired and the core looks the operation up, fences it or parks it — so an operator replaying
 * it learns that instead of expecting the call to go out. `retentionMsFor`: the account's retention.
 */
export async function replayPlan(db: Db, id: number, now: Date, retentionMsFor: (connector: string) => number | null, marginMs: number): Promise<{ readonly sends: boolean; readonly text: string }> {
  const res = await db.execute<{ kind: string; connector: string | null; op: string | null; key_first: Date | null }>(sql`
    SELECT o.kind, o.connector, o.payload->>'op' AS op,
           (SELECT min(k.run_at) FROM outbox k WHERE k.payment_id = o.payment_id AND k.kind = o.kind AND k.payload->>'providerKey' = o.payload->>'providerKey') AS key_first
      FROM outbox o WHERE o.id = ${id}`);
  const row = res.rows[0];
  if (row === undefined || row.kind !== 'provider_call' || row.connector === null || row.op === null) return { sends: true, text: 'it runs through the same checks as any job' };
  const retention = retentionMsFor(row.connector);
  if (retention === null) return { sends: false, text: `connector account ${row.connector} is not configured: it will not be sent` };
  const expired = keyExpiredAtExecution(row.op as ProviderOperation, row.key_first === null ? null : new Date(row.key_first), now, retention, marginMs);
  if (expired === null) return { sends: true, text: `the ${row.op} call goes out again with its key (inside ${row.connector}'s retention)` };
  return {
    sends: false,
    text: `the ${row.op} call will NOT be sent again: ${expired}. The worker reports key_expired and the payment is resolved without a resend (looked up, fenced, or parked for review / reconciliation)`,
  };
}
