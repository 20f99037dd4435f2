// Planted bug "Adyen amounts in ISO units", through the gateway's seams: the Adyen connector as it
// was before issue 21, passing ISO 4217 minor units through as Adyen's `value` and reading
// Adyen's values back as ISO units. The connector itself converts, so the seam undoes that:
// a call gets the amount that its conversion turns into the ISO units on the wire (and its
// answer is reported in the ISO units a pass-through connector would report), and an Adyen
// event's amount is turned back into the value Adyen sent. Only where that is exact (IDR and
// CVE always; CLP and ISK in whole hundreds): elsewhere the call runs as it is.

import { ADYEN_EXPONENTS } from '../src/connectors/adyen/currencies.ts';
import type { GatewaySeams } from '../src/app/runtime.ts';
import { CURRENCY_EXPONENTS, rescaleMinor } from '../src/core/money.ts';
import { actionForEvent } from '../src/webhooks/inbound/event-mapping.ts';
import { ADYEN_ACCOUNT } from './topology.ts';

/** ISO units -> the amount whose Adyen conversion is those same units; null when not exact. */
function undoConversion(amount: number, currency: string): number | null {
  const iso = CURRENCY_EXPONENTS[currency];
  const adyen = ADYEN_EXPONENTS[currency];
  if (iso === undefined || adyen === undefined) return null;
  const r = rescaleMinor(amount, adyen, iso);
  return r.ok ? r.amount : null;
}

/** The converted amount of an event back to Adyen's raw value, as a pass-through connector reads it. */
function rawValue(amount: number, currency: string): number {
  const iso = CURRENCY_EXPONENTS[currency];
  const adyen = ADYEN_EXPONENTS[currency];
  if (iso === undefined || adyen === undefined) return amount;
  const r = rescaleMinor(amount, iso, adyen);
  return r.ok ? r.amount : amount;
}

export function isoUnitsOnAdyenWire(): GatewaySeams {
  return {
    aroundCall: async (effect, call) => {
      const shifted = effect.connector === ADYEN_ACCOUNT ? undoConversion(effect.amount, effect.currency) : null;
      if (shifted === null || shifted === effect.amount) return call();
      const outcome = await call({ ...effect, amount: shifted });
      return outcome.kind === 'succeeded' && outcome.amount === shifted ? { ...outcome, amount: effect.amount } : outcome;
    },
    mapEvent: (p, account, e) => {
      if (account !== ADYEN_ACCOUNT || !('amount' in e)) return actionForEvent(p, account, e);
      return actionForEvent(p, account, { ...e, amount: rawValue(e.amount, e.currency) });
    },
  };
}
