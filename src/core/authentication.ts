// Customer authentication (3-D Secure, redirects): the pure rules the authorization path asks.
// No step logic here, so both step-authorize.ts and step-authenticate.ts can use it.

import { DEFAULT_AUTHENTICATION_TIMEOUT_MS } from './policy.ts';
import type { ConnectorPolicy } from './policy.ts';
import type { Attempt, AttemptAuthentication, Payment } from './payment.ts';

/** An attempt's authentication before the provider asked for anything (forced: the step-up retry). */
export function freshAuthentication(forced: boolean): AttemptAuthentication {
  return { forced, stage: 'requested', action: null, expiresAt: null, returned: null, returnedAt: null, resumeKey: null, resumes: 0, rounds: 0, heldDecline: null };
}

/**
 * The provider's page stays on the attempt only while the customer is expected there (authenticating,
 * awaiting the customer): its URL may carry a provider secret (live Stripe's
 * payment_intent_client_secret), and once the customer returned, or the wait expired or was given
 * up, nothing sends a browser there again.
 */
export function withoutStalePage(a: Attempt): Attempt {
  const auth = a.authentication;
  if (auth === undefined || auth.action === null) return a;
  if (a.status === 'authenticating' && auth.stage === 'awaiting_customer') return a;
  return { ...a, authentication: { ...auth, action: null } };
}

/** When the customer is given up on: the connector's timeout from now, never past the payment's deadline. */
export function authenticationExpiry(now: Date, policy: ConnectorPolicy, deadlineAt: string): string {
  const at = now.getTime() + (policy.authenticationTimeoutMs ?? DEFAULT_AUTHENTICATION_TIMEOUT_MS);
  return new Date(Math.min(at, Date.parse(deadlineAt))).toISOString();
}

/**
 * A cancel of this attempt proves nothing was captured, even under automatic capture: the provider
 * holds it unauthorised — a held decline (the PaymentIntent back in requires_payment_method, an
 * action we cannot present) or a customer who never came back from the page. (A customer who
 * completed the page but never returned leaves an authorised payment: its cancel is refused, and a
 * refused fence parks the payment for review.)
 */
export function cancelProvesUncharged(a: Attempt): boolean {
  const auth = a.authentication;
  if (auth === undefined) return false;
  return auth.stage === 'cancelling' || (auth.stage === 'abandoned' && auth.returnedAt === null);
}

/**
 * Step-up: the issuer declined because authentication was required, the merchant gave a return_url
 * and did not say `none`, and no attempt on that connector was sent with authentication forced yet.
 */
export function stepUpWanted(p: Pick<Payment, 'authentication'>, attempts: readonly Attempt[], current: Attempt): boolean {
  const settings = p.authentication;
  if (settings === undefined || settings.returnUrl === null || settings.mode === 'none') return false;
  if (current.status !== 'declined' || current.declineCode !== 'authentication_required') return false;
  return !attempts.some((a) => a.connector === current.connector && a.authentication?.forced === true);
}

/** The resume operation's number across the payment (its key ends resume:<n>): each resume its own key. */
export function nextResumeNo(attempts: readonly Attempt[]): number {
  return attempts.reduce((n, a) => n + (a.authentication?.rounds ?? 0), 0) + 1;
}

/**
 * Resume rounds one attempt may start (each a customer's return the provider answered "authenticate
 * again"): real 3-D Secure needs one or two. A return past the cap abandons the attempt (its cancel
 * decides), so no browser can keep an attempt alive, or keep it calling the provider, for ever.
 */
export const MAX_RESUME_ROUNDS = 5;

/** Longest value kept from a customer's return (an Adyen redirectResult is a few kB). */
const MAX_RETURNED_FIELD_LENGTH = 20_000;
/** Field names a provider sends back; anything else (`__proto__` included) is never read. */
const RETURNED_FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * The string fields a customer's browser brought back (a form body's over its query's), without
 * the gateway's own `token`; each connector then reads (and keeps) only what it documents.
 */
export function customerReturnFields(body: Readonly<Record<string, unknown>>, query: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const source of [query, body]) {
    for (const [name, v] of Object.entries(source)) {
      if (name !== 'token' && RETURNED_FIELD_NAME.test(name) && typeof v === 'string' && v.length > 0 && v.length <= MAX_RETURNED_FIELD_LENGTH) out[name] = v;
    }
  }
  return out;
}
