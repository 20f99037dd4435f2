// The tokens in the customer-facing URLs of an attempt's authentication: the page the merchant
// sends the customer to (next_action.url) and the return endpoint the provider sends the customer
// back to. The attempt id alone is no capability (it is in every payment resource, event and log
// line); these tokens are. Each is an HMAC-SHA256 of its purpose and the attempt id under the
// payment's random key, so one stored key serves every attempt and both URLs can be rebuilt (an
// authorize resend must send the provider the very same return URL), while the page token says
// nothing about the return token. Validity ends with the attempt's authentication window: the
// routes check it against the attempt's expires_at.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type TokenPurpose = 'page' | 'return';

/** A payment's token key: 256 random bits, base64url. */
export function newTokenKey(): string {
  return randomBytes(32).toString('base64url');
}

export function attemptToken(tokenKey: string, purpose: TokenPurpose, attemptId: string): string {
  return createHmac('sha256', Buffer.from(tokenKey, 'base64url')).update(`${purpose}\0${attemptId}`).digest('base64url');
}

/** Whether `given` is the attempt's token for `purpose` (constant time; no key: never). */
export function tokenMatches(tokenKey: string | undefined, purpose: TokenPurpose, attemptId: string, given: unknown): boolean {
  if (tokenKey === undefined || typeof given !== 'string') return false;
  const want = Buffer.from(attemptToken(tokenKey, purpose, attemptId));
  const got = Buffer.from(given);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** The gateway's page for the attempt awaiting the customer (relative to the gateway's public URL). */
export function authenticationPagePath(tokenKey: string, attemptId: string): string {
  return `/authenticate/${attemptId}?token=${attemptToken(tokenKey, 'page', attemptId)}`;
}

/** Where the provider sends the customer back (relative to the gateway's public URL). */
export function authenticationReturnPath(tokenKey: string, attemptId: string): string {
  return `/authenticate/${attemptId}/return?token=${attemptToken(tokenKey, 'return', attemptId)}`;
}
