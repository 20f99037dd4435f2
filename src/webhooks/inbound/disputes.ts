// Disputes (Stripe charge.dispute.*, Adyen dispute event codes) are records against the captured
// payment, ledger postings when money moves at the provider, and merchant events; they never touch
// the payment's state, amounts or version. The provider's lifecycle decides what an event means
// for the dispute as recorded (src/connectors/<type>/dispute-lifecycle.ts), src/core/disputes.ts
// what it books and tells the merchant; this writes it, under the dispute row's lock, in the
// transaction that settles the inbox row.

import { and, eq, inArray, sql } from 'drizzle-orm';
import { adyenDisputeStep } from '../../connectors/adyen/dispute-lifecycle.ts';
import { stripeDisputeStep } from '../../connectors/stripe/dispute-lifecycle.ts';
import { disputeSource, isFinalDispute, planDispute } from '../../core/disputes.ts';
import type { DisputeRecordState, DisputeStatus, DisputeStep } from '../../core/disputes.ts';
import type { IdKind } from '../../core/ids.ts';
import type { Payment } from '../../core/payment.ts';
import { writePosting } from '../../ledger/postings.ts';
import type { DbOrTx } from '../../store/db.ts';
import { disputes, ledgerTransactions } from '../../store/schema.ts';
import type { DisputeView, MerchantEventRowPayload } from '../../resources/event-body.ts';
import { recordMerchantEvent } from '../../store/merchant-event-record.ts';
import type { DisputeEvent } from './event-mapping.ts';

export interface DisputeResult {
  readonly applied: boolean;
  readonly reason: string;
}

function stepOf(current: DisputeRecordState | null, e: DisputeEvent, amount: number, currency: string): DisputeStep {
  const f = e.fact;
  return f.provider === 'adyen' ? adyenDisputeStep(current, f.eventCode, f.disputeStatus, amount, currency) : stripeDisputeStep(current, f.status, f.balanceTransactions);
}

export async function applyDisputeEvent(tx: DbOrTx, payment: Payment, account: string, e: DisputeEvent, now: Date, newId: (k: IdKind) => string): Promise<DisputeResult> {
  // Events of one dispute are processed by concurrent workers in any order: one at a time per
  // dispute (the row lock cannot serialize the first two, before the row exists).
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`dispute:${account}:${e.disputeRef}`}, 0))`);
  const where = and(eq(disputes.connector, account), eq(disputes.providerRef, e.disputeRef));
  const [existing] = await tx.select().from(disputes).where(where).for('update');
  if (existing !== undefined && existing.paymentId !== payment.id) return { applied: false, reason: `${e.rawType}: dispute ${existing.id} belongs to payment ${existing.paymentId}, not ${payment.id}` };
  const current: DisputeRecordState | null = existing === undefined ? null : { status: existing.status as DisputeStatus, amount: existing.amount, currency: existing.currency, withdrawn: existing.withdrawn, stage: existing.stage, defenseEnded: existing.defenseEnded };
  if (current !== null && isFinalDispute(current.status)) return { applied: false, reason: `${e.rawType}: dispute ${existing!.id} is already ${current.status}` };

  // A notification without an amount (or currency) disputes what was captured.
  const amount = e.amount > 0 ? e.amount : payment.amountCaptured;
  const currency = /^[A-Z]{3}$/.test(e.currency) ? e.currency : payment.currency;
  const step = stepOf(current, e, amount, currency);
  if (step.kind === 'stale') return { applied: false, reason: `${e.rawType}: ${step.reason}` };

  const id = existing?.id ?? newId('dispute');
  // Which of the step's movements are booked already: by their sources (the UNIQUE index), not a scan.
  const candidates = [...step.moves.flatMap((m) => [disputeSource(id, m.key), `${disputeSource(id, m.key)}:fee`]), disputeSource(id, 'lost')];
  const posted = existing === undefined
    ? new Set<string>()
    : new Set((await tx.select({ source: ledgerTransactions.source }).from(ledgerTransactions).where(inArray(ledgerTransactions.source, candidates))).map((r) => r.source));
  // The steps of one dispute are told in the order they are applied: never before the last one told.
  const at = existing === undefined ? now : new Date(Math.max(now.getTime(), existing.updatedAt.getTime() + 1));
  const plan = planDispute(current, { amount, currency }, step, { disputeId: id, connector: account, merchantId: payment.merchantId }, posted);
  const advanced = step.behind !== true;
  const providerStatus = advanced ? plan.providerStatus : (existing?.providerStatus ?? plan.providerStatus);
  const fees = (existing?.fees ?? 0) + plan.fees;
  // The provider's due date for the merchant's answer, where its event carries one (a later stage may move it).
  const dueBy = e.evidenceDueBy === undefined || e.evidenceDueBy === null ? null : new Date(e.evidenceDueBy);
  if (existing === undefined) {
    await tx.insert(disputes).values({
      id, paymentId: payment.id, merchantId: payment.merchantId, connector: account, providerRef: e.disputeRef, amount, currency, status: plan.next.status, reason: e.reason, withdrawn: plan.next.withdrawn,
      stage: plan.next.stage, defenseEnded: plan.next.defenseEnded, providerStatus, fees, evidenceDueBy: dueBy, createdAt: at, updatedAt: new Date(at.getTime() + Math.max(0, plan.events.length - 1)),
    });
  } else {
    await tx.update(disputes).set({
      status: plan.next.status, withdrawn: plan.next.withdrawn, stage: plan.next.stage, defenseEnded: plan.next.defenseEnded, providerStatus, fees,
      ...(dueBy !== null && advanced && { evidenceDueBy: dueBy }), updatedAt: new Date(at.getTime() + Math.max(0, plan.events.length - 1)),
    }).where(eq(disputes.id, id));
  }
  // The money that moved, in this same transaction; each movement once (its source is unique).
  for (const p of plan.postings) {
    await writePosting(tx, p.posting, { id: newId('ledger'), paymentId: payment.id, source: p.source, description: `${id} ${e.rawType}`, createdAt: at });
  }
  const view: DisputeView = { id, status: plan.next.status, amount: plan.next.amount, currency: plan.next.currency, withdrawn: plan.next.withdrawn, reason: e.reason ?? existing?.reason ?? null, provider_reference: e.disputeRef, provider_status: providerStatus };
  // One merchant event per step; their deliveries' jobs are published by the caller's kick after COMMIT.
  // A millisecond apart, so the steps of one event (opened, funds_withdrawn, lost) list in order.
  for (const [i, event] of plan.events.entries()) {
    const payload: MerchantEventRowPayload = { type: 'merchant_event', event, dispute: view, payment };
    await recordMerchantEvent(tx, payload, new Date(at.getTime() + i));
  }
  const changed = existing === undefined || plan.postings.length > 0 || plan.events.length > 0 || plan.next.status !== current?.status || providerStatus !== existing.providerStatus;
  return { applied: changed, reason: `${e.rawType}: dispute ${id} ${plan.next.status} (${providerStatus}), withdrawn ${plan.next.withdrawn} ${plan.next.currency}${plan.events.length > 0 ? `; ${plan.events.join(', ')}` : ''}` };
}
