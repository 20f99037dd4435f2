// Pure translation between the gateway's requests and Adyen's Checkout v72 objects. No I/O.
// Amounts: Adyen takes minor units in its own exponents ({value, currency}), which differ from
// ISO 4217's for some currencies; currencies.ts converts.

import type { NotSent } from '../../core/outcome.ts';
import { assertNever } from '../../core/states.ts';
import type { AuthorizeRequest, CaptureRequest, ConnectorCard, PaymentMethodInput, PaymentToken, RefundRequest } from '../contract.ts';
import { testCardScenario } from '../test-cards.ts';
import type { TestCardScenario } from '../test-cards.ts';
import { toAdyenValue } from './currencies.ts';
import type { AdyenTypes } from './library.ts';

export interface AdyenAmount {
  readonly value: number;
  readonly currency: string;
}

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly outcome: NotSent };

function refused(detail: string): { ok: false; outcome: NotSent } {
  return { ok: false, outcome: { kind: 'not_sent', reason: 'local_validation', detail } };
}

/** Gateway minor units -> Adyen's amount; refused before sending when Adyen's decimals cannot express it. */
export function toAdyenAmount(amount: number, currency: string): Checked<AdyenAmount> {
  const wire = toAdyenValue(amount, currency);
  if (!wire.ok) return refused(wire.problem);
  return { ok: true, value: { value: wire.value, currency } };
}

/** Adyen test fields reproducing a gateway test-card scenario: a test card and a holder-name trigger. */
export function adyenTestCard(scenario: TestCardScenario): { holderName: string; cardNumber?: string; additionalData?: Record<string, string> } {
  switch (scenario) {
    case 'approved': return { holderName: 'Switchyard Test' };
    case 'generic_decline': return { holderName: 'DECLINED' };
    case 'insufficient_funds': return { holderName: 'NOT_ENOUGH_BALANCE' };
    case 'stolen_card': return { holderName: 'BLOCK_CARD' };
    case 'lost_card': return { holderName: 'BLOCK_CARD' };
    case 'expired_card': return { holderName: 'CARD_EXPIRED' };
    // No holder name for a CVC decline: the acquirer response code 24 (CVC Declined) is requested instead.
    case 'incorrect_cvc': return { holderName: 'Switchyard Test', additionalData: { RequestedTestAcquirerResponseCode: '24' } };
    case 'processing_error': return { holderName: 'ERROR' };
    // The Adyen sandbox knows no partial approval: this card is approved in full there.
    case 'partial_authorization': return { holderName: 'Switchyard Test' };
    // No holder name asks for 3-D Secure: the card number does (the Adyen sandbox's 3-D Secure test cards, docs/sandbox.md).
    case 'authentication_challenge': return { holderName: 'Switchyard Test', cardNumber: '4000002760003184' };
    case 'authentication_then_insufficient_funds': return { holderName: 'Switchyard Test', cardNumber: '4000008260003178' };
    default: return assertNever(scenario, 'test card scenario');
  }
}

export interface ResolvedMethod {
  readonly paymentMethod: AdyenTypes.checkout.PaymentRequestPaymentMethod;
  readonly additionalData: Record<string, string>;
  /** A stored payment method's shopper: Adyen finds the token only under it. */
  readonly shopperReference?: string;
}

/** Adyen's documented minimum for shopperReference (Checkout v72). */
const MIN_SHOPPER_REFERENCE = 3;

/**
 * What an Adyen token lacks, or null. Adyen's tokens are stored payment methods, found only under
 * their shopper: {stored_payment_method_id, shopper_reference}. A bare string names no shopper, so
 * live Adyen would refuse it (422 "Required field 'shopperReference' is not provided.").
 */
export function adyenTokenProblem(token: PaymentToken): string | null {
  const shape = 'an Adyen token is {stored_payment_method_id, shopper_reference}';
  if (typeof token === 'string') return `${shape}: Adyen finds a stored payment method only under its shopper`;
  if (token.payment_method !== undefined || token.customer !== undefined) return `${shape}, not Stripe's payment_method / customer`;
  if (token.stored_payment_method_id === undefined) return `${shape}: stored_payment_method_id is missing`;
  if (token.shopper_reference === undefined) return `${shape}: shopper_reference is missing`;
  if (token.shopper_reference.length < MIN_SHOPPER_REFERENCE) return `shopper_reference must be at least ${MIN_SHOPPER_REFERENCE} characters (Adyen's minimum)`;
  return null;
}

/**
 * A vaulted card as raw card data (Checkout v72 CardDetails: number, expiryMonth "03", expiryYear
 * "2030", cvc only while the vault still has it, holderName when known). Adyen takes it only from an
 * API credential allowed raw card data (PCI-compliant accounts). Deterministic in the card, so a
 * same-key resend is the same request.
 */
export function rawCardDetails(card: ConnectorCard): AdyenTypes.checkout.CardDetails {
  return {
    type: 'scheme' as AdyenTypes.checkout.CardDetails.TypeEnum,
    number: card.number,
    expiryMonth: String(card.expMonth).padStart(2, '0'),
    expiryYear: String(card.expYear),
    ...(card.cvc === null ? {} : { cvc: card.cvc }),
    ...(card.holderName === null ? {} : { holderName: card.holderName }),
  };
}

/** A vaulted card goes as raw card data; a stored method id passes through; a test card is translated, and only for a sandbox account. */
export function resolvePaymentMethod(input: PaymentMethodInput, sandbox: boolean): Checked<ResolvedMethod> {
  if (input.card !== undefined) return { ok: true, value: { paymentMethod: rawCardDetails(input.card), additionalData: {} } };
  if (input.testCard !== undefined) {
    if (!sandbox) return refused('test cards are accepted only by sandbox accounts');
    const scenario = testCardScenario(input.testCard);
    if (scenario === null) return refused('not one of the gateway test cards');
    const t = adyenTestCard(scenario);
    return {
      ok: true,
      value: {
        paymentMethod: {
          type: 'scheme',
          encryptedCardNumber: `test_${t.cardNumber ?? '4111111111111111'}`,
          encryptedExpiryMonth: 'test_03',
          encryptedExpiryYear: 'test_2030',
          encryptedSecurityCode: 'test_737',
          holderName: t.holderName,
        } as AdyenTypes.checkout.CardDetails,
        additionalData: t.additionalData ?? {},
      },
    };
  }
  if (input.token !== undefined) {
    const problem = adyenTokenProblem(input.token);
    if (problem !== null || typeof input.token === 'string') return refused(problem ?? 'no shopper');
    const { stored_payment_method_id: id, shopper_reference: shopper } = input.token;
    return { ok: true, value: { paymentMethod: { type: 'scheme', storedPaymentMethodId: id } as AdyenTypes.checkout.CardDetails, additionalData: {}, shopperReference: shopper! } };
  }
  return refused('no payment method: neither token nor testCard');
}

export function paymentRequest(req: AuthorizeRequest, amount: AdyenAmount, method: ResolvedMethod, merchantAccount: string, returnUrl: string): AdyenTypes.checkout.PaymentRequest {
  const additionalData: Record<string, string> = { ...method.additionalData };
  // A string field: "true" holds the authorization until we capture it (additionalDataCommon.manualCapture).
  if (req.captureMethod === 'manual') additionalData['manualCapture'] = 'true';
  return {
    amount,
    merchantAccount,
    paymentMethod: method.paymentMethod,
    reference: req.attemptId,
    returnUrl: req.authentication?.returnUrl ?? returnUrl,
    shopperInteraction: 'Ecommerce' as AdyenTypes.checkout.PaymentRequest.ShopperInteractionEnum,
    // A stored card with the customer present: Ecommerce + CardOnFile (ContAuth is for merchant-initiated payments).
    ...(method.shopperReference !== undefined && {
      shopperReference: method.shopperReference,
      recurringProcessingModel: 'CardOnFile' as AdyenTypes.checkout.PaymentRequest.RecurringProcessingModelEnum,
    }),
    metadata: { payment_id: req.paymentId, attempt_id: req.attemptId },
    ...(Object.keys(additionalData).length > 0 && { additionalData }),
    ...authenticationFields(req),
  };
}

/**
 * Web 3-D Secure by redirect (v72): nativeThreeDS disabled (the gateway presents no JavaScript
 * component), channel Web, the shopper's origin and browser; attemptAuthentication always for a
 * challenge or the step-up retry, never for authentication: none. Nothing for a payment without a
 * return URL but the refusal of authentication it cannot present.
 */
export function authenticationFields(req: AuthorizeRequest): Partial<AdyenTypes.checkout.PaymentRequest> {
  const auth = req.authentication;
  if (auth === undefined) return {};
  if (auth.mode === 'none' || auth.returnUrl === null) {
    return { authenticationData: { attemptAuthentication: 'never' as AdyenTypes.checkout.AuthenticationData.AttemptAuthenticationEnum } };
  }
  const always = auth.forced || auth.mode === 'challenge';
  const b = auth.browserInfo;
  return {
    authenticationData: {
      ...(always ? { attemptAuthentication: 'always' as AdyenTypes.checkout.AuthenticationData.AttemptAuthenticationEnum } : {}),
      threeDSRequestData: { nativeThreeDS: 'disabled' as AdyenTypes.checkout.ThreeDSRequestData.NativeThreeDSEnum },
    },
    channel: 'Web' as AdyenTypes.checkout.PaymentRequest.ChannelEnum,
    ...(auth.origin === null ? {} : { origin: auth.origin }),
    ...(b === null ? {} : {
      browserInfo: {
        userAgent: b.userAgent, acceptHeader: b.acceptHeader, language: b.language, colorDepth: b.colorDepth,
        screenHeight: b.screenHeight, screenWidth: b.screenWidth, timeZoneOffset: b.timeZoneOffset, javaEnabled: b.javaEnabled,
        ...(b.javaScriptEnabled === undefined ? {} : { javaScriptEnabled: b.javaScriptEnabled }),
      },
    }),
    ...(auth.shopperIp === null ? {} : { shopperIP: auth.shopperIp }),
  };
}

/** Modifications carry the attempt id as their reference, so every notification names the attempt. */
export function captureRequest(req: CaptureRequest, amount: AdyenAmount, merchantAccount: string): AdyenTypes.checkout.PaymentCaptureRequest {
  return { amount, merchantAccount, reference: req.attemptId };
}

const REFUND_REASONS: Readonly<Record<string, string>> = { requested_by_customer: 'CUSTOMER REQUEST', duplicate: 'DUPLICATE', fraudulent: 'FRAUD' };

export function refundRequest(req: RefundRequest, amount: AdyenAmount, merchantAccount: string): AdyenTypes.checkout.PaymentRefundRequest {
  const reason = req.reason === null ? undefined : REFUND_REASONS[req.reason];
  return {
    amount,
    merchantAccount,
    reference: req.reference ?? req.attemptId,
    ...(reason !== undefined && { merchantRefundReason: reason as AdyenTypes.checkout.PaymentRefundRequest.MerchantRefundReasonEnum }),
  };
}
