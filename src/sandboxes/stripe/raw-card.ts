// Raw card data on a PaymentIntent: `payment_method_data[type]=card` with
// `payment_method_data[card][number|exp_month|exp_year|cvc]`, the API an account must have enabled
// (support.stripe.com/questions/enabling-access-to-raw-card-data-apis). Checked as live Stripe
// checks it, with card-validator for the number and code; a documented test number gets its
// documented outcome and any other number is declined `test_mode_live_card` (the sandbox is test
// mode). What is kept is a new PaymentMethod of brand, last 4, expiry and fingerprint: the number
// and the code go no further than this file.

import cardValidator from 'card-validator';
import { invalidParam, missingParam, StripeRequestFailure } from './errors.ts';
import type { FormParams, FormValue } from './form-encoding.ts';
import { stripeId } from './ids.ts';
import { testPaymentMethodForCard } from './test-payment-methods.ts';
import type { CardBrand, SandboxCard, TestCardBehaviour } from './test-payment-methods.ts';

const FIELD = 'payment_method_data';
const CARD_FIELDS = new Set(['number', 'exp_month', 'exp_year', 'cvc']);
const DATA_FIELDS = new Set(['type', 'card', 'billing_details', 'metadata']);

/** Live's answer to raw card data from an account without access (402, invalid_request_error, no code). */
export const RAW_CARD_DATA_REFUSED =
  'Sending credit card numbers directly to the Stripe API is generally unsafe. We suggest you use test tokens that map to the test card you are using, see https://stripe.com/docs/testing. To enable raw card data APIs in test mode, see https://support.stripe.com/questions/enabling-access-to-raw-card-data-apis.';

const LIVE_CARD_IN_TEST_MODE: TestCardBehaviour = {
  kind: 'decline',
  code: 'card_declined',
  declineCode: 'test_mode_live_card',
  message: 'Your card was declined. Your request was in test mode, but used a non test card. For a list of valid test cards, visit: https://stripe.com/docs/testing.',
};

/** card-validator's type names, as Stripe spells brands. */
const BRANDS: Readonly<Record<string, CardBrand>> = {
  visa: 'visa', mastercard: 'mastercard', 'american-express': 'amex', discover: 'discover', 'diners-club': 'diners', jcb: 'jcb', unionpay: 'unionpay',
};

export interface RawCardContext {
  /** Unix seconds on the sandbox clock: an expiry is checked against it, not the machine's. */
  readonly now: number;
  /** The account has raw card data APIs enabled (the sandbox's per-account setting). */
  readonly enabled: boolean;
  /** Stripe's card fingerprint: the same number gives the same value on this account. */
  readonly fingerprint: (number: string) => string;
}

/** A card error as live answers an invalid card (402 card_error naming the parameter); nothing is created, nothing stored. */
function cardError(code: string, field: string, message: string): StripeRequestFailure {
  return new StripeRequestFailure(402, { type: 'card_error', code, param: `${FIELD}[card][${field}]`, message, doc_url: `https://stripe.com/docs/error-codes/${code.replaceAll('_', '-')}` }, false);
}

function text(card: { [key: string]: FormValue }, field: string): string | undefined {
  const v = card[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw invalidParam(`${FIELD}[card][${field}]`, `Invalid string: ${FIELD}[card][${field}] must be a string.`);
  return v;
}

/** True when the request carries payment_method_data (so it names no payment_method of its own). */
export function hasPaymentMethodData(params: FormParams): boolean {
  return params[FIELD] !== undefined;
}

/**
 * The PaymentMethod made from the request's raw card, or a refusal: not enabled (402
 * invalid_request_error), a malformed request (400), or an invalid card (402 card_error with
 * incorrect_number / invalid_number / invalid_expiry_month / invalid_expiry_year / invalid_cvc).
 */
export function paymentMethodFromCardData(params: FormParams, ctx: RawCardContext): SandboxCard {
  const data = params[FIELD];
  if (typeof data !== 'object' || Array.isArray(data)) throw invalidParam(FIELD, `Invalid hash: ${FIELD} must be an object.`);
  for (const key of Object.keys(data)) if (!DATA_FIELDS.has(key)) throw invalidParam(`${FIELD}[${key}]`, `Received unknown parameter: ${FIELD}[${key}]`, 'parameter_unknown');
  if (data['type'] === undefined) throw missingParam(`${FIELD}[type]`);
  if (data['type'] !== 'card') throw invalidParam(`${FIELD}[type]`, `Invalid ${FIELD}[type]: this sandbox takes card only.`);
  const card = data['card'];
  if (card === undefined) throw missingParam(`${FIELD}[card]`);
  if (typeof card !== 'object' || Array.isArray(card)) throw invalidParam(`${FIELD}[card]`, `Invalid hash: ${FIELD}[card] must be an object.`);
  for (const key of Object.keys(card)) if (!CARD_FIELDS.has(key)) throw invalidParam(`${FIELD}[card][${key}]`, `Received unknown parameter: ${FIELD}[card][${key}]`, 'parameter_unknown');
  // The account's permission comes before anything about the card.
  if (!ctx.enabled) throw new StripeRequestFailure(402, { type: 'invalid_request_error', message: RAW_CARD_DATA_REFUSED }, false);

  const number = text(card, 'number');
  const month = text(card, 'exp_month');
  const year = text(card, 'exp_year');
  if (number === undefined) throw missingParam(`${FIELD}[card][number]`);
  if (month === undefined) throw missingParam(`${FIELD}[card][exp_month]`);
  if (year === undefined) throw missingParam(`${FIELD}[card][exp_year]`);
  const cvc = text(card, 'cvc');

  if (!/^\d{12,19}$/.test(number)) throw cardError('invalid_number', 'number', 'Your card number is invalid.');
  const verdict = cardValidator.number(number);
  if (!verdict.isValid || verdict.card === null) throw cardError('incorrect_number', 'number', 'Your card number is incorrect.');
  const expiry = checkedExpiry(month, year, ctx.now);
  // A code is optional; one that is sent must have the brand's length (3, or 4 for American Express).
  if (cvc !== undefined && (!/^\d+$/.test(cvc) || !cardValidator.cvv(cvc, verdict.card.code.size).isValid)) {
    throw cardError('invalid_cvc', 'cvc', "Your card's security code is invalid.");
  }
  const test = testPaymentMethodForCard(number);
  return {
    id: stripeId('pm'),
    brand: BRANDS[verdict.card.type] ?? 'unknown',
    last4: number.slice(-4),
    expMonth: expiry.month,
    expYear: expiry.year,
    fingerprint: ctx.fingerprint(number),
    cvcChecked: cvc !== undefined,
    behaviour: test?.behaviour ?? LIVE_CARD_IN_TEST_MODE,
  };
}

/** Month 1-12; a two- or four-digit year; not past (good through its month) and not absurdly far ahead. */
function checkedExpiry(monthText: string, yearText: string, nowSeconds: number): { month: number; year: number } {
  const month = /^\d{1,2}$/.test(monthText) ? Number(monthText) : NaN;
  if (!(month >= 1 && month <= 12)) throw cardError('invalid_expiry_month', 'exp_month', "Your card's expiration month is invalid.");
  const yearBadly = (): StripeRequestFailure => cardError('invalid_expiry_year', 'exp_year', "Your card's expiration year is invalid.");
  if (!/^(\d{2}|\d{4})$/.test(yearText)) throw yearBadly();
  const year = yearText.length === 2 ? 2000 + Number(yearText) : Number(yearText);
  const now = new Date(nowSeconds * 1000);
  const thisYear = now.getUTCFullYear();
  if (year < thisYear || year > thisYear + 50) throw yearBadly();
  if (year === thisYear && month < now.getUTCMonth() + 1) throw cardError('invalid_expiry_month', 'exp_month', "Your card's expiration month is invalid.");
  return { month, year };
}
