// The simulated Stripe's own copy of its currency decimals (docs.stripe.com/currencies): ISK stays
// two-decimal in Stripe's API, MGA is on its zero-decimal list; the rest read as ISO 4217. Kept here,
// not imported from src/connectors/stripe, so a wrong table in the connector shows in this ledger.

import { CURRENCY_EXPONENTS, rescaleMinor } from '../../core/money.ts';
import type { ReceivedAmounts } from '../shared/control.ts';
import { invalidParam } from './errors.ts';

interface WireAmounts {
  readonly amount: number;
  readonly authorized: number;
  readonly captured: number;
  readonly refunded: number;
}

const DIFFERS_FROM_ISO: Readonly<Record<string, number>> = { ISK: 2, MGA: 0 };

export function stripeDecimals(currency: string): number {
  const code = currency.toUpperCase();
  return DIFFERS_FROM_ISO[code] ?? CURRENCY_EXPONENTS[code] ?? 2;
}

/** A wire amount in ISO 4217 minor units, or null when it has none (refused on the way in). */
export function isoMinor(amount: number, currency: string): number | null {
  const iso = CURRENCY_EXPONENTS[currency.toUpperCase()];
  if (iso === undefined) return amount;
  const r = rescaleMinor(amount, stripeDecimals(currency), iso);
  return r.ok ? r.amount : null;
}

/** Stripe since 2023-04-14: "charged amounts must be evenly divisible by 100" for ISK (effectively zero-decimal). */
export function assertWholeUnits(amount: number | undefined, currency: string, param: string): void {
  if (amount === undefined || isoMinor(amount, currency) !== null) return;
  throw invalidParam(param, `Invalid amount. Currency ${currency.toUpperCase()} has become effectively zero-decimal and charged amounts must be evenly divisible by 100.`, 'invalid_charge_amount_no_decimal_compatible');
}

/** Ledger amounts in ISO minor units (what the gateway holds), the wire amounts as `received`. */
export function isoLedgerAmounts(wire: WireAmounts, currency: string): WireAmounts & { received: ReceivedAmounts } {
  // Every amount was checked on the way in (assertWholeUnits), and sums of whole amounts stay whole.
  const iso = (n: number): number => {
    const v = isoMinor(n, currency);
    if (v === null) throw new Error(`ledger: ${n} ${currency} is no whole ISO amount`);
    return v;
  };
  return {
    amount: iso(wire.amount), authorized: iso(wire.authorized), captured: iso(wire.captured), refunded: iso(wire.refunded),
    received: { currency, decimals: stripeDecimals(currency), ...wire },
  };
}

/** Live Stripe's limit (docs.stripe.com/currencies): at most eight digits in Stripe's units, whatever the currency. */
const MAX_WIRE_AMOUNT = 99_999_999;

/** Live's refusal of a larger amount: 400 amount_too_large, nothing created. */
export function assertAtMostMaximum(amount: number, currency: string, param: string): void {
  if (amount <= MAX_WIRE_AMOUNT) return;
  const decimals = stripeDecimals(currency);
  const major = (MAX_WIRE_AMOUNT / 10 ** decimals).toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  const shown = currency.toUpperCase() === 'USD' ? `$${major}` : `${major} ${currency.toUpperCase()}`;
  throw invalidParam(param, `Amount must be no more than ${shown}`, 'amount_too_large');
}
