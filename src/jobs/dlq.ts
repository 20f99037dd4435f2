// The dead-letter state: outbox rows whose jobs exhausted their infrastructure retries. Visible,
// counted and replayable; a replay goes through the same claim and transition checks as any row.

import { sql } from 'drizzle-orm';
import type { Db } from '../store/db.ts';
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
export async function replayDeadLetter(db: Db, queues: QueueSet, queueName: string, id: number): Promise<boolean> {
  const revived = await reviveOutboxRow(db, id);
  if (!revived) return false;
  const job = await queues.get(queueName).getJob(outboxJobId(id));
  if (job !== undefined) await job.remove();
  return true;
}
