// Stripe's currency exponents: how many decimals Stripe reads into `amount`. Every Stripe amount —
// request, response, webhook, reconciliation record — goes through this file.
//
// Source: docs.stripe.com/currencies (stored copies read 2026-12-01: the page, its 2022 archive
// copy with the full zero-decimal and three-decimal lists, and support.stripe.com "Deprecation of
// fractional ISK charges and refunds"). The page: "Unless otherwise noted, currencies are
// two-decimal"; the zero-decimal list; three-decimal currencies "require the least-significant
// (last) digit to be 0"; and the special cases:
// - ISK: "ISK will remain a two-decimal currency in the Stripe API", amounts "evenly divisible by
//   100". ISO says 0 decimals, so the gateway's whole krónur go out x100.
// - MGA: on Stripe's zero-decimal list, 2 decimals in ISO 4217 (1 ariary = 5 iraimbilanja, which
//   ISO writes as 2 decimals): the gateway's ISO units go out /100 and must be whole ariary.
// - HUF and TWD: charged with two decimals (as ISO); only payouts are zero-decimal, and the gateway
//   makes no payouts, so nothing changes for them here.
// - UGX: on the zero-decimal list, as ISO (0); its special case concerns payouts too.

import { CURRENCY_EXPONENTS, amountProblem, isCurrency, rescaleMinor } from '../../core/money.ts';

/** docs.stripe.com/currencies#zero-decimal, row by row. */
export const STRIPE_ZERO_DECIMAL: ReadonlySet<string> = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
/** docs.stripe.com/currencies#three-decimal: accepted with the last digit 0. */
export const STRIPE_THREE_DECIMAL: ReadonlySet<string> = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);
/** Special cases: zero-decimal in ISO, two decimals on Stripe's wire. */
const STRIPE_TWO_DECIMAL_OVERRIDES: ReadonlySet<string> = new Set(['ISK']);

/** Currency -> Stripe's decimals, or null when Stripe takes no amounts in it (IQD, LYD, UYI, CLF, UYW). */
export function stripeExponent(currency: string): number | null {
  if (STRIPE_ZERO_DECIMAL.has(currency)) return 0;
  if (STRIPE_THREE_DECIMAL.has(currency)) return 3;
  if (STRIPE_TWO_DECIMAL_OVERRIDES.has(currency)) return 2;
  // "Unless otherwise noted, currencies are two-decimal": ISO's other 0-, 3- and 4-decimal codes are not noted.
  return CURRENCY_EXPONENTS[currency] === 2 ? 2 : null;
}

/**
 * docs.stripe.com/currencies, "Minimum and maximum charge amounts": "The amount value supports up to
 * eight digits (e.g., a value of 99999999 for a USD charge of $999,999.99)", in Stripe's units;
 * live answers a larger one 400 amount_too_large. One limit for every currency here.
 */
export const STRIPE_MAX_WIRE_AMOUNT = 99_999_999;

export type StripeValue = { readonly ok: true; readonly amount: number } | { readonly ok: false; readonly problem: string };

/** Gateway (ISO) minor units -> Stripe's amount; refused, never rounded, when Stripe cannot take it. */
export function toStripeValue(amount: number, currency: string): StripeValue {
  const problem = amountProblem(amount);
  if (problem !== null) return { ok: false, problem };
  if (!isCurrency(currency)) return { ok: false, problem: `currency ${currency} is not supported` };
  const stripe = stripeExponent(currency);
  if (stripe === null) return { ok: false, problem: `Stripe does not take ${currency} amounts (${CURRENCY_EXPONENTS[currency]} decimals in ISO 4217, on none of Stripe's lists)` };
  const r = rescaleMinor(amount, CURRENCY_EXPONENTS[currency]!, stripe);
  if (!r.ok) return { ok: false, problem: `${amount} ${currency} (ISO minor units) cannot be sent to Stripe, which takes ${currency} with ${stripe} decimals: ${r.problem}` };
  if (stripe === 3 && r.amount % 10 !== 0) {
    return { ok: false, problem: `${amount} ${currency}: Stripe takes ${currency} amounts only in multiples of 10 minor units` };
  }
  if (r.amount > STRIPE_MAX_WIRE_AMOUNT) {
    return { ok: false, problem: `${amount} ${currency} is above the provider's maximum: Stripe takes at most 8 digits (${STRIPE_MAX_WIRE_AMOUNT} in Stripe's ${currency} units)` };
  }
  return { ok: true, amount: r.amount };
}

/** Stripe's amount -> gateway (ISO) minor units; refused when Stripe's value is finer than ISO's unit. */
export function fromStripeValue(wireAmount: number, currency: string): StripeValue {
  const problem = amountProblem(wireAmount);
  if (problem !== null) return { ok: false, problem };
  if (!isCurrency(currency)) return { ok: false, problem: `currency ${currency} is not supported` };
  const stripe = stripeExponent(currency);
  if (stripe === null) return { ok: false, problem: `Stripe does not take ${currency} amounts` };
  const r = rescaleMinor(wireAmount, stripe, CURRENCY_EXPONENTS[currency]!);
  return r.ok ? r : { ok: false, problem: `Stripe's ${wireAmount} ${currency} (${stripe} decimals) is no whole number of ISO minor units: ${r.problem}` };
}
