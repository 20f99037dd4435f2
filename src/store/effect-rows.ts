// Writes a transition's effects inside its transaction: work for later (provider calls, timers)
// becomes outbox rows; merchant events are recorded here with their deliveries (each delivery's
// job an outbox row), so an event exists exactly when its state change does; ledger postings are written as balanced double-entry
// transactions right here, in the transaction of the transition that causes them; discrepancies
// are records for people and go straight to their table.

import type { Effect } from '../core/effects.ts';
import type { Payment } from '../core/payment.ts';
import { assertNever } from '../core/states.ts';
import type { StepEnv } from '../core/step.ts';
import type { DbOrTx } from './db.ts';
import { postingFor } from '../core/ledger.ts';
import { discrepancies, ledgerEntries, ledgerTransactions, outbox } from './schema.ts';
import { recordMerchantEvent } from '../webhooks/outbound/event-record.ts';

type OutboxInsert = typeof outbox.$inferInsert;
type DiscrepancyInsert = typeof discrepancies.$inferInsert;

export type OutboxKind = 'provider_call' | 'timer' | 'merchant_event';

function outboxRow(e: Exclude<Effect, { type: 'discrepancy' | 'ledger' | 'merchant_event' }>, payment: Payment, transitionId: number, now: Date): OutboxInsert {
  const base = { paymentId: payment.id, transitionId, kind: e.type satisfies OutboxKind, payload: e, runAt: now };
  switch (e.type) {
    case 'provider_call':
      return { ...base, connector: e.connector, providerKey: e.providerKey, runAt: e.runAt === undefined ? now : new Date(e.runAt) };
    case 'timer':
      return { ...base, runAt: new Date(e.runAt) };
    default:
      return assertNever(e, 'effect');
  }
}

/** Inserts the effects of one transition; returns the new outbox ids (ascending). */
export async function writeEffects(
  tx: DbOrTx,
  effects: readonly Effect[],
  ctx: { payment: Payment; transitionId: number; now: Date; newId: StepEnv['newId'] },
): Promise<number[]> {
  const rows: OutboxInsert[] = [];
  const found: DiscrepancyInsert[] = [];
  const events: Extract<Effect, { type: 'merchant_event' }>[] = [];
  const postings: { tx: typeof ledgerTransactions.$inferInsert; lines: Omit<typeof ledgerEntries.$inferInsert, 'transactionId'>[] }[] = [];
  effects.forEach((e, i) => {
    if (e.type === 'ledger') {
      const posting = postingFor(e, ctx.payment.merchantId);
      const id = ctx.newId('ledger');
      postings.push({
        // The source makes a second posting of the same cause fail (UNIQUE).
        tx: { id, paymentId: ctx.payment.id, kind: posting.kind, source: `transition:${ctx.transitionId}:${i}`, description: e.captureId ?? e.refundId ?? null, createdAt: ctx.now },
        lines: posting.lines.map((l) => ({ account: l.account, direction: l.direction, amount: l.amount, currency: l.currency })),
      });
    } else if (e.type === 'merchant_event') {
      events.push(e);
    } else if (e.type === 'discrepancy') {
      found.push({ id: ctx.newId('discrepancy'), paymentId: ctx.payment.id, attemptId: e.attemptId ?? null, kind: e.kind, detail: e.detail, createdAt: ctx.now });
    } else {
      rows.push(outboxRow(e, ctx.payment, ctx.transitionId, ctx.now));
    }
  });
  for (const p of postings) {
    await tx.insert(ledgerTransactions).values(p.tx);
    await tx.insert(ledgerEntries).values(p.lines.map((l) => ({ ...l, transactionId: p.tx.id })));
  }
  if (found.length > 0) await tx.insert(discrepancies).values(found);
  const ids: number[] = [];
  if (rows.length > 0) ids.push(...(await tx.insert(outbox).values(rows).returning({ id: outbox.id })).map((r) => r.id));
  // The event describes the payment as it was at this version, not as it is when delivered.
  for (const e of events) ids.push(...(await recordMerchantEvent(tx, { ...e, payment: ctx.payment }, ctx.now)).outboxIds);
  return ids.sort((a, b) => a - b);
}
