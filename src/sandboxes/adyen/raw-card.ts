// Raw card data in /payments: `paymentMethod {type: scheme, number, expiryMonth, expiryYear, cvc?,
// holderName?}`, which Adyen takes only from an API credential allowed to (PCI-compliant accounts;
// otherwise 403 errorCode 010 "Not allowed"). Checked as Adyen checks it: a 422 validation error
// for a number that is not a card number (101), an expiry that cannot be read (129) or a code of the
// wrong length (103); a card past its expiry is processed and Refused "Expired Card" (6), and a
// number the test platform does not know is Refused (2). The number and the code go no further than
// this file: the payment keeps brand, last 4, expiry and a fingerprint.

import cardValidator from 'card-validator';
import type { JsonObject } from './context.ts';
import { AdyenServiceError } from './errors.ts';
import { isTestCardNumber } from './test-triggers.ts';
import type { TestDecision } from './test-triggers.ts';

/** What the payment keeps of a raw card. */
export interface KeptCard {
  /** Adyen's variant: visa, mc, amex, discover, diners, jcb, cup. */
  readonly brand: string;
  readonly last4: string;
  /** As sent: "03", "2030". */
  readonly expiryMonth: string;
  readonly expiryYear: string;
  readonly fingerprint: string;
}

export interface RawCard {
  readonly kept: KeptCard;
  /** The issuer's answer decided by the card itself (expired, not a test card), before any test trigger; null: the triggers decide. */
  readonly refusal: TestDecision | null;
  /** For the test triggers (card-number scenarios): in memory for this request only. */
  readonly number: string;
}

export interface RawCardContext {
  readonly nowMs: number;
  /** Raw card data is allowed for the account's API credential (the sandbox's per-account setting). */
  readonly enabled: boolean;
  readonly fingerprint: (number: string) => string;
}

const VARIANTS: Readonly<Record<string, string>> = {
  visa: 'visa', mastercard: 'mc', 'american-express': 'amex', discover: 'discover', 'diners-club': 'diners', jcb: 'jcb', unionpay: 'cup',
};

const validation = (code: string, message: string): AdyenServiceError => new AdyenServiceError(422, code, message, 'validation');
const expiryInvalid = (why: string): AdyenServiceError => validation('129', `The provided Expiry Date is not valid.: ${why}`);

/** True when the payment method carries a raw card number (not the encrypted fields of Adyen's components). */
export function isRawCard(pm: JsonObject): boolean {
  return pm['number'] !== undefined;
}

/** Checks the raw card; throws the 403 / 422 Adyen answers, or returns what to keep and any refusal the card itself causes. */
export function checkRawCard(pm: JsonObject, ctx: RawCardContext): RawCard {
  if (!ctx.enabled) throw new AdyenServiceError(403, '010', 'Not allowed', 'security');
  if (pm['type'] !== undefined && pm['type'] !== 'scheme') throw validation('14_007', 'Invalid payment method data');
  const { number, expiryMonth, expiryYear, cvc } = pm;
  if (typeof number !== 'string' || !/^\d{12,19}$/.test(number)) throw validation('101', 'Invalid card number');
  const verdict = cardValidator.number(number);
  if (!verdict.isValid || verdict.card === null) throw validation('101', 'Invalid card number');
  if (typeof expiryMonth !== 'string' || !/^\d{1,2}$/.test(expiryMonth) || Number(expiryMonth) < 1 || Number(expiryMonth) > 12) {
    // The month is echoed only when it is a number: nothing else a request carries is repeated back.
    throw expiryInvalid(`Expiry month should be between 1 and 12 inclusive${typeof expiryMonth === 'string' && /^\d{1,2}$/.test(expiryMonth) ? `: ${expiryMonth}` : ''}`);
  }
  if (typeof expiryYear !== 'string' || !/^\d{4}$/.test(expiryYear)) throw expiryInvalid("Couldn't parse expiry year");
  if (cvc !== undefined && (typeof cvc !== 'string' || !/^\d+$/.test(cvc) || !cardValidator.cvv(cvc, verdict.card.code.size).isValid)) {
    throw validation('103', 'CVC is not the right length');
  }
  const now = new Date(ctx.nowMs);
  const [month, year] = [Number(expiryMonth), Number(expiryYear)];
  // Good through the last day of its month.
  const expired = year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1);
  const refusal: TestDecision | null = expired ? { resultCode: 'Refused', refusalReasonCode: '6' } : isTestCardNumber(number) ? null : { resultCode: 'Refused', refusalReasonCode: '2' };
  return {
    kept: { brand: VARIANTS[verdict.card.type] ?? 'scheme', last4: number.slice(-4), expiryMonth: expiryMonth.padStart(2, '0'), expiryYear, fingerprint: ctx.fingerprint(number) },
    refusal,
    number,
  };
}
