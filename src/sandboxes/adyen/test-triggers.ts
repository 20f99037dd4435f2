// How the sandbox decides a /payments result, as Adyen's test platform does: the holder name
// trigger first, then additionalData.RequestedTestAcquirerResponseCode, then the card number.
// The gateway's test cards (Stripe's numbers) give the same outcome as in the Stripe sandbox.

import { ADYEN_REFUSAL_REASONS } from '../../connectors/adyen/refusal-reasons.ts';
import type { AdyenResultCode } from './state.ts';

export interface TestDecision {
  readonly resultCode: AdyenResultCode;
  /** For Refused / Error. */
  readonly refusalReasonCode?: string;
  /** The issuer asks for 3-D Secure first (authentication.ts); afterwards it approves, or refuses with this code. */
  readonly authenticate?: { readonly thenRefusalCode: string | null };
}

const AUTHORISED: TestDecision = { resultCode: 'Authorised' };
const refused = (code: string): TestDecision => ({ resultCode: 'Refused', refusalReasonCode: code });

/** docs.adyen.com/development-resources/testing/result-codes: holderName -> acquirer response code. */
const HOLDER_NAME_CODES: Readonly<Record<string, number>> = Object.freeze({
  UNKNOWN: 0, APPROVED: 1, DECLINED: 2, REFERRAL: 3, ERROR: 4, BLOCK_CARD: 5, CARD_EXPIRED: 6,
  INVALID_AMOUNT: 7, INVALID_CARD_NUMBER: 8, ISSUER_UNAVAILABLE: 9, NOT_SUPPORTED: 10,
  NOT_3D_AUTHENTICATED: 11, NOT_ENOUGH_BALANCE: 12, PENDING: 13, ACQUIRER_FRAUD: 14, CANCELLED: 15,
  SHOPPER_CANCELLED: 16,
});

/** The gateway's test cards (Stripe's documented numbers), with Adyen's nearest refusal. */
const GATEWAY_TEST_CARDS: Readonly<Record<string, TestDecision>> = Object.freeze({
  '4242424242424242': AUTHORISED,
  '4000000000000002': refused('2'), // generic decline
  '4000000000009995': refused('12'), // insufficient funds (soft)
  '4000000000009979': refused('5'), // stolen: Adyen reports a blocked card (hard)
  '4000000000009987': refused('5'), // lost: blocked card
  '4000000000000069': refused('6'), // expired
  '4000000000000127': refused('24'), // CVC declined
  '4000000000000119': { resultCode: 'Error', refusalReasonCode: '4' }, // acquirer error
  '4000000000000515': AUTHORISED, // partial authorization on Stripe; no partial approval in this sandbox
  // 3-D Secure: a challenge, then approved; a challenge, then refused for not enough balance (Adyen's 12).
  '4000002760003184': { resultCode: 'Authorised', authenticate: { thenRefusalCode: null } },
  '4000008260003178': { resultCode: 'Authorised', authenticate: { thenRefusalCode: '12' } },
});

/**
 * Adyen's own test card numbers (docs.adyen.com/development-resources/testing/test-card-numbers and
 * its 3-D Secure 2 page): approved, or asking the shopper to authenticate first. The holder-name and
 * acquirer-code triggers above still decide refusals for them.
 */
const ADYEN_TEST_CARDS: Readonly<Record<string, TestDecision>> = Object.freeze({
  '5555341244441115': AUTHORISED, // Mastercard
  '5555555555554444': AUTHORISED, // Mastercard (also a Stripe test card)
  '2222400070000005': AUTHORISED, // Mastercard 2-series
  '4111111145551142': AUTHORISED, // Visa
  '4111111111111111': AUTHORISED, // Visa
  '4988438843884305': AUTHORISED, // Visa
  '370000000000002': AUTHORISED, // American Express (code 7373)
  // 3-D Secure 2: a challenge, then approved.
  '4917610000000000': { resultCode: 'Authorised', authenticate: { thenRefusalCode: null } },
  '5454545454545454': { resultCode: 'Authorised', authenticate: { thenRefusalCode: null } },
  '4212345678910006': { resultCode: 'Authorised', authenticate: { thenRefusalCode: null } },
});

/** A number this test platform knows: Adyen's test cards, and the gateway's (Stripe's) that this sandbox also honours. */
export function isTestCardNumber(number: string): boolean {
  return Object.hasOwn(ADYEN_TEST_CARDS, number) || Object.hasOwn(GATEWAY_TEST_CARDS, number);
}

function fromAcquirerCode(code: number): TestDecision {
  if (code === 1) return AUTHORISED;
  if (code === 13) return { resultCode: 'Received' };
  if (code === 0 || code === 4) return { resultCode: 'Error', refusalReasonCode: String(code) };
  return refused(Object.hasOwn(ADYEN_REFUSAL_REASONS, String(code)) ? String(code) : '2');
}

export interface TestInputs {
  readonly holderName: string | undefined;
  readonly requestedAcquirerCode: string | undefined;
  /** The card number with any `test_` prefix removed. */
  readonly cardNumber: string | undefined;
}

export function testDecision(inputs: TestInputs): TestDecision {
  const holder = inputs.holderName?.trim().toUpperCase();
  if (holder !== undefined && Object.hasOwn(HOLDER_NAME_CODES, holder)) return fromAcquirerCode(HOLDER_NAME_CODES[holder] ?? 1);
  if (inputs.requestedAcquirerCode !== undefined && /^\d{1,2}$/.test(inputs.requestedAcquirerCode)) return fromAcquirerCode(Number(inputs.requestedAcquirerCode));
  const card = inputs.cardNumber?.replace(/[\s-]/g, '');
  if (card !== undefined && Object.hasOwn(GATEWAY_TEST_CARDS, card)) return GATEWAY_TEST_CARDS[card] ?? AUTHORISED;
  if (card !== undefined && Object.hasOwn(ADYEN_TEST_CARDS, card)) return ADYEN_TEST_CARDS[card] ?? AUTHORISED;
  return AUTHORISED;
}

export function refusalText(code: string): string {
  return ADYEN_REFUSAL_REASONS[code]?.text ?? 'Refused';
}
