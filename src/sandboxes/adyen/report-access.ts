// Who may download reports, as live Adyen decides it: a report service user with the Merchant
// Report Download role, by its own API key or basic auth. The payments API key is a valid user
// without that role (403); no credential, or one Adyen does not know, is 401.

import { timingSafeEqual } from 'node:crypto';
import { AdyenServiceError, unauthorized } from './errors.ts';
import { basicAuthorization } from './notifications.ts';

export type ReportUser = { readonly apiKey: string } | { readonly basicAuth: { readonly username: string; readonly password: string } };

const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

const withoutRole = (): AdyenServiceError => new AdyenServiceError(403, '010', 'Not allowed: the user lacks the Merchant Report Download role', 'security');

/**
 * Null when the request may download; else the error live Adyen answers. With no report user
 * configured the payments API key's user holds both roles (a sandbox convenience: a live account
 * must name its report user, routing/live-secrets.ts).
 */
export function reportAccessRefusal(headers: Readonly<Record<string, string | string[] | undefined>>, paymentsApiKey: string, user: ReportUser | undefined): AdyenServiceError | null {
  const apiKey = typeof headers['x-api-key'] === 'string' ? headers['x-api-key'] : '';
  const authorization = typeof headers['authorization'] === 'string' ? headers['authorization'] : '';
  if (user === undefined) return apiKey !== '' && sameText(apiKey, paymentsApiKey) ? null : unauthorized();
  const allowed = 'apiKey' in user ? apiKey !== '' && sameText(apiKey, user.apiKey) : authorization !== '' && sameText(authorization, basicAuthorization(user.basicAuth.username, user.basicAuth.password));
  if (allowed) return null;
  return apiKey !== '' && sameText(apiKey, paymentsApiKey) ? withoutRole() : unauthorized();
}
