// Things that happen to a payment after Adyen said yes, driven from test code: a capture the
// scheme rejects (CAPTURE_FAILED), a refund that fails or comes back (REFUND_FAILED,
// REFUNDED_REVERSED), chargebacks (disputes.ts runs every dispute path). Each updates the ledger and queues its notification.

import type { AdyenOperationContext } from './context.ts';
import { runDisputeSteps } from './disputes.ts';
import { eventDate } from './notifications.ts';
import type { ModificationKind, ModificationRecord, PaymentRecord } from './state.ts';

function findModification(ctx: AdyenOperationContext, psp: string, kind: ModificationKind): { p: PaymentRecord; mod: ModificationRecord } {
  for (const p of ctx.state.payments.values()) {
    const mod = p.modifications.find((m) => m.pspReference === psp && m.kind === kind);
    if (mod !== undefined) {
      if (mod.success !== true) throw new Error(`${kind} ${psp} did not succeed; only a success can be reversed`);
      return { p, mod };
    }
  }
  throw new Error(`no ${kind} with pspReference ${psp}`);
}

function notifyAbout(ctx: AdyenOperationContext, p: PaymentRecord, eventCode: string, psp: string, value: number, reason: string, original: boolean): void {
  ctx.notify({
    amount: { value, currency: p.amount.currency },
    eventCode,
    eventDate: eventDate(ctx.nowMs),
    merchantAccountCode: p.merchantAccount,
    merchantReference: p.merchantReference,
    ...(original && { originalReference: p.pspReference }),
    paymentMethod: p.paymentMethod,
    pspReference: psp,
    reason,
    success: 'true', // these event codes report that the reversal happened
  });
}

export function failCapture(ctx: AdyenOperationContext, capturePsp: string): void {
  const { p, mod } = findModification(ctx, capturePsp, 'capture');
  p.captured -= mod.amount.value;
  mod.success = false;
  ctx.state.book({ bookedMs: ctx.nowMs, type: 'CaptureFailed', payment: p, modificationReference: capturePsp, amount: mod.amount.value });
  notifyAbout(ctx, p, 'CAPTURE_FAILED', capturePsp, mod.amount.value, 'Capture Failed', true);
}

export function reverseRefund(ctx: AdyenOperationContext, refundPsp: string, eventCode: 'REFUND_FAILED' | 'REFUNDED_REVERSED'): void {
  const { p, mod } = findModification(ctx, refundPsp, 'refund');
  p.refunded -= mod.amount.value;
  mod.success = false;
  ctx.state.book({ bookedMs: ctx.nowMs, type: 'RefundedReversed', payment: p, modificationReference: refundPsp, amount: mod.amount.value });
  notifyAbout(ctx, p, eventCode, refundPsp, mod.amount.value, eventCode === 'REFUND_FAILED' ? 'Refund Failed' : 'Refund returned by the issuer', true);
}

/** A chargeback on the payment (a new dispute), or its reversal (the payment's latest dispute with funds withdrawn). */
export function chargeback(ctx: AdyenOperationContext, paymentPsp: string, reversed: boolean, amount?: number): void {
  if (!reversed) {
    runDisputeSteps(ctx, paymentPsp, null, [{ eventCode: 'CHARGEBACK' }], amount);
    return;
  }
  const open = [...(ctx.state.payments.get(paymentPsp)?.disputes ?? [])].reverse().find((d) => d.withdrawn && !d.final);
  if (open === undefined) throw new Error(`payment ${paymentPsp} has no chargeback to reverse`);
  runDisputeSteps(ctx, paymentPsp, open.pspReference, [{ eventCode: 'CHARGEBACK_REVERSED' }]);
}
