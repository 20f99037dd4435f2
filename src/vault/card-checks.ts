// Checks a card before anything is stored: the number (brand prefix, length, Luhn) and the code's
// length by card-validator; the expiry against the caller's clock (card-validator reads the real
// one). Pure. Every refusal names the field, and never echoes the number or the code.

import cardValidator from 'card-validator';
import { containsCardNumber } from '../core/card-number-detector.ts';

export interface CardInput {
  readonly number: string;
  readonly exp_month: number;
  readonly exp_year: number;
  readonly cvc?: string | undefined;
  readonly holder_name?: string | undefined;
}

export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'diners' | 'jcb' | 'unionpay' | 'maestro' | 'elo' | 'mir' | 'hiper' | 'hipercard' | 'troy' | 'other';

export interface CheckedCard {
  /** Digits only. */
  readonly number: string;
  readonly brand: CardBrand;
  readonly last4: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly cvc: string | null;
  readonly holderName: string | null;
}

export type CardField = 'card.number' | 'card.exp_month' | 'card.exp_year' | 'card.cvc' | 'card.holder_name';

export type CardCheck = { readonly ok: true; readonly card: CheckedCard } | { readonly ok: false; readonly field: CardField; readonly reason: string };

/** card-validator's type names, as payment providers spell brands. */
const BRANDS: Readonly<Record<string, CardBrand>> = {
  visa: 'visa', mastercard: 'mastercard', 'american-express': 'amex', discover: 'discover', 'diners-club': 'diners', jcb: 'jcb',
  unionpay: 'unionpay', maestro: 'maestro', elo: 'elo', mir: 'mir', hiper: 'hiper', hipercard: 'hipercard', troy: 'troy',
};

/** Cards are issued for at most this many years ahead (card-validator's own bound is 19). */
const MAX_YEARS_AHEAD = 20;

const refuse = (field: CardField, reason: string): CardCheck => ({ ok: false, field, reason });

export function checkCard(input: CardInput, now: Date): CardCheck {
  // People type groups: spaces and dashes between digits are dropped, anything else is refused.
  const number = typeof input.number === 'string' && /^[\d -]+$/.test(input.number) ? input.number.replace(/[ -]/g, '') : null;
  const verdict = number === null ? null : cardValidator.number(number, { luhnValidateUnionPay: true });
  if (number === null || verdict === null || !verdict.isValid || verdict.card === null) {
    return refuse('card.number', 'is not a valid card number (a known brand, its length and check digit)');
  }
  const month = input.exp_month;
  if (!Number.isInteger(month) || month < 1 || month > 12) return refuse('card.exp_month', 'must be a whole number from 1 to 12');
  const year = input.exp_year;
  const thisYear = now.getUTCFullYear();
  if (!Number.isInteger(year) || year < 1000 || year > 9999) return refuse('card.exp_year', 'must be a four-digit year');
  if (year > thisYear + MAX_YEARS_AHEAD) return refuse('card.exp_year', `is more than ${MAX_YEARS_AHEAD} years ahead`);
  // A card is good through the last day of its expiry month.
  if (year < thisYear || (year === thisYear && month < now.getUTCMonth() + 1)) return refuse(year < thisYear ? 'card.exp_year' : 'card.exp_month', 'the card has expired');

  let cvc: string | null = null;
  if (input.cvc !== undefined) {
    const size = verdict.card.code.size;
    if (typeof input.cvc !== 'string' || !/^\d+$/.test(input.cvc) || !cardValidator.cvv(input.cvc, size).isValid) {
      return refuse('card.cvc', `must be ${size} digits for this card`);
    }
    cvc = input.cvc;
  }

  let holderName: string | null = null;
  if (input.holder_name !== undefined) {
    const name = input.holder_name;
    // eslint-disable-next-line no-control-regex
    if (typeof name !== 'string' || !cardValidator.cardholderName(name).isValid || /[\u0000-\u001f\u007f]/.test(name) || containsCardNumber(name)) {
      return refuse('card.holder_name', 'must be a name of 1 to 255 characters, without control characters or a card number');
    }
    holderName = name;
  }
  return { ok: true, card: { number, brand: BRANDS[verdict.card.type] ?? 'other', last4: number.slice(-4), expMonth: month, expYear: year, cvc, holderName } };
}
