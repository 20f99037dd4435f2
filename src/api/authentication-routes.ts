// The customer's side of authentication (issue 27), reached by the shopper's browser with no API
// key. The attempt id in the path is no capability; the token in the query is (issue 42,
// src/resources/authentication-tokens.ts): the page token in next_action.url, the return token in
// the URL the provider sends the customer back to. Both end with the authentication window.
//
// GET /authenticate/:attemptId?token= — sends the browser on to the provider's page: a 303 for a
// GET redirect action, an auto-submitting form for a POST action with data.
// GET|POST /authenticate/:attemptId/return?token= — where the provider's page sends the browser
// back. It resumes the payment only when it carries the provider's evidence for the attempt (the
// connector's readCustomerReturn: Stripe's payment_intent and redirect_status, Adyen's
// redirectResult), and keeps only what the connector's resume reads. Then the browser goes to the
// merchant's return_url with payment_id, or to the next connector's page after a failover.
// Anything else gets a static page and changes nothing: no history row, no event, no provider call.
// HEAD is 405 (express would run the GET for it). Rate limits: per client address, requests that
// prove no token are counted, and once they are used up that address is refused before any
// database read (a shopper with a valid link never uses up its address's, shared behind a NAT);
// per attempt, requests with its token are counted (nobody without it can use up the customer's).

import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { recordCustomerReturn, waitForPayment } from '../app/payment-service.ts';
import { customerReturnFields } from '../core/authentication.ts';
import { isId } from '../core/ids.ts';
import type { Attempt, AttemptAuthentication, Payment } from '../core/payment.ts';
import { trustList } from '../ops/operator-auth.ts';
import { authenticationPagePath, tokenMatches } from '../resources/authentication-tokens.ts';
import type { TokenPurpose } from '../resources/authentication-tokens.ts';
import { loadAggregateByAttempt } from '../store/payment-load.ts';
import type { ApiContext } from './api-context.ts';
import { providerFormPage, setPageHeaders, staticPage } from './authentication-pages.ts';
import { clientAddress } from './client-address.ts';
import { TokenBuckets } from './process-buckets.ts';
import type { RateLimit } from './process-buckets.ts';

/** How long the return waits for the resume's answer before sending the customer on (the payment may still be in flight). */
const RETURN_WAIT_MS = 8_000;

export interface AuthenticationLimits {
  /** Per client address (SWITCHYARD_TRUSTED_PROXIES resolves it): requests without a valid token. */
  readonly perClient: RateLimit;
  /** Per attempt: requests with the attempt's token. */
  readonly perAttempt: RateLimit;
}

/** A valid link never fails its token check; a shopper needs a handful of requests per attempt (the page, the return, reloads, a second round). */
export const DEFAULT_AUTHENTICATION_LIMITS: AuthenticationLimits = {
  perClient: { perSecond: 0.5, burst: 30 },
  perAttempt: { perSecond: 0.2, burst: 20 },
};

export interface AuthenticationRouteOptions {
  /** null: no limits (tests that do not test them). */
  readonly limits: AuthenticationLimits | null;
  /** Proxies whose X-Forwarded-For names the client (addresses or CIDR ranges). */
  readonly trustedProxies: readonly string[];
}

const PAGE = '/authenticate/:attemptId';
const RETURN = '/authenticate/:attemptId/return';

interface Held {
  readonly p: Payment;
  readonly attempt: Attempt;
}

function merchantReturn(p: Payment): string | null {
  const url = p.authentication?.returnUrl ?? null;
  if (url === null) return null;
  const u = new URL(url);
  u.searchParams.set('payment_id', p.id);
  return u.toString();
}

function awaiting(p: Payment, attemptId: string): AttemptAuthentication | null {
  const a = p.attempts[p.attempts.length - 1];
  if (p.state !== 'requires_action' || a?.id !== attemptId || a.status !== 'authenticating') return null;
  return a.authentication?.stage === 'awaiting_customer' ? a.authentication : null;
}

/** After a return with the attempt's token and the provider's evidence: the next page to authenticate on, or the merchant. */
function sendOn(res: Response, p: Payment): void {
  const current = p.attempts[p.attempts.length - 1];
  const key = p.authentication?.tokenKey;
  setPageHeaders(res);
  if (current !== undefined && key !== undefined && awaiting(p, current.id) !== null) {
    res.redirect(303, authenticationPagePath(key, current.id));
    return;
  }
  const back = merchantReturn(p);
  if (back === null) return staticPage(res, 200, 'Payment', 'You may close this page.');
  res.redirect(303, back);
}

const notValid = (res: Response): void => staticPage(res, 404, 'Not found', 'This payment link is not valid.');

export function authenticationRoutes(ctx: ApiContext, o: AuthenticationRouteOptions): Router {
  const router = express.Router();
  const db = ctx.rt.database.db;
  const form = express.urlencoded({ extended: false, limit: '64kb' });
  const proxies = o.trustedProxies.length === 0 ? null : trustList(o.trustedProxies);
  const perClient = o.limits === null ? null : new TokenBuckets(o.limits.perClient);
  const perAttempt = o.limits === null ? null : new TokenBuckets(o.limits.perAttempt);

  const tooMany = (res: Response, waitS: number): void => {
    res.set('retry-after', String(waitS));
    staticPage(res, 429, 'Too many requests', 'Too many requests: please wait a moment and try again.');
  };
  const limitClient = (req: Request, res: Response, next: NextFunction): void => {
    const client = clientAddress(req, proxies);
    const wait = perClient?.peek(client) ?? 0;
    if (wait > 0) return tooMany(res, wait);
    res.locals['client'] = client;
    next();
  };
  const attemptAllowed = (res: Response, attemptId: string): boolean => {
    const wait = perAttempt?.take(attemptId) ?? 0;
    if (wait > 0) tooMany(res, wait);
    return wait === 0;
  };

  /** The payment and attempt when the request carries the attempt's token for `purpose` within its window; otherwise answered here. */
  async function tokenHolder(req: Request<{ attemptId: string }>, res: Response, purpose: TokenPurpose): Promise<Held | null> {
    const attemptId = req.params.attemptId;
    // Nothing that is not an attempt id is looked up.
    const p = isId('attempt', attemptId) ? await loadAggregateByAttempt(db, attemptId) : null;
    const attempt = p?.attempts.find((a) => a.id === attemptId);
    const expiresAt = attempt?.authentication?.expiresAt ?? null;
    if (p === null || attempt === undefined || expiresAt === null || !tokenMatches(p.authentication?.tokenKey, purpose, attemptId, req.query['token'])) {
      perClient?.take(String(res.locals['client']));
      notValid(res);
      return null;
    }
    if (ctx.rt.now().getTime() >= Date.parse(expiresAt)) {
      staticPage(res, 410, 'Expired', 'This authentication has expired. Please return to the shop.');
      return null;
    }
    return attemptAllowed(res, attemptId) ? { p, attempt } : null;
  }

  const methodNotAllowed = (allow: string) => (_req: Request, res: Response): void => {
    res.set('allow', allow);
    staticPage(res, 405, 'Method not allowed', 'Method not allowed.');
  };
  // Before the GET routes: express answers HEAD with the GET handler otherwise.
  router.head(PAGE, methodNotAllowed('GET'));
  router.head(RETURN, methodNotAllowed('GET, POST'));

  router.get(PAGE, limitClient, async (req: Request<{ attemptId: string }>, res: Response) => {
    const held = await tokenHolder(req, res, 'page');
    if (held === null) return;
    const action = awaiting(held.p, held.attempt.id)?.action ?? null;
    // The page only ever leads to the provider: never to the merchant, never to another attempt.
    if (action === null) return staticPage(res, 200, 'Payment', 'This authentication is no longer pending. You may close this page.');
    if (action.method === 'GET') {
      setPageHeaders(res);
      res.redirect(303, action.url);
      return;
    }
    providerFormPage(res, { ...action, method: 'POST' });
  });

  const onReturn = async (req: Request<{ attemptId: string }>, res: Response): Promise<void> => {
    const held = await tokenHolder(req, res, 'return');
    if (held === null) return;
    const { p, attempt } = held;
    const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, unknown>;
    const connector = ctx.rt.connectors.get(attempt.connector);
    const reading = connector?.readCustomerReturn?.(customerReturnFields(body, req.query), { providerRef: attempt.providerRef })
      ?? { ok: false as const, why: `connector ${attempt.connector} reads no customer returns here` };
    if (!reading.ok) {
      ctx.rt.logger.info({ attempt_id: attempt.id, why: reading.why }, 'customer return without the provider\'s evidence: nothing resumed');
      return staticPage(res, 400, 'Payment', 'This page does not confirm an authentication. Please return to the shop.');
    }
    let latest = p;
    if (awaiting(p, attempt.id) !== null) {
      const r = await recordCustomerReturn(ctx.rt, p, attempt.id, reading.keep);
      if (r.kind === 'applied') latest = r.payment;
      // The resume's answer usually comes within moments: wait a little so the merchant's page sees it.
      const settled = await waitForPayment(ctx.rt, p.merchantId, p.id, (x) => x.state !== 'authorizing' && x.state !== 'auth_unknown', RETURN_WAIT_MS);
      if (settled !== null) latest = settled;
    }
    sendOn(res, latest);
  };
  router.get(RETURN, limitClient, onReturn);
  router.post(RETURN, limitClient, form, onReturn);
  return router;
}
