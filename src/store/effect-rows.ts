// A transition's effects as write parts of its statement (write-parts.ts): work for later
// (provider calls, timers) becomes outbox rows; merchant events are recorded with their deliveries
// (each delivery's job an outbox row), so an event exists exactly when its state change does;
// ledger postings are balanced double-entry transactions written with the transition that causes
// them; discrepancies are records for people and go straight to their table.

import type { SQL } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import type { PgInsertValue } from 'drizzle-orm/pg-core';
import type { Effect } from '../core/effects.ts';
import type { Payment } from '../core/payment.ts';
import { assertNever } from '../core/states.ts';
import type { StepEnv } from '../core/step.ts';
import type { DbOrTx } from './db.ts';
import { postingFor } from '../core/ledger.ts';
import { discrepancies, ledgerEntries, ledgerTransactions, outbox } from './schema.ts';
import { merchantEventParts } from './merchant-event-record.ts';
import type { WritePart } from './write-parts.ts';

type OutboxInsert = PgInsertValue<typeof outbox>;
type DiscrepancyInsert = typeof discrepancies.$inferInsert;

export type OutboxKind = 'provider_call' | 'timer' | 'merchant_event';

/** The transition row's id: a number once known, or an expression over the statement's log part. */
type TransitionRef = number | SQL;

function outboxRow(e: Exclude<Effect, { type: 'discrepancy' | 'discrepancy_settled' | 'ledger' | 'merchant_event' }>, payment: Payment, transitionId: TransitionRef, now: Date): OutboxInsert {
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

/**
 * The write parts for one transition's effects, named `<prefix>_…`. `transitionId` may be an
 * expression over the log row written in the same statement (`(SELECT id FROM t)`).
 */
export function effectParts(
  tx: DbOrTx,
  prefix: string,
  effects: readonly Effect[],
  ctx: { payment: Payment; transitionId: TransitionRef; now: Date; newId: StepEnv['newId'] },
): WritePart[] {
  const rows: OutboxInsert[] = [];
  const found: DiscrepancyInsert[] = [];
  const parts: WritePart[] = [];
  effects.forEach((e, i) => {
    if (e.type === 'ledger') {
      const posting = postingFor(e, ctx.payment.merchantId);
      const id = ctx.newId('ledger');
      // The source makes a second posting of the same cause fail (UNIQUE).
      const source = sql`'transition:' || (${ctx.transitionId})::text || ${`:${i}`}`;
      const txRow: PgInsertValue<typeof ledgerTransactions> = { id, paymentId: ctx.payment.id, kind: posting.kind, source, description: e.captureId ?? e.refundId ?? null, attemptId: e.attemptId ?? null, createdAt: ctx.now };
      parts.push({ name: `${prefix}_lt${i}`, body: tx.insert(ledgerTransactions).values(txRow).getSQL() });
      const lines = posting.lines.map((l) => ({ account: l.account, direction: l.direction, amount: l.amount, currency: l.currency, transactionId: id }));
      parts.push({ name: `${prefix}_le${i}`, body: tx.insert(ledgerEntries).values(lines).getSQL() });
    } else if (e.type === 'discrepancy') {
      // Keyed like reconciliation's findings (kind:payment:attempt:subject): one open row per key.
      const dedupeKey = e.subject === undefined ? null : `${e.kind}:${ctx.payment.id}:${e.attemptId ?? '-'}:${e.subject}`;
      found.push({ id: ctx.newId('discrepancy'), paymentId: ctx.payment.id, attemptId: e.attemptId ?? null, kind: e.kind, detail: e.detail, createdAt: ctx.now, dedupeKey });
    } else if (e.type === 'discrepancy_settled') {
      // The provider answered what an open *_unresolved row asked: resolved with its answer, by its
      // resolution row (the audit trail; the trigger derives the status), by 'gateway'. None open: no row.
      const key = `${e.kind}:${ctx.payment.id}:${e.attemptId}:${e.subject}`;
      parts.push({
        name: `${prefix}_dss${i}`,
        body: sql`INSERT INTO discrepancy_resolutions (discrepancy_id, at, operator, note)
          SELECT id, ${ctx.now.toISOString()}::timestamptz, 'gateway', ${e.resolution} FROM discrepancies WHERE dedupe_key = ${key} AND status = 'open'`,
      });
    } else if (e.type === 'merchant_event') {
      // The event describes the payment as it was at this version, not as it is when delivered.
      parts.push(...merchantEventParts(`${prefix}_me${i}`, { ...e, payment: ctx.payment }, ctx.now).parts);
    } else {
      rows.push(outboxRow(e, ctx.payment, ctx.transitionId, ctx.now));
    }
  });
  // A parked operation swept again finds the same condition: its open row already says so.
  if (found.length > 0) parts.push({ name: `${prefix}_dsc`, body: tx.insert(discrepancies).values(found).onConflictDoNothing().getSQL() });
  if (rows.length > 0) parts.push({ name: `${prefix}_ob`, body: tx.insert(outbox).values(rows).returning({ id: outbox.id }).getSQL(), outboxIds: true });
  return parts;
}
