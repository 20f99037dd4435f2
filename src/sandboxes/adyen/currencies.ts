// The simulated Adyen's own copy of its currency decimals (docs.adyen.com/development-resources/
// currency-codes): it reads `amount.value` with them, as Adyen does, so a connector that sends
// ISO minor units is charged the wrong amount here too, and the ledger shows it. Deliberately not
// imported from src/connectors/adyen: a simulator that shared the connector's table would agree
// with any mistake in it. The page's notes box names the four that differ from ISO 4217.

import { CURRENCY_EXPONENTS, rescaleMinor } from '../../core/money.ts';

const DIFFERS_FROM_ISO: Readonly<Record<string, number>> = { CLP: 2, CVE: 0, IDR: 0, ISK: 2 };

/** The decimals Adyen reads into `value` for a currency (ISO 4217's unless the table differs). */
export function adyenDecimals(currency: string): number | undefined {
  return DIFFERS_FROM_ISO[currency] ?? CURRENCY_EXPONENTS[currency];
}

/**
 * Adyen's value in ISO 4217 minor units, or why there is none. CLP and ISK carry two decimals on
 * Adyen's wire but have no minor unit in circulation: card schemes take whole pesos and krónur
 * only (Visa and Mastercard from 2023-04-14 for ISK), so a value with a fraction of one is refused.
 */
export function isoMinor(value: number, currency: string): { ok: true; value: number } | { ok: false; problem: string } {
  const adyen = adyenDecimals(currency);
  const iso = CURRENCY_EXPONENTS[currency];
  if (adyen === undefined || iso === undefined) return { ok: false, problem: `currency ${currency} is not supported` };
  const r = rescaleMinor(value, adyen, iso);
  return r.ok ? { ok: true, value: r.amount } : { ok: false, problem: `${value} is not a whole amount of ${currency} (${adyen} decimals on the wire, ${iso} in circulation)` };
}
