// 3-D Secure on the Adyen sandbox (Checkout v72, issue 27): which /payments answer waits for the
// shopper, the hosted challenge page, and /payments/details. A challenged payment is recorded with
// resultCode RedirectShopper (or IdentifyShopper for a threeDS2 action) and nothing authorised; the
// page's click issues a redirectResult and sends the browser to the payment's returnUrl (GET, or an
// auto-submitting POST for a POST redirect action); /payments/details with that redirectResult
// authorises or refuses once, books the ledger and queues the AUTHORISATION notification; a later
// details call with it is 422 errorCode 704.

import { randomBytes } from 'node:crypto';
import type { AdyenOperationContext, JsonObject } from './context.ts';
import { isObject } from './context.ts';
import { AdyenServiceError, invalidField, requiredField } from './errors.ts';
import { eventDate } from './notifications.ts';
import type { AdyenAuthenticationSettings, PaymentAuthentication, PaymentRecord } from './state.ts';
export type { AdyenAuthenticationSettings } from './state.ts';
import { AWAITING_SHOPPER } from './state.ts';
import { refusalText } from './test-triggers.ts';
import type { TestDecision } from './test-triggers.ts';

/** Account settings for authentication (AdyenSandbox.configureAuthentication; docs/sandbox.md). */

export const DEFAULT_AUTHENTICATION: AdyenAuthenticationSettings = { redirectMethod: 'GET', forceNative: false };

/** Adyen's "Authentication required" refusal: the issuer wants SCA and the request said attemptAuthentication never. */
export const AUTHENTICATION_REQUIRED_CODE = '38';
/** "3D Not Authenticated": the shopper failed (or abandoned) the challenge. */
export const NOT_AUTHENTICATED_CODE = '11';

export const CHALLENGE_PATH = /^\/checkoutshopper\/threeDS\/redirect\/([A-Z0-9]{16})$/;

/** What the /payments request says about authentication. */
export interface AuthenticationAsk {
  readonly attempt: 'always' | 'never' | null;
  /** nativeThreeDS: disabled = redirect only; preferred (or absent) = a threeDS2 action for Adyen's component. */
  readonly redirectOnly: boolean;
}

export function authenticationAsk(body: JsonObject): AuthenticationAsk {
  const data = isObject(body['authenticationData']) ? body['authenticationData'] : {};
  const attempt = data['attemptAuthentication'];
  if (attempt !== undefined && attempt !== 'always' && attempt !== 'never') throw invalidField('authenticationData.attemptAuthentication', 'must be always or never');
  const request = isObject(data['threeDSRequestData']) ? data['threeDSRequestData'] : {};
  const native = request['nativeThreeDS'];
  if (native !== undefined && native !== 'preferred' && native !== 'disabled') throw invalidField('authenticationData.threeDSRequestData.nativeThreeDS', 'must be preferred or disabled');
  return { attempt: attempt ?? null, redirectOnly: native === 'disabled' };
}

/**
 * The decision after the authentication rules: a card that asks for a challenge (or any card that
 * would be approved or refused when the request says always) waits for the shopper, unless the
 * request says never — then the issuer's soft decline, Authentication required.
 */
export function withAuthentication(decision: TestDecision, ask: AuthenticationAsk): TestDecision {
  const challengeable = decision.authenticate !== undefined || (ask.attempt === 'always' && (decision.resultCode === 'Authorised' || decision.resultCode === 'Refused'));
  if (!challengeable) return decision;
  if (ask.attempt === 'never') return { resultCode: 'Refused', refusalReasonCode: AUTHENTICATION_REQUIRED_CODE };
  const thenRefusalCode = decision.authenticate?.thenRefusalCode ?? (decision.resultCode === 'Refused' ? (decision.refusalReasonCode ?? '2') : null);
  return { resultCode: 'RedirectShopper', authenticate: { thenRefusalCode } };
}

const token = (): string => randomBytes(18).toString('base64url');

/** Starts the shopper's authentication on a new payment; the action goes into the /payments answer. */
export function startAuthentication(p: PaymentRecord, decision: TestDecision, ask: AuthenticationAsk, returnUrl: string, settings: AdyenAuthenticationSettings): void {
  const native = settings.forceNative || !ask.redirectOnly;
  p.resultCode = native ? 'IdentifyShopper' : 'RedirectShopper';
  p.authentication = {
    token: token(),
    returnUrl,
    method: native ? 'threeDS2' : settings.redirectMethod,
    thenRefusalCode: decision.authenticate?.thenRefusalCode ?? null,
    redirectResult: null,
    completed: null,
    choiceAtMs: null,
    detailsAtMs: null,
  };
}

/** The action of a payment waiting for its shopper (v72 CheckoutRedirectAction / CheckoutThreeDS2Action). */
export function actionOf(p: PaymentRecord, publicUrl: string): Record<string, unknown> | undefined {
  const auth = p.authentication;
  if (auth === undefined || !AWAITING_SHOPPER.has(p.resultCode)) return undefined;
  const page = `${publicUrl}/checkoutshopper/threeDS/redirect/${p.pspReference}`;
  if (auth.method === 'threeDS2') {
    // A token only Adyen's JavaScript component can use: the fingerprint step of native 3-D Secure 2.
    return { paymentData: Buffer.from(`${p.pspReference}:${auth.token}`).toString('base64'), paymentMethodType: 'scheme', subtype: 'fingerprint', token: Buffer.from(JSON.stringify({ threeDSMethodNotificationURL: page, threeDSServerTransID: auth.token })).toString('base64'), type: 'threeDS2' };
  }
  if (auth.method === 'GET') return { method: 'GET', paymentMethodType: 'scheme', type: 'redirect', url: `${page}?token=${auth.token}` };
  return { data: { MD: auth.token, PaReq: Buffer.from(`PaReq:${p.pspReference}`).toString('base64'), TermUrl: auth.returnUrl }, method: 'POST', paymentMethodType: 'scheme', type: 'redirect', url: page };
}

// ---- the challenge page ----------------------------------------------------------------------

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function challengePage(psp: string, pageToken: string, amountText: string): string {
  const form = (outcome: string, label: string): string =>
    `<form method="post" action="/checkoutshopper/threeDS/redirect/${escape(psp)}"><input type="hidden" name="choice" value="${outcome}"><input type="hidden" name="MD" value="${escape(pageToken)}"><button type="submit">${label}</button></form>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>3D Secure test page</title></head>
<body><h1>3D Secure 2 test page</h1><p>Adyen sandbox: authenticate the payment of ${escape(amountText)}.</p>
${form('complete', 'Complete authentication')}
${form('fail', 'Fail authentication')}
</body></html>
`;
}

/** The POST return: Adyen posts redirectResult to the returnUrl when the redirect action was a POST. */
export function postReturnPage(returnUrl: string, redirectResult: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Redirecting</title></head>
<body><form id="back" method="post" action="${escape(returnUrl)}"><input type="hidden" name="redirectResult" value="${escape(redirectResult)}"><noscript><button type="submit">Continue</button></noscript></form><script>document.getElementById('back').submit()</script></body></html>
`;
}

export function stalePage(): string {
  return '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>3D Secure</title></head><body><p>This authentication is no longer pending.</p></body></html>\n';
}

/** The page may be shown: the payment waits for a redirect and the token is the page's. */
export function pageOpen(p: PaymentRecord | undefined, pageToken: string): p is PaymentRecord & { authentication: PaymentAuthentication } {
  const auth = p?.authentication;
  return p !== undefined && auth !== undefined && p.resultCode === 'RedirectShopper' && !p.cancelled && auth.method !== 'threeDS2' && auth.redirectResult === null && auth.token === pageToken;
}

/**
 * The shopper's click. Issues the redirectResult (opaque to the merchant: it names the payment and
 * a secret of this authentication) and says where the browser goes. A second click: null.
 */
export function recordChoice(p: PaymentRecord | undefined, pageToken: string, completed: boolean, nowMs: number): { returnUrl: string; redirectResult: string; post: boolean } | null {
  if (!pageOpen(p, pageToken)) return null;
  const auth = p.authentication;
  auth.completed = completed;
  auth.choiceAtMs = nowMs;
  auth.redirectResult = Buffer.from(JSON.stringify({ p: p.pspReference, s: token() })).toString('base64url');
  return { returnUrl: auth.returnUrl, redirectResult: auth.redirectResult, post: auth.method === 'POST' };
}

/** The payment a redirectResult names (read before loading it); null for anything that is not ours. */
export function pspOfRedirectResult(redirectResult: unknown): string | null {
  if (typeof redirectResult !== 'string' || redirectResult.length > 4000) return null;
  try {
    const parsed = JSON.parse(Buffer.from(redirectResult, 'base64url').toString('utf8')) as { p?: unknown };
    return typeof parsed.p === 'string' && /^[A-Z0-9]{16}$/.test(parsed.p) ? parsed.p : null;
  } catch {
    return null;
  }
}

/** Adyen's answer to details it cannot use (an unknown, tampered or another payment's redirectResult). */
const invalidDetails = (): AdyenServiceError => new AdyenServiceError(422, '14_018', 'Invalid payload provided', 'validation');

/**
 * Adyen's answer to a redirectResult it has processed already (another idempotency key or none; the
 * same key replays the stored answer): it says nothing of the result, which only the AUTHORISATION
 * notification then gives. 422, not the 409 of a key in flight.
 */
const alreadyProcessed = (): AdyenServiceError => new AdyenServiceError(422, '704', 'request already processed or in progress', 'validation');

/**
 * POST /payments/details {details: {redirectResult}}. The first call settles the payment; a later
 * one with the same redirectResult is 422 errorCode 704, as live Adyen answers, with no second
 * notification and no second booking. A payment cancelled while it waited answers Cancelled:
 * nothing was authorised.
 */
export function paymentDetails(ctx: AdyenOperationContext, body: JsonObject): { status: number; body: Record<string, unknown> } {
  const details = body['details'];
  if (details === undefined) throw requiredField('details');
  if (!isObject(details)) throw invalidField('details', 'must be an object');
  const redirectResult = details['redirectResult'];
  if (redirectResult === undefined) throw requiredField('details.redirectResult');
  const psp = pspOfRedirectResult(redirectResult);
  const p = psp === null ? undefined : ctx.state.payments.get(psp);
  const auth = p?.authentication;
  if (p === undefined || auth === undefined || auth.redirectResult === null || auth.redirectResult !== redirectResult) throw invalidDetails();
  if (auth.detailsAtMs !== null) throw alreadyProcessed();
  settle(ctx, p, auth);
  return { status: 200, body: withReferences(detailsResponse(p), ctx.authentication?.detailsReferences ?? 'echo') };
}

/** The test mode detailsReferences: the answer's references as the account is set to send them. */
function withReferences(body: Record<string, unknown>, mode: NonNullable<AdyenAuthenticationSettings['detailsReferences']>): Record<string, unknown> {
  switch (mode) {
    case 'echo':
      return body;
    case 'other_psp':
      return { ...body, pspReference: 'ZZ00000000000000' };
    case 'other_merchant_reference':
      return { ...body, merchantReference: `${String(body['merchantReference'])}_other` };
    case 'no_merchant_reference': {
      const { merchantReference: _ref, ...rest } = body;
      return rest;
    }
  }
}

function settle(ctx: AdyenOperationContext, p: PaymentRecord, auth: PaymentAuthentication): void {
  auth.detailsAtMs = ctx.nowMs;
  if (p.cancelled) {
    // Cancelled while the shopper was away: the cancel's notification already said so.
    p.resultCode = 'Cancelled';
    return;
  }
  const refusalCode = auth.completed === true ? auth.thenRefusalCode : NOT_AUTHENTICATED_CODE;
  if (refusalCode === null) {
    p.resultCode = 'Authorised';
    p.authorised = p.amount.value;
    ctx.state.book({ bookedMs: ctx.nowMs, type: 'Authorised', payment: p, modificationReference: p.pspReference, amount: p.authorised });
    if (!p.manualCapture) {
      p.captured = p.authorised;
      p.captureClosed = true;
      ctx.state.book({ bookedMs: ctx.nowMs, type: 'Settled', payment: p, modificationReference: p.pspReference, amount: p.authorised });
    }
  } else {
    p.resultCode = 'Refused';
    p.refusalReasonCode = refusalCode;
    p.refusalReason = refusalText(refusalCode);
  }
  const success = p.resultCode === 'Authorised';
  ctx.notify({
    amount: p.amount,
    eventCode: 'AUTHORISATION',
    eventDate: eventDate(ctx.nowMs),
    merchantAccountCode: p.merchantAccount,
    merchantReference: p.merchantReference,
    paymentMethod: p.paymentMethod,
    pspReference: p.pspReference,
    reason: success ? (p.card === undefined ? '123456:3184:03/2030' : `123456:${p.card.last4}:${p.card.expiryMonth}/${p.card.expiryYear}`) : (p.refusalReason ?? 'Refused'),
    success: success ? 'true' : 'false',
  });
}

function detailsResponse(p: PaymentRecord): Record<string, unknown> {
  const authorised = p.resultCode === 'Authorised';
  return {
    additionalData: authorised ? { authCode: '123456', refusalReasonRaw: 'AUTHORISED', acquirerCode: 'SwitchyardSandbox', liabilityShift: 'true', threeDAuthenticated: 'true' } : { refusalReasonRaw: p.refusalReason ?? p.resultCode, acquirerCode: 'SwitchyardSandbox', threeDAuthenticated: String(p.authentication?.completed === true) },
    amount: { currency: p.amount.currency, value: authorised ? p.authorised : p.amount.value },
    merchantReference: p.merchantReference,
    ...(authorised && { paymentMethod: { brand: 'visa', type: 'scheme' } }),
    pspReference: p.pspReference,
    ...(p.refusalReason !== null && { refusalReason: p.refusalReason }),
    ...(p.refusalReasonCode !== null && { refusalReasonCode: p.refusalReasonCode }),
    resultCode: p.resultCode,
  };
}
