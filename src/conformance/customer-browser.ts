// A customer's browser without a browser: what the kit (and anything else that must drive a
// provider's authentication page without Chromium) uses to play the shopper. It follows redirects
// by hand, reads the provider's plain-HTML page, submits the form of the button it is told to press
// (or the page's auto-submitting form), and stops at the first answer from the return URL's origin.
// Only the small HTML the sandboxes serve is understood: forms, hidden inputs, buttons.

export interface BrowserStart {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly data?: Readonly<Record<string, string>>;
}

export interface Landing {
  /** The URL the browser ended on (on the stop origin). */
  readonly url: string;
  readonly method: 'GET' | 'POST';
  /** The form body, when the provider's page POSTed back. */
  readonly form: Readonly<Record<string, string>>;
  /** The URL's query, parsed. */
  readonly query: Readonly<Record<string, string>>;
}

export interface HtmlForm {
  readonly method: 'GET' | 'POST';
  readonly action: string;
  readonly fields: Record<string, string>;
  readonly buttons: readonly string[];
}

import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';

const MAX_HOPS = 12;

const unescapeHtml = (s: string): string =>
  s.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n))).replace(/&quot;/g, '"').replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\b${name}\\s*=\\s*("([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  if (m === null) return undefined;
  return unescapeHtml(m[2] ?? m[3] ?? m[4] ?? '');
}

/** Every form on a page: its method, action, named inputs and button labels. */
export function formsOf(html: string): HtmlForm[] {
  const forms: HtmlForm[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const open = m[1] ?? '';
    const inner = m[2] ?? '';
    const fields: Record<string, string> = {};
    for (const input of inner.matchAll(/<input\b[^>]*>/gi)) {
      const name = attr(input[0], 'name');
      if (name !== undefined) fields[name] = attr(input[0], 'value') ?? '';
    }
    const buttons = [...inner.matchAll(/<button\b[^>]*>([\s\S]*?)<\/button>/gi)].map((b) => unescapeHtml((b[1] ?? '').replace(/<[^>]*>/g, '').trim()));
    forms.push({ method: (attr(open, 'method') ?? 'GET').toUpperCase() === 'POST' ? 'POST' : 'GET', action: attr(open, 'action') ?? '', fields, buttons });
  }
  return forms;
}

/** A page that submits itself on load (the gateway's POST redirect): one form and a script calling submit(). */
export function autoSubmitted(html: string): HtmlForm | null {
  const forms = formsOf(html);
  return forms.length === 1 && /\.submit\(\)/.test(html) ? forms[0]! : null;
}

function landing(url: URL, method: 'GET' | 'POST', form: Record<string, string>): Landing {
  return { url: url.toString(), method, form, query: Object.fromEntries(url.searchParams) };
}

export interface PressOptions {
  /** The button to press on the provider's page ("Complete authentication", "Fail authentication"). */
  readonly button: string;
  /** Once the button is pressed, the first request to this origin is returned instead of sent. */
  readonly stopAtOrigin: string;
  /** A certificate authority to trust for https pages (a sandbox's own certificate), besides the system's. */
  readonly ca?: string;
}

export interface PageAnswer {
  readonly status: number;
  readonly location: string | undefined;
  readonly body: string;
}

const PAGE_TIMEOUT_MS = 30_000;

/** One request, no redirect followed (node:http(s), so a sandbox's own CA can be trusted). */
export function sendPageRequest(url: URL, method: 'GET' | 'POST', form: Readonly<Record<string, string>>, ca: string | undefined): Promise<PageAnswer> {
  const payload = method === 'POST' ? new URLSearchParams(form).toString() : undefined;
  const headers: Record<string, string> = { accept: 'text/html', ...(payload === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(payload)) }) };
  return new Promise((resolve, reject) => {
    const onAnswer = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    const req = url.protocol === 'https:'
      ? httpsRequest(url, { method, headers, timeout: PAGE_TIMEOUT_MS, ...(ca === undefined ? {} : { ca: [...rootCertificates, ca] }) }, onAnswer)
      : httpRequest(url, { method, headers, timeout: PAGE_TIMEOUT_MS }, onAnswer);
    req.on('timeout', () => req.destroy(new Error(`${url.origin}${url.pathname} did not answer in ${PAGE_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Opens `start`, follows redirects and auto-submitting forms, presses `button` on the provider's
 * page, and follows on (through the gateway's return endpoint, when it is on another origin) until
 * the browser is about to request `stopAtOrigin`: that request is returned, not sent. The kit stops
 * at its return URL (the connector's returnUrl) to hand what came back to resume(); the chaos
 * customer stops at the merchant's return_url.
 */
export async function pressButton(start: BrowserStart, o: PressOptions): Promise<Landing> {
  const stop = new URL(o.stopAtOrigin).origin;
  let url = new URL(start.url);
  let method: 'GET' | 'POST' = start.method;
  let body: Record<string, string> = { ...(start.data ?? {}) };
  let pressed = false;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    if (pressed && url.origin === stop) return landing(url, method, body);
    const res = await sendPageRequest(url, method, body, o.ca);
    if (res.status >= 300 && res.status < 400) {
      const to = res.location;
      if (to === undefined) throw new Error(`redirect ${res.status} without Location from ${url.origin}${url.pathname}`);
      url = new URL(to, url);
      // 307/308 keep the method and body; 301-303 turn into a GET.
      if (res.status !== 307 && res.status !== 308) {
        method = 'GET';
        body = {};
      }
      continue;
    }
    const html = res.body;
    const where = `${url.origin}${url.pathname}`;
    if (res.status !== 200) throw new Error(`${where} answered ${res.status}: ${text(html)}`);
    const auto = autoSubmitted(html);
    const form = auto ?? (pressed ? undefined : formsOf(html).find((f) => f.buttons.includes(o.button)));
    if (form === undefined) throw new Error(`no "${o.button}" button on ${where}${pressed ? ' (already pressed)' : ''}: ${text(html)}`);
    if (auto === null) pressed = true;
    url = new URL(form.action === '' ? url.toString() : form.action, url);
    method = form.method;
    body = { ...form.fields };
    if (method === 'GET') {
      for (const [k, v] of Object.entries(body)) url.searchParams.set(k, v);
      body = {};
    }
  }
  throw new Error(`more than ${MAX_HOPS} hops from ${new URL(start.url).origin}`);
}

const text = (html: string): string => html.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200);
