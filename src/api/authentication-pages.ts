// What the customer's browser is shown on the gateway's authentication routes: static pages, and
// the auto-submitting form that posts to the provider's page. Every answer is uncached, sends no
// Referer on (the URLs carry tokens), may not be framed, and runs no script but the form's own,
// named by a per-response nonce; a form may only post to the provider's origin.

import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import type { RedirectAction } from '../core/payment.ts';

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STATIC_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Headers on every answer of the authentication routes, redirects included. */
export function setPageHeaders(res: Response, csp: string = STATIC_CSP): void {
  res.set({
    'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'content-security-policy': csp,
    'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY',
  });
}

function html(res: Response, status: number, title: string, body: string, csp: string = STATIC_CSP): void {
  setPageHeaders(res, csp);
  res.status(status).type('text/html; charset=utf-8')
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head><body>${body}</body></html>\n`);
}

/** A page that does nothing: the answer to anything that may not go on. */
export function staticPage(res: Response, status: number, title: string, text: string): void {
  html(res, status, title, `<p>${escape(text)}</p>`);
}

/** The provider wants a POST with data: a form the page's one script submits (a button without script). */
export function providerFormPage(res: Response, action: RedirectAction & { readonly method: 'POST' }): void {
  let origin: string;
  try {
    origin = new URL(action.url).origin;
  } catch {
    return staticPage(res, 502, 'Authentication', 'The payment provider gave no page to go to. Please return to the shop.');
  }
  const nonce = randomBytes(16).toString('base64');
  const inputs = Object.entries(action.data ?? {}).map(([k, v]) => `<input type="hidden" name="${escape(k)}" value="${escape(v)}">`).join('');
  const csp = `default-src 'none'; script-src 'nonce-${nonce}'; form-action ${origin}; base-uri 'none'; frame-ancestors 'none'`;
  html(res, 200, 'Authentication',
    `<form id="go" method="post" action="${escape(action.url)}">${inputs}<noscript><button type="submit">Continue</button></noscript></form><script nonce="${nonce}">document.getElementById('go').submit()</script>`,
    csp);
}
