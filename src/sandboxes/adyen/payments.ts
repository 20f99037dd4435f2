// POST /payments: decides the result from the test triggers, records the payment, books an
// automatic capture, and queues the AUTHORISATION notification. A reference fenced by a technical
// cancel is answered Cancelled: the fence holds even when the payment arrives after it — unless the
// account completes authorizations already in flight when the cancel came (inFlightAfterCancel).

import type { AdyenOperationContext, JsonObject } from './context.ts';
import { checkMerchantAccount, isObject, requiredAmount, requiredString } from './context.ts';
import { invalidField, requiredField } from './errors.ts';
import { eventDate } from './notifications.ts';
import type { PaymentRecord } from './state.ts';
import { actionOf, authenticationAsk, DEFAULT_AUTHENTICATION, startAuthentication, withAuthentication } from './authentication.ts';
import { AWAITING_SHOPPER } from './state.ts';
import { checkRawCard, isRawCard } from './raw-card.ts';
import type { RawCard } from './raw-card.ts';
import { refusalText, testDecision } from './test-triggers.ts';
import type { TestDecision } from './test-triggers.ts';

export interface PaymentResult {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

function stringMap(v: unknown): Record<string, string> {
  if (!isObject(v)) return {};
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

/** The test value of an encrypted field (`test_<number>`, what Adyen's test platform takes without client-side encryption). */
function cardNumberOf(pm: JsonObject): string | undefined {
  const raw = pm['encryptedCardNumber'];
  return typeof raw === 'string' ? raw.replace(/^test_/, '') : undefined;
}

/**
 * Live Adyen finds a stored payment method only under its shopper: a storedPaymentMethodId without
 * shopperReference is a 422 (130, "Required field 'shopperReference' is not provided."), and a
 * shopperReference shorter than Adyen's documented 3 characters is refused too.
 */
function checkStoredMethodShopper(body: JsonObject, pm: JsonObject): void {
  if (pm['storedPaymentMethodId'] === undefined) return;
  const shopper = body['shopperReference'];
  if (shopper === undefined) throw requiredField('shopperReference');
  if (typeof shopper !== 'string' || shopper.length < 3 || shopper.length > 256) throw invalidField('shopperReference', 'must be 3 to 256 characters');
}

function fingerprintOf(ctx: AdyenOperationContext): (number: string) => string {
  return ctx.cardFingerprint ?? ((): never => { throw new Error('the sandbox has no card fingerprint key'); });
}

export function createPayment(ctx: AdyenOperationContext, body: JsonObject): PaymentResult {
  const merchantAccount = checkMerchantAccount(ctx, body);
  const amount = requiredAmount(body);
  const reference = requiredString(body, 'reference');
  const returnUrl = requiredString(body, 'returnUrl', 8000);
  const ask = authenticationAsk(body);
  const pm = body['paymentMethod'];
  if (pm === undefined) throw requiredField('paymentMethod');
  if (!isObject(pm)) throw invalidField('paymentMethod', 'must be an object');
  checkStoredMethodShopper(body, pm);
  const additionalData = stringMap(body['additionalData']);
  const holderName = typeof pm['holderName'] === 'string' ? pm['holderName'] : undefined;
  const raw: RawCard | null = isRawCard(pm) ? checkRawCard(pm, { nowMs: ctx.nowMs, enabled: ctx.rawCardData === true, fingerprint: fingerprintOf(ctx) }) : null;

  const fenced = ctx.state.fencedReferences.has(reference) && ctx.outrunsFence !== true;
  const decision: TestDecision = fenced
    ? { resultCode: 'Cancelled' }
    : (raw?.refusal ?? withAuthentication(testDecision({ holderName, requestedAcquirerCode: additionalData['RequestedTestAcquirerResponseCode'], cardNumber: raw?.number ?? cardNumberOf(pm) }), ask));
  const authorised = decision.resultCode === 'Authorised' ? amount.value : 0;
  const manualCapture = additionalData['manualCapture'] === 'true';
  const last4 = raw?.kept.last4 ?? (cardNumberOf(pm) ?? '0000').slice(-4);
  const expiry = raw === null ? '03/2030' : `${raw.kept.expiryMonth}/${raw.kept.expiryYear}`;
  const payment: PaymentRecord = {
    pspReference: ctx.newPspReference(),
    merchantReference: reference,
    merchantAccount,
    amount,
    createdMs: ctx.nowMs,
    manualCapture,
    paymentMethod: raw?.kept.brand ?? 'visa',
    metadata: stringMap(body['metadata']),
    resultCode: decision.resultCode,
    refusalReason: decision.refusalReasonCode !== undefined ? refusalText(decision.refusalReasonCode) : null,
    refusalReasonCode: decision.refusalReasonCode ?? null,
    authorised,
    captured: 0,
    refunded: 0,
    cancelled: false,
    captureClosed: false,
    modifications: [],
    ...(raw !== null && { card: raw.kept }),
  };
  ctx.state.payments.set(payment.pspReference, payment);
  // Waiting for the shopper: nothing authorised, no notification until /payments/details settles it.
  if (decision.resultCode === 'RedirectShopper') {
    startAuthentication(payment, decision, ask, returnUrl, ctx.authentication ?? DEFAULT_AUTHENTICATION);
    return { status: 200, body: paymentResponse(payment, ctx.publicUrl ?? '') };
  }
  if (authorised > 0) ctx.state.book({ bookedMs: ctx.nowMs, type: 'Authorised', payment, modificationReference: payment.pspReference, amount: authorised });
  if (authorised > 0 && !manualCapture) {
    payment.captured = authorised;
    payment.captureClosed = true;
    ctx.state.book({ bookedMs: ctx.nowMs, type: 'Settled', payment, modificationReference: payment.pspReference, amount: authorised });
  }

  if (decision.resultCode !== 'Received') {
    const success = decision.resultCode === 'Authorised';
    ctx.notify({
      amount,
      eventCode: 'AUTHORISATION',
      eventDate: eventDate(ctx.nowMs),
      merchantAccountCode: merchantAccount,
      merchantReference: reference,
      paymentMethod: payment.paymentMethod,
      pspReference: payment.pspReference,
      reason: success ? `123456:${last4}:${expiry}` : (payment.refusalReason ?? decision.resultCode),
      success: success ? 'true' : 'false',
    });
  }
  return { status: 200, body: paymentResponse(payment, ctx.publicUrl ?? '') };
}

function paymentResponse(p: PaymentRecord, publicUrl: string): Record<string, unknown> {
  const authorised = p.resultCode === 'Authorised';
  if (AWAITING_SHOPPER.has(p.resultCode)) {
    // v72: an action answer carries the action, the pspReference and the result code (no amount).
    return { action: actionOf(p, publicUrl), merchantReference: p.merchantReference, pspReference: p.pspReference, resultCode: p.resultCode };
  }
  return {
    additionalData: authorised
      ? { authCode: '123456', refusalReasonRaw: 'AUTHORISED', acquirerCode: 'SwitchyardSandbox', cvcResult: '1 Matches', cvcResultRaw: 'M' }
      : { refusalReasonRaw: p.refusalReason ?? p.resultCode, acquirerCode: 'SwitchyardSandbox' },
    amount: { currency: p.amount.currency, value: authorised ? p.authorised : p.amount.value },
    merchantReference: p.merchantReference,
    pspReference: p.pspReference,
    ...(p.refusalReason !== null && { refusalReason: p.refusalReason }),
    ...(p.refusalReasonCode !== null && { refusalReasonCode: p.refusalReasonCode }),
    resultCode: p.resultCode,
  };
}
