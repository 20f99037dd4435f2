// The customer's side of authentication (issue 27), reached by the shopper's browser, with no API
// key: the attempt id in the path is the capability (unguessable, and good for one payment only).
//
// GET /authenticate/:attemptId — sends the browser on to the provider's page: a 303 for a GET
// redirect action, an auto-submitting form for a POST action with data.
// GET|POST /authenticate/:attemptId/return — where the provider's page sends the browser back. Only
// the fields the resume needs are kept (Adyen's redirectResult); Stripe's payment_intent and
// payment_intent_client_secret are dropped unread — the resume asks Stripe, never the query string.
// Then the browser goes to the merchant's return_url with payment_id, or to the next connector's
// page when a failover asked for authentication again.

import express from 'express';
import type { Request, Response, Router } from 'express';
import { recordCustomerReturn, waitForPayment } from '../app/payment-service.ts';
import { returnedForResume } from '../core/authentication.ts';
import type { Payment } from '../core/payment.ts';
import { loadAggregateByAttempt } from '../store/payment-load.ts';
import { authenticationPagePath } from '../resources/serialize.ts';
import type { ApiContext } from './api-context.ts';

/** How long the return waits for the resume's answer before sending the customer on (the payment may still be in flight). */
const RETURN_WAIT_MS = 8_000;

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(res: Response, status: number, title: string, body: string): void {
  res.status(status).set({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head><body>${body}</body></html>\n`);
}

function merchantReturn(p: Payment): string | null {
  const url = p.authentication?.returnUrl ?? null;
  if (url === null) return null;
  const u = new URL(url);
  u.searchParams.set('payment_id', p.id);
  return u.toString();
}

function awaiting(p: Payment, attemptId: string): NonNullable<Payment['attempts'][number]['authentication']> | null {
  const a = p.attempts[p.attempts.length - 1];
  if (p.state !== 'requires_action' || a?.id !== attemptId || a.status !== 'authenticating') return null;
  return a.authentication?.stage === 'awaiting_customer' ? a.authentication : null;
}

/** Where the browser goes after a return: the next page to authenticate on, or the merchant. */
function sendOn(res: Response, p: Payment): void {
  const current = p.attempts[p.attempts.length - 1];
  if (current !== undefined && awaiting(p, current.id) !== null) {
    res.redirect(303, authenticationPagePath(current.id));
    return;
  }
  const back = merchantReturn(p);
  if (back === null) return page(res, 200, 'Payment', '<p>You may close this page.</p>');
  res.redirect(303, back);
}

function returnedFields(req: Request): Record<string, string> {
  const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, unknown>;
  return returnedForResume(body, req.query);
}

export function authenticationRoutes(ctx: ApiContext): Router {
  const router = express.Router();
  const db = ctx.rt.database.db;
  const form = express.urlencoded({ extended: false, limit: '64kb' });

  router.get('/authenticate/:attemptId', async (req, res) => {
    const p = await loadAggregateByAttempt(db, req.params.attemptId);
    if (p === null) return page(res, 404, 'Not found', '<p>No such payment.</p>');
    const auth = awaiting(p, req.params.attemptId);
    if (auth === null || auth.action === null) return sendOn(res, p);
    const action = auth.action;
    if (action.method === 'GET') {
      res.redirect(303, action.url);
      return;
    }
    // POST with data: an auto-submitting form (the provider's page takes the data as its body).
    const inputs = Object.entries(action.data ?? {}).map(([k, v]) => `<input type="hidden" name="${escape(k)}" value="${escape(v)}">`).join('');
    page(res, 200, 'Authentication', `<form id="go" method="post" action="${escape(action.url)}">${inputs}<noscript><button type="submit">Continue</button></noscript></form><script>document.getElementById('go').submit()</script>`);
  });

  const onReturn = async (req: Request<{ attemptId: string }>, res: Response): Promise<void> => {
    const attemptId = req.params.attemptId;
    const p = await loadAggregateByAttempt(db, attemptId);
    if (p === null) return page(res, 404, 'Not found', '<p>No such payment.</p>');
    let latest = p;
    if (awaiting(p, attemptId) !== null) {
      const r = await recordCustomerReturn(ctx.rt, p, attemptId, returnedFields(req));
      if (r.kind === 'applied') latest = r.payment;
      // The resume's answer usually comes within moments: wait a little so the merchant's page sees it.
      const settled = await waitForPayment(ctx.rt, p.merchantId, p.id, (x) => x.state !== 'authorizing' && x.state !== 'auth_unknown', RETURN_WAIT_MS);
      if (settled !== null) latest = settled;
    }
    sendOn(res, latest);
  };
  router.get('/authenticate/:attemptId/return', onReturn);
  router.post('/authenticate/:attemptId/return', form, onReturn);
  return router;
}
