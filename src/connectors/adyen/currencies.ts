// Adyen's currency exponents: how many decimals Adyen reads into `amount.value`. They are not
// always ISO 4217's, and a value sent in ISO minor units is charged 100 times too little (CLP) or
// too much (IDR, CVE); Adyen echoes the value back unchanged, so no integrity check can see it.
// Every Adyen amount — request, response, notification, report — goes through this file.
//
// Source: docs.adyen.com/development-resources/currency-codes ("Currency codes and minor units",
// stored copy read 2026-12-01). The rows AED..EGP below are that table's, row by row, in its
// order. The stored copy is cut off after EGP; for the rest of the alphabet this file takes ISO
// 4217's exponent, because the page's notes box says "For CLP, CVE, IDR, and ISK the standard
// has a different number of decimals than shown in our currency codes table above. When
// submitting amounts in minor units, the decimals in the table on this page are leading", and
// gives ISK as 2 decimals ("to submit an ISK amount to Adyen you have to use two decimals").
// Which codes after EGP Adyen lists could not be checked; funds codes are left out, as they are
// from the rows we could read.

import { CURRENCY_EXPONENTS, amountProblem, isCurrency, rescaleMinor } from '../../core/money.ts';

/** The table's rows from AED to EGP, as published (CNH is Adyen's, not ISO's: the gateway cannot hold it). */
const ROWS_AED_TO_EGP: Readonly<Record<string, number>> = {
  AED: 2, ALL: 2, AMD: 2, AOA: 2, ARS: 2, AUD: 2, AWG: 2, AZN: 2, BAM: 2, BBD: 2, BDT: 2, BHD: 3,
  BMD: 2, BND: 2, BOB: 2, BRL: 2, BSD: 2, BWP: 2, BYN: 2, BZD: 2, CAD: 2, CHF: 2,
  CLP: 2, // "2 (differs from standard)"
  CNY: 2, COP: 2, CRC: 2, CUP: 2,
  CVE: 0, // "0 (differs from standard)"
  CZK: 2, DJF: 0, DKK: 2, DOP: 2, DZD: 2, EGP: 2,
};
/** The last row read; codes up to it that the table does not list are not Adyen currencies. */
const LAST_ROW_READ = 'EGP';

/** The notes box: the two differing currencies past the rows read. */
const NOTES_BOX: Readonly<Record<string, number>> = { IDR: 0, ISK: 2 };

/** ISO 4217 funds codes and units of account: no payment is taken in them. */
const FUNDS_CODES = new Set(['BOV', 'CHE', 'CHW', 'CLF', 'COU', 'MXV', 'USN', 'UYI', 'UYW']);

function buildTable(): Readonly<Record<string, number>> {
  const table: Record<string, number> = { ...ROWS_AED_TO_EGP };
  for (const [code, iso] of Object.entries(CURRENCY_EXPONENTS)) {
    if (code <= LAST_ROW_READ || FUNDS_CODES.has(code)) continue;
    table[code] = NOTES_BOX[code] ?? iso;
  }
  return Object.freeze(table);
}

/** Currency -> the number of decimals Adyen reads; a code missing here is refused before sending. */
export const ADYEN_EXPONENTS: Readonly<Record<string, number>> = buildTable();

export type AdyenValue = { readonly ok: true; readonly value: number } | { readonly ok: false; readonly problem: string };

function exponents(currency: string): { iso: number; adyen: number } | string {
  if (!isCurrency(currency)) return `currency ${currency} is not an ISO 4217 currency the gateway holds`;
  const adyen = ADYEN_EXPONENTS[currency];
  if (adyen === undefined) return `Adyen's currency table has no row for ${currency}`;
  return { iso: CURRENCY_EXPONENTS[currency]!, adyen };
}

/** Gateway (ISO) minor units -> Adyen's `value`. An amount Adyen's decimals cannot express is refused, never rounded. */
export function toAdyenValue(amount: number, currency: string): AdyenValue {
  const problem = amountProblem(amount);
  if (problem !== null) return { ok: false, problem };
  const e = exponents(currency);
  if (typeof e === 'string') return { ok: false, problem: e };
  const r = rescaleMinor(amount, e.iso, e.adyen);
  if (r.ok) return { ok: true, value: r.amount };
  return { ok: false, problem: `${amount} ${currency} (ISO minor units) cannot be sent to Adyen, which takes ${currency} with ${e.adyen} decimals: ${r.problem}` };
}

/** Adyen's `value` -> gateway (ISO) minor units; refused when Adyen's value has finer units than ISO's. */
export function fromAdyenValue(value: number, currency: string): AdyenValue {
  const problem = amountProblem(value);
  if (problem !== null) return { ok: false, problem };
  const e = exponents(currency);
  if (typeof e === 'string') return { ok: false, problem: e };
  const r = rescaleMinor(value, e.adyen, e.iso);
  if (r.ok) return { ok: true, value: r.amount };
  return { ok: false, problem: `Adyen's ${value} ${currency} (${e.adyen} decimals) is no whole number of ISO minor units: ${r.problem}` };
}
