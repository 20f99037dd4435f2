// What Stripe's page sends the customer back with: the return_url plus payment_intent,
// payment_intent_client_secret and redirect_status. The resume retrieves the PaymentIntent, so
// nothing of it is kept; but a return is only the customer's when it names the attempt's own
// PaymentIntent and carries a redirect_status (the client secret is never read, never stored).

import type { CustomerReturnReading } from '../contract.ts';

const REDIRECT_STATUS = /^[a-z_]{1,32}$/;

export function readStripeReturn(returned: Readonly<Record<string, string>>, attempt: { readonly providerRef: string | null }): CustomerReturnReading {
  const pi = returned['payment_intent'];
  const status = returned['redirect_status'];
  if (attempt.providerRef === null) return { ok: false, why: 'the attempt has no PaymentIntent yet' };
  if (pi !== attempt.providerRef) return { ok: false, why: pi === undefined ? 'no payment_intent' : 'payment_intent is not the attempt\'s PaymentIntent' };
  if (status === undefined || !REDIRECT_STATUS.test(status)) return { ok: false, why: 'no redirect_status' };
  return { ok: true, keep: {} };
}
