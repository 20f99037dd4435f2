// Disputes (Stripe charge.dispute.*, Adyen CHARGEBACK…) are records against the captured payment
// and merchant events; they never touch the payment's state, amounts or version. A dispute moves
// opened -> won | lost; a repeat, or an opening after the close, is ignored with its reason.

import { and, eq } from 'drizzle-orm';
import type { IdKind } from '../../core/ids.ts';
import type { Payment } from '../../core/payment.ts';
import { asDisputeStatus, postDisputeChange } from '../../ledger/postings.ts';
import type { DbOrTx } from '../../store/db.ts';
import { disputes } from '../../store/schema.ts';
import type { DisputeView, MerchantEventRowPayload } from '../../resources/event-body.ts';
import { recordMerchantEvent } from '../../store/merchant-event-record.ts';
import type { DisputeEvent } from './event-mapping.ts';

type DisputeStatus = DisputeView['status'];

const STATUS_OF: Readonly<Record<DisputeEvent['kind'], DisputeStatus>> = { dispute_opened: 'opened', dispute_won: 'won', dispute_lost: 'lost' };

export interface DisputeResult {
  readonly applied: boolean;
  readonly reason: string;
}

export async function applyDisputeEvent(tx: DbOrTx, payment: Payment, account: string, e: DisputeEvent, now: Date, newId: (k: IdKind) => string): Promise<DisputeResult> {
  const status = STATUS_OF[e.kind];
  const where = and(eq(disputes.connector, account), eq(disputes.providerRef, e.disputeRef));
  const [existing] = await tx.select().from(disputes).where(where).for('update');
  if (existing !== undefined && existing.status === status) return { applied: false, reason: `${e.rawType}: dispute ${existing.id} is already ${status}` };
  if (existing !== undefined && existing.status !== 'opened') return { applied: false, reason: `${e.rawType}: dispute ${existing.id} already closed as ${existing.status}` };

  // A notification without an amount (or currency) disputes what was captured.
  const amount = e.amount > 0 ? e.amount : payment.amountCaptured;
  const currency = /^[A-Z]{3}$/.test(e.currency) ? e.currency : payment.currency;
  let id: string;
  if (existing === undefined) {
    id = newId('dispute');
    await tx.insert(disputes).values({ id, paymentId: payment.id, connector: account, providerRef: e.disputeRef, amount, currency, status, reason: e.reason, createdAt: now, updatedAt: now });
  } else {
    id = existing.id;
    await tx.update(disputes).set({ status, updatedAt: now }).where(eq(disputes.id, id));
  }
  // Funds withdrawn / reinstated / written off, in this same transaction (src/core/ledger.ts).
  const disputed = existing === undefined ? { amount, currency } : { amount: existing.amount, currency: existing.currency };
  await postDisputeChange(tx, { disputeId: id, paymentId: payment.id, merchantId: payment.merchantId, connector: account, from: asDisputeStatus(existing?.status), to: status, ...disputed, now, newId: () => newId('ledger') });
  const view: DisputeView = { id, status, amount, currency, reason: e.reason ?? existing?.reason ?? null, provider_reference: e.disputeRef };
  const payload: MerchantEventRowPayload = { type: 'merchant_event', event: `dispute.${status}`, dispute: view, payment };
  // Its deliveries' jobs are published by the caller's kick after COMMIT.
  await recordMerchantEvent(tx, payload, now);
  return { applied: true, reason: `${e.rawType}: dispute ${id} ${status}` };
}
