// Dead letters for the dashboard: listed with their age, replayed onto the queue their kind
// belongs to (provider calls, timers and the webhook queues alike), and published at once.

import { sql } from 'drizzle-orm';
import type { Runtime } from '../app/runtime.ts';
import { listDeadLetters, replayDeadLetter } from '../jobs/dlq.ts';
import type { DeadLetter } from '../jobs/dlq.ts';
import { reviveOutboxRow } from '../jobs/outbox-claims.ts';
import type { DbOrTx } from '../store/db.ts';
import { recordAudit } from './audit.ts';

export type { DeadLetter };

export function deadLetters(rt: Runtime, limit = 100): Promise<DeadLetter[]> {
  return listDeadLetters(rt.database.db, limit);
}

/** Back to pending through the same claim and checks as any row, audited under the operator; false when it was not dead. */
export async function replayDeadLetterRow(rt: Runtime, id: number, operator: string): Promise<boolean> {
  const r = await rt.database.db.execute<{ kind: string; connector: string | null; payment_id: string | null; attempts: number }>(sql`SELECT kind, connector, payment_id, attempts FROM outbox WHERE id = ${id} AND status = 'dead'`);
  const row = r.rows[0];
  if (row === undefined) return false;
  const audit = deadLetterAudit(operator, id, row, rt.now());
  const queue = rt.queueFor(row.kind, row.connector);
  const ok = queue === null ? await reviveOutboxRow(rt.database.db, id, audit) : await replayDeadLetter(rt.database.db, rt.queues, queue, id, audit);
  if (ok) rt.relay.kick();
  return ok;
}

/** The audit row of a dead-letter replay, written in the revive's transaction. */
export function deadLetterAudit(operator: string, id: number, row: { kind: string; connector: string | null; payment_id: string | null }, at: Date) {
  return async (tx: DbOrTx): Promise<void> => {
    await recordAudit(tx, { operator, action: 'dead_letter.replay', target: `outbox:${id}`, before: { status: 'dead', kind: row.kind, connector: row.connector, payment_id: row.payment_id }, after: { status: 'pending' }, at });
  };
}

export interface OpenDiscrepancy {
  readonly id: string;
  readonly category: string;
  readonly paymentId: string | null;
  readonly connector: string | null;
  readonly detail: string;
  readonly createdAt: string;
}

export async function openDiscrepancies(rt: Runtime, limit = 100): Promise<OpenDiscrepancy[]> {
  const r = await rt.database.db.execute<{ id: string; category: string; payment_id: string | null; connector: string | null; detail: string; created_at: string | Date }>(sql`
    SELECT id, coalesce(category, kind) AS category, payment_id, connector, detail, created_at FROM discrepancies
     WHERE status = 'open' ORDER BY created_at, id LIMIT ${limit}`);
  return r.rows.map((d) => ({ id: d.id, category: d.category, paymentId: d.payment_id, connector: d.connector, detail: d.detail, createdAt: new Date(d.created_at).toISOString() }));
}
