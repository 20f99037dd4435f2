// What Adyen sends the shopper back with: redirectResult (appended to the returnUrl for a GET
// redirect, posted for a POST one). It is the resume's only input (/payments/details) and the
// return's evidence; it is bound to the attempt by the references /payments/details answers with
// (status-map.ts resumeOutcome). Nothing else is kept: MD and PaRes are 3-D Secure 1 data this
// connector never sends.

import type { CustomerReturnReading } from '../contract.ts';

export function readAdyenReturn(returned: Readonly<Record<string, string>>): CustomerReturnReading {
  const redirectResult = returned['redirectResult'];
  // Opaque to us (live values carry characters like '!'): only /payments/details can judge it.
  if (redirectResult === undefined) return { ok: false, why: 'no redirectResult' };
  return { ok: true, keep: { redirectResult } };
}
