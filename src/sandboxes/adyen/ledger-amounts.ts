// A payment's ledger amounts: in ISO 4217 minor units (what the gateway holds, so a connector that
// sent the wrong decimals disagrees visibly) and as received, in Adyen's decimals.

import type { ReceivedAmounts } from '../shared/control.ts';
import { adyenDecimals, isoMinor } from './currencies.ts';

/** The fields of a payment record the ledger reads (state.ts's PaymentRecord has them). */
export interface ReceivedPayment {
  readonly amount: { readonly value: number; readonly currency: string };
  readonly authorised: number;
  readonly captured: number;
  readonly refunded: number;
}

export interface LedgerAmounts {
  readonly amount: number;
  readonly currency: string;
  readonly authorized: number;
  readonly captured: number;
  readonly refunded: number;
  readonly received: ReceivedAmounts;
}

function iso(value: number, currency: string): number {
  const r = isoMinor(value, currency);
  // Every value was checked on the way in (requiredAmount), and sums of whole amounts stay whole.
  if (!r.ok) throw new Error(`ledger: ${r.problem}`);
  return r.value;
}

export function ledgerAmounts(p: ReceivedPayment): LedgerAmounts {
  const currency = p.amount.currency;
  return {
    amount: iso(p.amount.value, currency),
    currency,
    authorized: iso(p.authorised, currency),
    captured: iso(p.captured, currency),
    refunded: iso(p.refunded, currency),
    received: { currency, decimals: adyenDecimals(currency) ?? 2, amount: p.amount.value, authorized: p.authorised, captured: p.captured, refunded: p.refunded },
  };
}
