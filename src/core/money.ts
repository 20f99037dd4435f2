// Money is an integer count of minor units plus an ISO 4217 currency code. Never a float.

/** ISO 4217 minor-unit exponents for the currencies Switchyard accepts. */
export const CURRENCY_EXPONENTS: Readonly<Record<string, number>> = Object.freeze({
  // zero-decimal
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0,
  VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  // three-decimal
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  // two-decimal
  AED: 2, ARS: 2, AUD: 2, BGN: 2, BRL: 2, CAD: 2, CHF: 2, CNY: 2, COP: 2, CZK: 2, DKK: 2, EGP: 2,
  EUR: 2, GBP: 2, HKD: 2, HUF: 2, IDR: 2, ILS: 2, INR: 2, MAD: 2, MXN: 2, MYR: 2, NGN: 2, NOK: 2,
  NZD: 2, PEN: 2, PHP: 2, PKR: 2, PLN: 2, QAR: 2, RON: 2, RSD: 2, SAR: 2, SEK: 2, SGD: 2, THB: 2,
  TRY: 2, TWD: 2, UAH: 2, USD: 2, ZAR: 2,
});

export type Currency = string & { readonly __currency: unique symbol };

export interface Money {
  readonly amount: number;
  readonly currency: Currency;
}

export class MoneyError extends Error {
  override readonly name = 'MoneyError';
}

export function isCurrency(code: unknown): code is Currency {
  return typeof code === 'string' && Object.hasOwn(CURRENCY_EXPONENTS, code);
}

/** Parses an upper-case ISO 4217 code; lower case is refused so that the wire format stays one thing. */
export function currency(code: unknown): Currency {
  if (typeof code !== 'string') throw new MoneyError(`currency must be a string, got ${typeof code}`);
  if (!/^[A-Z]{3}$/.test(code)) throw new MoneyError(`currency "${code}" is not an upper-case ISO 4217 code`);
  if (!isCurrency(code)) throw new MoneyError(`currency "${code}" is not supported`);
  return code;
}

export function currencyExponent(c: Currency): number {
  const e = CURRENCY_EXPONENTS[c];
  if (e === undefined) throw new MoneyError(`currency "${c}" is not supported`);
  return e;
}

/** Checks a minor-unit amount: a non-negative safe integer. Returns a reason or null. */
export function amountProblem(amount: unknown): string | null {
  if (typeof amount !== 'number' || Number.isNaN(amount)) return `amount must be a number, got ${typeof amount === 'number' ? 'NaN' : typeof amount}`;
  if (!Number.isFinite(amount)) return `amount ${amount} is not finite`;
  if (!Number.isInteger(amount)) return `amount ${amount} is not an integer number of minor units`;
  if (amount < 0) return `amount ${amount} is negative`;
  if (!Number.isSafeInteger(amount)) return `amount ${amount} is larger than the largest safe integer`;
  return null;
}

export function money(amount: unknown, code: unknown): Money {
  const problem = amountProblem(amount);
  if (problem !== null) throw new MoneyError(problem);
  return Object.freeze({ amount: amount as number, currency: currency(code) });
}

function sameCurrency(a: Money, b: Money): void {
  if (a.currency !== b.currency) throw new MoneyError(`currency mismatch: ${a.currency} vs ${b.currency}`);
}

export function addMoney(a: Money, b: Money): Money {
  sameCurrency(a, b);
  return money(a.amount + b.amount, a.currency);
}

export function subtractMoney(a: Money, b: Money): Money {
  sameCurrency(a, b);
  if (b.amount > a.amount) throw new MoneyError(`cannot subtract ${b.amount} from ${a.amount} ${a.currency}`);
  return money(a.amount - b.amount, a.currency);
}

/** Formats for people (logs, CLI); never parsed back. */
export function formatMoney(m: Money): string {
  const e = currencyExponent(m.currency);
  if (e === 0) return `${m.amount} ${m.currency}`;
  const s = m.amount.toString().padStart(e + 1, '0');
  return `${s.slice(0, -e)}.${s.slice(-e)} ${m.currency}`;
}
