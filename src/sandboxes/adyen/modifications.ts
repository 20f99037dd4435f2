// Modifications: every one answers 201 `received` and its result goes out later as a notification
// (CAPTURE, CANCELLATION, REFUND, CANCEL_OR_REFUND, TECHNICAL_CANCEL with success true|false).
// Only an amount that cannot be right is refused synchronously (422), as Adyen validates it.

import type { AdyenOperationContext, JsonObject } from './context.ts';
import { checkMerchantAccount, optionalString, requiredAmount, requiredString } from './context.ts';
import { invalidAmount, unknownPspReference } from './errors.ts';
import { eventDate } from './notifications.ts';
import type { AdyenAmount, ModificationKind, ModificationRecord, PaymentRecord } from './state.ts';
import { AWAITING_SHOPPER } from './state.ts';

export interface ModificationResult {
  readonly status: 201;
  readonly body: Record<string, unknown>;
}

const EVENT_CODES: Readonly<Record<ModificationKind, string>> = {
  capture: 'CAPTURE',
  cancel: 'CANCELLATION',
  refund: 'REFUND',
  reversal: 'CANCEL_OR_REFUND',
  technical_cancel: 'TECHNICAL_CANCEL',
};

function paymentOf(ctx: AdyenOperationContext, psp: string): PaymentRecord {
  const p = ctx.state.payments.get(psp);
  if (p === undefined) throw unknownPspReference();
  return p;
}

interface Settled {
  readonly success: boolean;
  readonly reason: string;
  readonly action?: string;
}

function record(ctx: AdyenOperationContext, p: PaymentRecord | undefined, kind: ModificationKind, amount: AdyenAmount, reference: string | null, outcome: Settled, psp = ctx.newPspReference()): ModificationRecord {
  const mod: ModificationRecord = { pspReference: psp, kind, amount, reference, createdMs: ctx.nowMs, success: outcome.success, reason: outcome.reason };
  p?.modifications.push(mod);
  ctx.notify({
    ...(outcome.action !== undefined && { additionalData: { 'modification.action': outcome.action } }),
    amount,
    eventCode: EVENT_CODES[kind],
    eventDate: eventDate(ctx.nowMs),
    merchantAccountCode: ctx.merchantAccount,
    // A modification's reference names it in the notification; without one, the payment's does.
    merchantReference: kind === 'technical_cancel' ? (reference ?? '') : (reference ?? p?.merchantReference ?? ''),
    ...(p !== undefined && { originalReference: p.pspReference }),
    paymentMethod: p?.paymentMethod ?? 'visa',
    pspReference: mod.pspReference,
    reason: outcome.reason,
    success: outcome.success ? 'true' : 'false',
  });
  return mod;
}

function received(ctx: AdyenOperationContext, p: PaymentRecord, mod: ModificationRecord, withAmount: boolean): ModificationResult {
  return {
    status: 201,
    body: {
      ...(withAmount && { amount: mod.amount }),
      merchantAccount: ctx.merchantAccount,
      paymentPspReference: p.pspReference,
      pspReference: mod.pspReference,
      ...(mod.reference !== null && { reference: mod.reference }),
      status: 'received',
    },
  };
}

/** Still waiting for the shopper (3-D Secure): cancelling it means /payments/details can never authorise it. */
function awaitingShopper(p: PaymentRecord): boolean {
  return p.authentication !== undefined && p.authentication.detailsAtMs === null && AWAITING_SHOPPER.has(p.resultCode);
}

function cancelAuthorisation(ctx: AdyenOperationContext, p: PaymentRecord): Settled {
  if (awaitingShopper(p)) {
    p.cancelled = true;
    return { success: true, reason: '' };
  }
  if (p.authorised === 0) return { success: false, reason: `Payment is ${p.resultCode}, nothing to cancel` };
  if (p.cancelled) return { success: true, reason: '' };
  // With multiple partial captures a cancel after a capture releases what is left of the authorization.
  if (p.captured > 0 && ctx.multicapture === true && !p.captureClosed) {
    p.captureClosed = true;
    p.remainderCancelled = true;
    return { success: true, reason: '' };
  }
  if (p.captured > 0 && p.remainderCancelled === true) return { success: false, reason: ALREADY_CANCELLED };
  if (p.captured > 0) return { success: false, reason: ALREADY_CAPTURED };
  p.cancelled = true;
  ctx.state.book({ bookedMs: ctx.nowMs, type: 'Cancelled', payment: p, modificationReference: p.pspReference, amount: 0 });
  return { success: true, reason: '' };
}

function refundCaptured(ctx: AdyenOperationContext, p: PaymentRecord, value: number, modificationPsp: string): Settled {
  if (p.captured === 0) return { success: false, reason: "Transaction hasn't been captured, refund not possible" };
  if (value > p.captured - p.refunded) return { success: false, reason: 'Insufficient balance on payment' };
  p.refunded += value;
  ctx.state.book({ bookedMs: ctx.nowMs, type: 'Refunded', payment: p, modificationReference: modificationPsp, amount: value });
  return { success: true, reason: '' };
}

/**
 * A second capture or cancel of a payment it already applies to: received, and refused by
 * notification. Adyen documents no code or text for it; the connector matches these exact texts
 * (src/connectors/adyen/modification-reasons.ts keeps its own copy).
 */
const ALREADY_CAPTURED = 'Payment has already been captured';
const ALREADY_CANCELLED = 'Payment has already been cancelled';

/** Fault release_fail_later: received, not performed, and the notification says so. */
const FAILED_BY_FAULT: Settled = { success: false, reason: 'Modification failed (sandbox fault)' };

export function capturePayment(ctx: AdyenOperationContext, psp: string, body: JsonObject): ModificationResult {
  checkMerchantAccount(ctx, body);
  const p = paymentOf(ctx, psp);
  const amount = requiredAmount(body);
  if (amount.currency !== p.amount.currency) throw invalidAmount(`currency ${amount.currency} differs from the payment's ${p.amount.currency}`);
  // Captured already (this account captures once): received, and the notification says so.
  if (p.captured > 0 && p.captureClosed && !p.cancelled) {
    const refused = record(ctx, p, 'capture', amount, optionalString(body, 'reference'), { success: false, reason: ALREADY_CAPTURED });
    return received(ctx, p, refused, true);
  }
  const capturable = ctx.state.capturable(p);
  if (amount.value > capturable) throw invalidAmount(`${amount.value} exceeds the capturable ${capturable}`);
  p.captured += amount.value;
  // Without multiple partial captures the remainder is cancelled; with them it stays until a cancel (or all is captured).
  p.captureClosed = ctx.multicapture !== true || p.captured === p.authorised;
  const mod = record(ctx, p, 'capture', amount, optionalString(body, 'reference'), { success: true, reason: '' });
  ctx.state.book({ bookedMs: ctx.nowMs, type: 'Settled', payment: p, modificationReference: mod.pspReference, amount: amount.value });
  return received(ctx, p, mod, true);
}

export function cancelPayment(ctx: AdyenOperationContext, psp: string, body: JsonObject): ModificationResult {
  checkMerchantAccount(ctx, body);
  const p = paymentOf(ctx, psp);
  // Cancelled already (a cancel, or a technical cancel): this cancel is refused by notification.
  const already = p.cancelled && !awaitingShopper(p) && p.authorised > 0;
  const outcome = ctx.failModification === true ? FAILED_BY_FAULT : already ? { success: false, reason: ALREADY_CANCELLED } : cancelAuthorisation(ctx, p);
  const mod = record(ctx, p, 'cancel', p.amount, optionalString(body, 'reference'), outcome);
  return received(ctx, p, mod, false);
}

export function refundPayment(ctx: AdyenOperationContext, psp: string, body: JsonObject): ModificationResult {
  checkMerchantAccount(ctx, body);
  const p = paymentOf(ctx, psp);
  const amount = requiredAmount(body);
  if (amount.currency !== p.amount.currency) throw invalidAmount(`currency ${amount.currency} differs from the payment's ${p.amount.currency}`);
  const refundPsp = ctx.newPspReference();
  const outcome = ctx.failModification === true ? FAILED_BY_FAULT : refundCaptured(ctx, p, amount.value, refundPsp);
  const mod = record(ctx, p, 'refund', amount, optionalString(body, 'reference'), outcome, refundPsp);
  return received(ctx, p, mod, true);
}

export function reversePayment(ctx: AdyenOperationContext, psp: string, body: JsonObject): ModificationResult {
  checkMerchantAccount(ctx, body);
  const p = paymentOf(ctx, psp);
  const refund = p.captured > 0;
  const reversalPsp = ctx.newPspReference();
  const outcome = refund ? refundCaptured(ctx, p, p.captured - p.refunded, reversalPsp) : cancelAuthorisation(ctx, p);
  const mod = record(ctx, p, 'reversal', p.amount, optionalString(body, 'reference'), { ...outcome, action: refund ? 'refund' : 'cancel' }, reversalPsp);
  return received(ctx, p, mod, false);
}

/** POST /cancels: cancel by our own payment reference, remembered so a later /payments with it is refused. */
export function technicalCancel(ctx: AdyenOperationContext, body: JsonObject): ModificationResult {
  const merchantAccount = checkMerchantAccount(ctx, body);
  const paymentReference = requiredString(body, 'paymentReference');
  const reference = optionalString(body, 'reference');
  const p = ctx.state.latestByReference(paymentReference);
  const outcome = p === undefined || (p.authorised === 0 && !awaitingShopper(p)) ? { success: true, reason: '' } : cancelAuthorisation(ctx, p);
  // The notification names the payment by its reference, as in Adyen's TECHNICAL_CANCEL example.
  const mod = record(ctx, p, 'technical_cancel', p?.amount ?? { value: 0, currency: 'EUR' }, paymentReference, outcome);
  if (!ctx.state.fencedReferences.has(paymentReference)) ctx.state.fencedReferences.set(paymentReference, mod.pspReference);
  return {
    status: 201,
    body: { merchantAccount, paymentReference, pspReference: mod.pspReference, ...(reference !== null && { reference }), status: 'received' },
  };
}
