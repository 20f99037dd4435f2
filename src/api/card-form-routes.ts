// The hosted card form (GET /elements/card?key=pk_sy_…): a page the merchant frames on its checkout,
// so the merchant's own page never touches the card number. Refused for a key that is not valid
// (401) and for a merchant with no allowed origins (403): the page may only be framed by the
// merchant's origins (CSP frame-ancestors) and only tells them the payment method. `origin=` narrows
// both to one of them. Strict CSP: the page runs only its own script from this origin, posts only to
// this origin, submits no form and loads nothing else. Rate-limited per client address like
// POST /v1/tokens.

import express from 'express';
import type { Request, Response, Router } from 'express';
import { trustList } from '../ops/operator-auth.ts';
import { authenticatePublishableKey } from '../store/merchants.ts';
import type { ApiContext } from './api-context.ts';
import { setPageHeaders, staticPage } from './authentication-pages.ts';
import { CARD_FORM_SCRIPT, CARD_FORM_STYLE } from './card-form-assets.ts';
import { clientAddress } from './client-address.ts';
import { takeClientAddress } from './rate-limit.ts';
import type { BucketLimit } from './rate-limit.ts';
import { retryAfterSeconds } from './rate-limit-policy.ts';

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function cardFormCsp(frameAncestors: readonly string[]): string {
  return [
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "form-action 'none'", "base-uri 'none'",
    `frame-ancestors ${frameAncestors.join(' ')}`,
  ].join('; ');
}

function cardFormHtml(key: string, origins: readonly string[]): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Card</title><link rel="stylesheet" href="/elements/card.css"></head><body>
<form id="sy-card" method="post" autocomplete="on" novalidate data-key="${escape(key)}" data-origins="${escape(JSON.stringify(origins))}">
<label>Card number<input id="sy-number" inputmode="numeric" autocomplete="cc-number" maxlength="23" required></label>
<div class="row">
<label>Month<input id="sy-exp_month" inputmode="numeric" autocomplete="cc-exp-month" maxlength="2" placeholder="MM" required></label>
<label>Year<input id="sy-exp_year" inputmode="numeric" autocomplete="cc-exp-year" maxlength="4" placeholder="YYYY" required></label>
<label>Security code<input id="sy-cvc" inputmode="numeric" autocomplete="cc-csc" maxlength="4" required></label>
</div>
<label>Name on card<input id="sy-holder_name" autocomplete="cc-name"></label>
<button id="sy-save" type="submit">Save card</button>
<p id="sy-status" role="status" aria-live="polite"></p>
</form>
<script src="/elements/card.js"></script>
</body></html>
`;
}

export function cardFormRoutes(ctx: ApiContext, o: { readonly perClient: BucketLimit | null; readonly trustedProxies: readonly string[] }): Router {
  const router = express.Router();
  const proxies = o.trustedProxies.length === 0 ? null : trustList(o.trustedProxies);
  const perClient = o.perClient;

  router.get('/elements/card', async (req: Request, res: Response) => {
    const decision = perClient === null ? null : await takeClientAddress(perClient, clientAddress(req, proxies), res);
    if (decision !== null && !decision.allowed) {
      res.set('retry-after', String(retryAfterSeconds(decision)));
      return staticPage(res, 429, 'Too many requests', 'Too many requests: please wait a moment and try again.');
    }
    const key = typeof req.query['key'] === 'string' ? req.query['key'] : '';
    const merchant = /^[A-Za-z0-9_-]{1,200}$/.test(key) ? await authenticatePublishableKey(ctx.rt.database.db, key, ctx.rt.now()) : null;
    if (merchant === null) return staticPage(res, 401, 'Card form', 'This card form needs a valid publishable key (?key=pk_sy_…).');
    res.locals['merchantId'] = merchant.id;
    res.locals['apiKey'] = merchant.key;
    let origins = merchant.allowedOrigins;
    if (origins.length === 0) return staticPage(res, 403, 'Card form', 'This card form is not enabled: the shop has not set the origins allowed to show it (switchyard merchants set-origins).');
    const wanted = req.query['origin'];
    if (wanted !== undefined) {
      if (typeof wanted !== 'string' || !origins.includes(wanted)) return staticPage(res, 403, 'Card form', 'The origin given is not one the shop allowed.');
      origins = [wanted];
    }
    setPageHeaders(res, cardFormCsp(origins));
    // A framed page: the static pages' X-Frame-Options DENY would forbid what frame-ancestors allows.
    res.removeHeader('x-frame-options');
    res.status(200).type('text/html; charset=utf-8').send(cardFormHtml(key, origins));
  });

  router.get('/elements/card.js', (_req, res) => {
    res.set({ 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' }).type('text/javascript; charset=utf-8').send(CARD_FORM_SCRIPT);
  });
  router.get('/elements/card.css', (_req, res) => {
    res.set({ 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' }).type('text/css; charset=utf-8').send(CARD_FORM_STYLE);
  });
  return router;
}
