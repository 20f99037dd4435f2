// Money is an integer count of minor units plus an ISO 4217 currency code. Never a float.

/**
 * ISO 4217 minor-unit exponents: every code of List One (SIX, the ISO 4217 maintenance agency)
 * that has a minor unit. Codes without one (XAU, XAG, XPD, XPT, XBA-XBD, XDR, XSU, XUA, XTS, XXX)
 * are not money a payment can be in, so they are left out. Withdrawn codes are left out too
 * (HRK 2023, ANG -> XCG 2025, SLL -> SLE, ZWL -> ZWG, VEF), except BGN: Bulgaria joined the euro on
 * 2026-01-01, but payments taken in BGN before that are still refunded and reconciled in BGN.
 * This is the gateway's unit: amounts are held in these exponents, and each connector converts to
 * its provider's exponents (src/connectors/<provider>/currencies.ts), which differ for some codes.
 */
export const CURRENCY_EXPONENTS: Readonly<Record<string, number>> = Object.freeze({
  // zero-decimal
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0,
  VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  // three-decimal
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  // four-decimal (units of account: Chilean UF, Uruguayan nominal wage index unit)
  CLF: 4, UYW: 4,
  // two-decimal
  AED: 2, AFN: 2, ALL: 2, AMD: 2, AOA: 2, ARS: 2, AUD: 2, AWG: 2, AZN: 2, BAM: 2, BBD: 2, BDT: 2,
  BGN: 2, BMD: 2, BND: 2, BOB: 2, BOV: 2, BRL: 2, BSD: 2, BTN: 2, BWP: 2, BYN: 2, BZD: 2, CAD: 2,
  CDF: 2, CHE: 2, CHF: 2, CHW: 2, CNY: 2, COP: 2, COU: 2, CRC: 2, CUC: 2, CUP: 2, CVE: 2, CZK: 2,
  DKK: 2, DOP: 2, DZD: 2, EGP: 2, ERN: 2, ETB: 2, EUR: 2, FJD: 2, FKP: 2, GBP: 2, GEL: 2, GHS: 2,
  GIP: 2, GMD: 2, GTQ: 2, GYD: 2, HKD: 2, HNL: 2, HTG: 2, HUF: 2, IDR: 2, ILS: 2, INR: 2, IRR: 2,
  JMD: 2, KES: 2, KGS: 2, KHR: 2, KPW: 2, KYD: 2, KZT: 2, LAK: 2, LBP: 2, LKR: 2, LRD: 2, LSL: 2,
  MAD: 2, MDL: 2, MGA: 2, MKD: 2, MMK: 2, MNT: 2, MOP: 2, MRU: 2, MUR: 2, MVR: 2, MWK: 2, MXN: 2,
  MXV: 2, MYR: 2, MZN: 2, NAD: 2, NGN: 2, NIO: 2, NOK: 2, NPR: 2, NZD: 2, PAB: 2, PEN: 2, PGK: 2,
  PHP: 2, PKR: 2, PLN: 2, QAR: 2, RON: 2, RSD: 2, RUB: 2, SAR: 2, SBD: 2, SCR: 2, SDG: 2, SEK: 2,
  SGD: 2, SHP: 2, SLE: 2, SOS: 2, SRD: 2, SSP: 2, STN: 2, SVC: 2, SYP: 2, SZL: 2, THB: 2, TJS: 2,
  TMT: 2, TOP: 2, TRY: 2, TTD: 2, TWD: 2, TZS: 2, UAH: 2, USD: 2, USN: 2, UYU: 2, UZS: 2, VED: 2,
  VES: 2, WST: 2, XCD: 2, XCG: 2, YER: 2, ZAR: 2, ZMW: 2, ZWG: 2,
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

export type Rescaled = { readonly ok: true; readonly amount: number } | { readonly ok: false; readonly problem: string };

/**
 * An integer count of 10^-from units as a count of 10^-to units, in integers only (BigInt, so
 * that no intermediate is rounded). Scaling up multiplies; scaling down refuses a remainder
 * rather than round money, and a result past the safe-integer range is refused too.
 */
export function rescaleMinor(amount: number, fromExponent: number, toExponent: number): Rescaled {
  if (!Number.isSafeInteger(amount)) return { ok: false, problem: `amount ${amount} is not a safe integer` };
  const shift = toExponent - fromExponent;
  if (shift === 0) return { ok: true, amount };
  const factor = 10n ** BigInt(Math.abs(shift));
  const big = BigInt(amount);
  if (shift < 0 && big % factor !== 0n) {
    return { ok: false, problem: `${amount} has a remainder of ${big % factor} below the ${factor}-unit step` };
  }
  const scaled = shift > 0 ? big * factor : big / factor;
  if (scaled > BigInt(Number.MAX_SAFE_INTEGER) || scaled < BigInt(Number.MIN_SAFE_INTEGER)) {
    return { ok: false, problem: `${amount} scaled by 10^${shift} is larger than the largest safe integer` };
  }
  return { ok: true, amount: Number(scaled) };
}
