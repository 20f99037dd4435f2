// Pure translation between the gateway's requests and Stripe's wire objects. No I/O, no SDK calls.
// Amounts: the gateway keeps ISO 4217 minor units; Stripe's decimals differ for a few (currencies.ts).

import type Stripe from 'stripe';
import type { NotSent, Unknown } from '../../core/outcome.ts';
import { assertNever } from '../../core/states.ts';
import type {
  CaptureRequest,
  ConnectorCard,
  PaymentMethodInput,
  PaymentToken,
  PrepareRequest,
  ReconciliationRecord,
  RefundRequest,
} from '../contract.ts';
import { testCardScenario } from '../test-cards.ts';
import { withRawCard } from './card-data.ts';
import { fromStripeValue, toStripeValue } from './currencies.ts';
import type { TestCardScenario } from '../test-cards.ts';

export type StripeAmount =
  | { readonly ok: true; readonly amount: number; readonly currency: string }
  | { readonly ok: false; readonly problem: string };

/** Gateway minor units -> Stripe wire amount (Stripe's decimals, currencies.ts) and lower-case currency. Never rounds. */
export function toStripeAmount(amount: number, currency: string): StripeAmount {
  const wire = toStripeValue(amount, currency);
  return wire.ok ? { ok: true, amount: wire.amount, currency: currency.toLowerCase() } : wire;
}

/** Stripe wire amount -> gateway minor units; null when the currency or amount is not one we know. */
export function fromStripeAmount(wireAmount: number, wireCurrency: string): { amount: number; currency: string } | null {
  const currency = wireCurrency.toUpperCase();
  const back = fromStripeValue(wireAmount, currency);
  return back.ok ? { amount: back.amount, currency } : null;
}

/** The Stripe test PaymentMethod that reproduces a gateway test-card scenario. */
export function stripeTestPaymentMethod(scenario: TestCardScenario): string {
  switch (scenario) {
    case 'approved': return 'pm_card_visa';
    case 'generic_decline': return 'pm_card_visa_chargeDeclined';
    case 'insufficient_funds': return 'pm_card_visa_chargeDeclinedInsufficientFunds';
    case 'stolen_card': return 'pm_card_visa_chargeDeclinedStolenCard';
    case 'lost_card': return 'pm_card_visa_chargeDeclinedLostCard';
    case 'expired_card': return 'pm_card_chargeDeclinedExpiredCard';
    case 'incorrect_cvc': return 'pm_card_chargeDeclinedIncorrectCvc';
    case 'processing_error': return 'pm_card_chargeDeclinedProcessingError';
    case 'partial_authorization': return 'pm_card_visa_partialAuthorization';
    case 'authentication_challenge': return 'pm_card_authenticationRequired';
    case 'authentication_then_insufficient_funds': return 'pm_card_authenticationRequiredChargeDeclinedInsufficientFunds';
    default: return assertNever(scenario, 'test card scenario');
  }
}

/**
 * What the PaymentIntent is paid with: a PaymentMethod id (`customer`: the Customer it is attached
 * to, which Stripe requires with it), or a vaulted card sent as raw card data (card-data.ts).
 */
export type PaymentMethodChoice = { readonly paymentMethod: string; readonly customer?: string } | { readonly card: ConnectorCard };
export type ResolvedPaymentMethod = ({ readonly ok: true } & PaymentMethodChoice) | { readonly ok: false; readonly outcome: NotSent };

/** What a Stripe token lacks, or null: a PaymentMethod id, bare or as {payment_method, customer?}. */
export function stripeTokenProblem(token: PaymentToken): string | null {
  if (typeof token === 'string') return null;
  if (token.stored_payment_method_id !== undefined || token.shopper_reference !== undefined) {
    return "a Stripe account takes {payment_method, customer}, not Adyen's stored_payment_method_id / shopper_reference";
  }
  if (token.payment_method === undefined) return 'a Stripe token needs payment_method (pm_…), and customer (cus_…) when the PaymentMethod is attached to one';
  return null;
}

function refused(detail: string): { ok: false; outcome: NotSent } {
  return { ok: false, outcome: { kind: 'not_sent', reason: 'local_validation', detail } };
}

/** A vaulted card goes as raw card data; a token passes through; a test card is translated, and only for a sandbox account. */
export function resolvePaymentMethod(input: PaymentMethodInput, sandbox: boolean): ResolvedPaymentMethod {
  if (input.card !== undefined) return { ok: true, card: input.card };
  if (input.testCard !== undefined) {
    if (!sandbox) return refused('test cards are accepted only by sandbox accounts');
    const scenario = testCardScenario(input.testCard);
    if (scenario === null) return refused('not one of the gateway test cards');
    return { ok: true, paymentMethod: stripeTestPaymentMethod(scenario) };
  }
  if (input.token !== undefined) {
    const problem = stripeTokenProblem(input.token);
    if (problem !== null) return refused(problem);
    const token = typeof input.token === 'string' ? { payment_method: input.token } : input.token;
    const paymentMethod = token.payment_method ?? '';
    if (paymentMethod.length === 0) return refused('no payment method: an empty token');
    // Stripe's magic test PaymentMethods charge nothing real, but a live account must not see them either.
    if (!sandbox && paymentMethod.startsWith('pm_card_')) return refused('Stripe test PaymentMethods are refused on live accounts');
    return { ok: true, paymentMethod, ...(token.customer === undefined ? {} : { customer: token.customer }) };
  }
  return refused('no payment method: neither token nor testCard');
}

/** PaymentIntent create params for `prepare`: no confirm, so no money moves; confirm comes with the auth key. */
export function paymentIntentCreateParams(req: PrepareRequest, wire: { amount: number; currency: string }, pm: PaymentMethodChoice): Stripe.PaymentIntentCreateParams {
  const params: Stripe.PaymentIntentCreateParams = {
    amount: wire.amount,
    currency: wire.currency,
    capture_method: req.captureMethod,
    confirm: false,
    // Cards only and no redirects: a server-side confirm must not need a return_url.
    allowed_payment_method_types: ['card'],
    metadata: { payment_id: req.paymentId, attempt_id: req.attemptId },
  };
  if (req.captureMethod === 'manual') {
    params.payment_method_options = { card: { request_multicapture: 'if_available' } };
  }
  if ('card' in pm) return withRawCard(params, pm.card);
  // A saved card: Stripe charges a PaymentMethod attached to a Customer only with that Customer.
  return { ...params, payment_method: pm.paymentMethod, ...(pm.customer === undefined ? {} : { customer: pm.customer }) };
}

/**
 * The one-call authorization: the same PaymentIntent, confirmed in its create. Deterministic in the
 * request, so a resend with the same key is the same request (Stripe replays the first answer; other
 * parameters would be an idempotency error). `error_on_requires_action` until customer
 * authentication exists (issue 27): a card that needs it is declined `authentication_required`
 * instead of left waiting for a customer nobody will ask.
 */
export function authorizeCreateParams(req: PrepareRequest, wire: { amount: number; currency: string }, pm: PaymentMethodChoice): Stripe.PaymentIntentCreateParams {
  const base = { ...paymentIntentCreateParams(req, wire, pm), confirm: true };
  const auth = req.authentication;
  // Without a page to send the customer back to (or with authentication: none) Stripe must not leave
  // the PaymentIntent waiting for a customer nobody will ask: a card that needs it is declined.
  if (auth === undefined || auth.returnUrl === null || auth.mode === 'none') return { ...base, error_on_requires_action: true };
  const threeDs = auth.forced || auth.mode === 'challenge' ? 'challenge' : undefined;
  return {
    ...base,
    return_url: auth.returnUrl,
    ...(threeDs === undefined ? {} : { payment_method_options: { card: { ...base.payment_method_options?.card, request_three_d_secure: threeDs } } }),
  };
}

export function captureParams(req: CaptureRequest, wireAmount: number): Stripe.PaymentIntentCaptureParams {
  const params: Stripe.PaymentIntentCaptureParams = {
    amount_to_capture: wireAmount,
    metadata: { payment_id: req.paymentId, attempt_id: req.attemptId, capture_id: req.captureId },
  };
  // Sent only when false: true is Stripe's default, and final_capture is refused where multicapture is off.
  if (!req.final) params.final_capture = false;
  return params;
}

export function refundParams(req: RefundRequest, wireAmount: number): Stripe.RefundCreateParams {
  const params: Stripe.RefundCreateParams = {
    payment_intent: req.providerRef,
    amount: wireAmount,
    metadata: { payment_id: req.paymentId, attempt_id: req.attemptId, refund_id: req.refundId },
  };
  const reason = req.reason;
  if (reason === 'duplicate' || reason === 'fraudulent' || reason === 'requested_by_customer') params.reason = reason;
  return params;
}

/**
 * Hyperswitch-style integrity check: the amount and currency Stripe echoes must be what we asked.
 * Returns the Unknown to report, or null when they agree.
 */
export function integrityProblem(
  asked: { readonly amount: number; readonly currency: string },
  echoed: { readonly amount: number; readonly currency: string },
  providerRef: string,
): Unknown | null {
  const back = fromStripeAmount(echoed.amount, echoed.currency);
  if (back !== null && back.amount === asked.amount && back.currency === asked.currency) return null;
  return {
    kind: 'unknown',
    reason: 'integrity_mismatch',
    providerRef,
    alert: true,
    detail: `asked ${asked.amount} ${asked.currency}, Stripe echoed ${echoed.amount} ${echoed.currency}`,
  };
}

export function attemptIdOf(metadata: Stripe.Metadata | null | undefined): string | null {
  const id = metadata?.['attempt_id'];
  return typeof id === 'string' && id.length > 0 ? id : null;
}

/** An expanded or bare reference: Stripe returns either depending on `expand`. */
export function refId(ref: string | { readonly id: string } | null | undefined): string | null {
  if (ref === null || ref === undefined) return null;
  return typeof ref === 'string' ? ref : ref.id;
}

/** Stripe amounts of one PaymentIntent in gateway units; a currency we do not know keeps the wire value. */
function toMinor(wire: number, wireCurrency: string): number {
  return fromStripeAmount(wire, wireCurrency)?.amount ?? wire;
}

/** Refunds that failed after they were made (Stripe's refund.failed: the money came back), when the charge's refunds were listed. */
function refundsReturnedOf(refunds: readonly Stripe.Refund[] | null, currency: string): { refundsReturned?: number } {
  if (refunds === null) return {};
  return { refundsReturned: toMinor(refunds.filter((r) => r.status === 'failed').reduce((sum, r) => sum + r.amount, 0), currency) };
}

/**
 * `fetchedCharge`: the PaymentIntent's latest charge when it was fetched separately (not expanded);
 * `refunds`: every refund of that charge, from GET /v1/refunds?charge=… (charges do not embed them
 * since API version 2022-11-15), null when they were not read.
 */
export function reconciliationRecord(pi: Stripe.PaymentIntent, fetchedCharge: Stripe.Charge | null = null, refunds: readonly Stripe.Refund[] | null = null): ReconciliationRecord {
  const charge = typeof pi.latest_charge === 'object' && pi.latest_charge !== null ? pi.latest_charge : fetchedCharge;
  const captured = toMinor(pi.amount_received, pi.currency);
  const capturable = toMinor(pi.amount_capturable, pi.currency);
  return {
    providerRef: pi.id,
    attemptId: attemptIdOf(pi.metadata),
    status: pi.status,
    amount: toMinor(pi.amount, pi.currency),
    currency: pi.currency.toUpperCase(),
    authorized: captured + capturable,
    captured,
    refunded: charge === null ? 0 : toMinor(charge.amount_refunded, pi.currency),
    ...refundsReturnedOf(refunds, pi.currency),
    createdAt: new Date(pi.created * 1000).toISOString(),
    ...(charge?.disputed === true ? { disputed: true } : {}),
  };
}
