// Stripe's documented test PaymentMethods (docs.stripe.com/testing) and what each one does on confirm.

export type TestCardBehaviour =
  | { readonly kind: 'approve' }
  /** Approves only part of the amount (sandbox-only PM: stripe@23.1 has no partial-authorization option). */
  | { readonly kind: 'partial'; readonly fraction: { readonly numerator: number; readonly denominator: number } }
  | { readonly kind: 'decline'; readonly code: string; readonly declineCode: string | null; readonly message: string }
  /**
   * The issuer asks for customer authentication (3D Secure) before it authorizes; `then`: what the
   * issuer answers once the customer completed it (absent: approves).
   */
  | { readonly kind: 'authenticate'; readonly then?: TestCardBehaviour };

/** Stripe's card brands (PaymentMethod.card.brand). */
export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'diners' | 'jcb' | 'unionpay' | 'unknown';

/**
 * What the sandbox keeps of a card, on a charge or a PaymentIntent: never its number or code.
 * Expiry and fingerprint are absent for the test PaymentMethods (rendered as 12/2034).
 */
export interface SandboxCard {
  readonly id: string;
  readonly brand: CardBrand;
  readonly last4: string;
  readonly expMonth?: number;
  readonly expYear?: number;
  readonly fingerprint?: string;
  /** False when raw card data came without a code (the charge's cvc_check is then null); absent: checked. */
  readonly cvcChecked?: boolean;
  readonly behaviour: TestCardBehaviour;
}

export interface TestPaymentMethod extends SandboxCard {
  readonly cardNumber: string;
}

const DECLINED = 'Your card was declined.';

function card(id: string, cardNumber: string, brand: TestPaymentMethod['brand'], behaviour: TestCardBehaviour): TestPaymentMethod {
  return { id, cardNumber, brand, last4: cardNumber.slice(-4), behaviour };
}

function decline(code: string, declineCode: string | null, message: string): TestCardBehaviour {
  return { kind: 'decline', code, declineCode, message };
}

export const STRIPE_TEST_PAYMENT_METHODS: readonly TestPaymentMethod[] = [
  card('pm_card_visa', '4242424242424242', 'visa', { kind: 'approve' }),
  card('pm_card_mastercard', '5555555555554444', 'mastercard', { kind: 'approve' }),
  card('pm_card_amex', '378282246310005', 'amex', { kind: 'approve' }),
  // More of docs.stripe.com/testing's approved numbers, for raw card data (payment_method_data[card]).
  card('pm_card_visa_debit', '4000056655665556', 'visa', { kind: 'approve' }),
  card('pm_card_mastercard_debit', '5200828282828210', 'mastercard', { kind: 'approve' }),
  card('pm_card_mastercard_prepaid', '5105105105105100', 'mastercard', { kind: 'approve' }),
  card('pm_card_discover', '6011111111111117', 'discover', { kind: 'approve' }),
  card('pm_card_visa_chargeDeclined', '4000000000000002', 'visa', decline('card_declined', 'generic_decline', DECLINED)),
  card('pm_card_visa_chargeDeclinedInsufficientFunds', '4000000000009995', 'visa', decline('card_declined', 'insufficient_funds', 'Your card has insufficient funds.')),
  card('pm_card_visa_chargeDeclinedLostCard', '4000000000009987', 'visa', decline('card_declined', 'lost_card', DECLINED)),
  card('pm_card_visa_chargeDeclinedStolenCard', '4000000000009979', 'visa', decline('card_declined', 'stolen_card', DECLINED)),
  card(
    'pm_card_visa_chargeDeclinedVelocityLimitExceeded',
    '4000000000006975',
    'visa',
    decline('card_declined', 'card_velocity_exceeded', 'Your card was declined for making repeated attempts too frequently or exceeding its amount limit.'),
  ),
  // Stripe's table lists no decline_code for these three: the error code says it all.
  card('pm_card_chargeDeclinedExpiredCard', '4000000000000069', 'visa', decline('expired_card', null, 'Your card has expired.')),
  card('pm_card_chargeDeclinedIncorrectCvc', '4000000000000127', 'visa', decline('incorrect_cvc', null, "Your card's security code is incorrect.")),
  card(
    'pm_card_chargeDeclinedProcessingError',
    '4000000000000119',
    'visa',
    decline('processing_error', null, 'An error occurred while processing your card. Try again in a little bit.'),
  ),
  // "Always authenticate" (docs.stripe.com/testing#authentication-and-setup): requires_action, or
  // with error_on_requires_action a 402 authentication_required.
  card('pm_card_authenticationRequired', '4000002760003184', 'visa', { kind: 'authenticate' }),
  // "Always authenticate", then declined for insufficient funds once authenticated (docs.stripe.com/testing#regulatory-cards).
  card('pm_card_authenticationRequiredChargeDeclinedInsufficientFunds', '4000008260003178', 'visa', {
    kind: 'authenticate', then: decline('card_declined', 'insufficient_funds', 'Your card has insufficient funds.'),
  }),
  // 3D Secure 2 (docs.stripe.com/testing#three-ds-cards): "3DS Required", always authenticate.
  card('pm_card_threeDSecure2Required', '4000000000003220', 'visa', { kind: 'authenticate' }),
  // "Authenticate unless set up" (docs.stripe.com/testing#authentication-and-setup): a one-off payment authenticates.
  card('pm_card_authenticationRequiredOnSetup', '4000002500003155', 'visa', { kind: 'authenticate' }),
  // Sandbox-only: authorizes half the amount, so connectors meet amount_capturable < amount.
  card('pm_card_visa_partialAuthorization', '4000000000000515', 'visa', { kind: 'partial', fraction: { numerator: 1, denominator: 2 } }),
];

const BY_ID = new Map(STRIPE_TEST_PAYMENT_METHODS.map((pm) => [pm.id, pm]));
const BY_NUMBER = new Map(STRIPE_TEST_PAYMENT_METHODS.map((pm) => [pm.cardNumber, pm]));

export function testPaymentMethod(id: string): TestPaymentMethod | undefined {
  return BY_ID.get(id);
}

/** The documented test card with this number (raw card data, payment_method_data[card][number]). */
export function testPaymentMethodForCard(cardNumber: string): TestPaymentMethod | undefined {
  return BY_NUMBER.get(cardNumber.replace(/\s+/g, ''));
}

/** The card as a charge or PaymentIntent keeps it: the test card's number is left out like any other. */
export function storedCard(card: SandboxCard, id: string = card.id): SandboxCard {
  return {
    id, brand: card.brand, last4: card.last4, behaviour: card.behaviour,
    ...(card.expMonth !== undefined && { expMonth: card.expMonth }),
    ...(card.expYear !== undefined && { expYear: card.expYear }),
    ...(card.fingerprint !== undefined && { fingerprint: card.fingerprint }),
    ...(card.cvcChecked !== undefined && { cvcChecked: card.cvcChecked }),
  };
}
