// Writes a transition's effects inside its transaction: work for later (provider calls, timers,
// merchant events, ledger postings) becomes outbox rows; discrepancies are records for people
// and go straight to their table.

import type { Effect } from '../core/effects.ts';
import type { Payment } from '../core/payment.ts';
import { assertNever } from '../core/states.ts';
import type { StepEnv } from '../core/step.ts';
import type { DbOrTx } from './db.ts';
import { discrepancies, outbox } from './schema.ts';

type OutboxInsert = typeof outbox.$inferInsert;
type DiscrepancyInsert = typeof discrepancies.$inferInsert;

export type OutboxKind = 'provider_call' | 'timer' | 'merchant_event' | 'ledger';

function outboxRow(e: Exclude<Effect, { type: 'discrepancy' }>, payment: Payment, transitionId: number, now: Date): OutboxInsert {
  const base = { paymentId: payment.id, transitionId, kind: e.type satisfies OutboxKind, payload: e, runAt: now };
  switch (e.type) {
    case 'provider_call':
      return { ...base, connector: e.connector, providerKey: e.providerKey, runAt: e.runAt === undefined ? now : new Date(e.runAt) };
    case 'timer':
      return { ...base, runAt: new Date(e.runAt) };
    case 'merchant_event':
      // The event describes the payment as it was at this version, not as it is when delivered.
      return { ...base, payload: { ...e, payment } };
    case 'ledger':
      return { ...base, connector: e.connector };
    default:
      return assertNever(e, 'effect');
  }
}

/** Inserts the effects of one transition; returns the new outbox ids in effect order. */
export async function writeEffects(
  tx: DbOrTx,
  effects: readonly Effect[],
  ctx: { payment: Payment; transitionId: number; now: Date; newId: StepEnv['newId'] },
): Promise<number[]> {
  const rows: OutboxInsert[] = [];
  const found: DiscrepancyInsert[] = [];
  for (const e of effects) {
    if (e.type === 'discrepancy') {
      found.push({ id: ctx.newId('discrepancy'), paymentId: ctx.payment.id, attemptId: e.attemptId ?? null, kind: e.kind, detail: e.detail, createdAt: ctx.now });
    } else {
      rows.push(outboxRow(e, ctx.payment, ctx.transitionId, ctx.now));
    }
  }
  if (found.length > 0) await tx.insert(discrepancies).values(found);
  if (rows.length === 0) return [];
  const inserted = await tx.insert(outbox).values(rows).returning({ id: outbox.id });
  return inserted.map((r) => r.id).sort((a, b) => a - b);
}
