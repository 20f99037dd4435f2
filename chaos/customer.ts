// The customer's browser, as plain HTTP (no browser): follows a payment's next_action.url through
// the gateway's page, the provider's challenge page and the gateway's return endpoint, to the
// merchant's return_url. Generic on purpose — redirects (3xx + Location) and HTML forms (an
// auto-submitting POST form, or the page's buttons) — so any sandbox that presents a challenge the
// way the providers do works without changes here.

import { autoSubmitted, formsOf, sendPageRequest } from '../src/conformance/customer-browser.ts';
import type { HtmlForm, PageAnswer } from '../src/conformance/customer-browser.ts';

export type CustomerChoice = 'complete' | 'fail';

/** The buttons the sandboxes' challenge pages show (issue 27). */
export const BUTTONS: Readonly<Record<CustomerChoice, string>> = { complete: 'Complete authentication', fail: 'Fail authentication' };

export interface CustomerResult {
  /**
   * returned: back at the merchant's return_url (paymentId is what the gateway added); stale: a page
   * with nothing to submit (the provider or the gateway says the authentication is over); lost: the
   * browser gave up (connections failed until the deadline, or a page it could not read).
   */
  readonly outcome: 'returned' | 'stale' | 'lost';
  readonly paymentId: string | null;
  /** Requests the browser made (each retry counts). */
  readonly requests: number;
  readonly detail: string;
}

export interface CustomerOptions {
  readonly choice: CustomerChoice;
  /** The Adyen sandbox serves its pages over https with its own certificate authority. */
  readonly ca?: string;
  /** The merchant's return_url: a Location starting with it ends the walk (it is not fetched). */
  readonly returnUrl: string;
  /** Called on the challenge page before the button is pressed (a customer who takes their time). */
  readonly beforeSubmit?: () => Promise<void>;
  /** Stop on the challenge page without pressing anything (the customer closes the tab). */
  readonly leaveOnChallenge?: boolean;
  readonly deadlineMs: number;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Walks from `startUrl` to the merchant's return_url, pressing the chosen button on the challenge page. */
export async function actAsCustomer(startUrl: string, o: CustomerOptions): Promise<CustomerResult> {
  const deadline = Date.now() + o.deadlineMs;
  let requests = 0;
  const trail: string[] = [];
  let next: { url: string; method: 'GET' | 'POST'; form: Record<string, string> } = { url: startUrl, method: 'GET', form: {} };
  for (let hops = 0; hops < 20; hops++) {
    if (next.url.startsWith(o.returnUrl)) {
      return { outcome: 'returned', paymentId: new URL(next.url).searchParams.get('payment_id'), requests, detail: trail.join(' > ') };
    }
    // One page, retried while the connection fails or the server answers 5xx (a process killed, a
    // provider outage): a GET is safe to repeat; a form POST is repeated too, as a customer presses
    // the button again (the provider then shows its stale page, or the same answer).
    let res: PageAnswer | null = null;
    let wait = 100;
    for (;;) {
      requests += 1;
      try {
        res = await sendPageRequest(new URL(next.url), next.method, next.form, o.ca);
        if (res.status < 500) break;
      } catch {
        res = null;
      }
      if (Date.now() > deadline) return { outcome: 'lost', paymentId: null, requests, detail: `${trail.join(' > ')} > ${next.method} ${new URL(next.url).pathname}: no answer by the deadline` };
      await sleep(wait);
      wait = Math.min(wait * 2, 1_000);
    }
    const here = next.url;
    trail.push(`${next.method} ${new URL(here).pathname} ${res.status}`);
    const location = res.location;
    if (res.status >= 300 && res.status < 400 && location !== undefined) {
      next = { url: new URL(location, here).toString(), method: 'GET', form: {} };
      continue;
    }
    const html = res.body;
    const forms = formsOf(html);
    const chosen = forms.find((f) => f.buttons.includes(BUTTONS[o.choice]));
    let form: HtmlForm | undefined;
    if (chosen !== undefined) {
      if (o.leaveOnChallenge === true) return { outcome: 'stale', paymentId: null, requests, detail: `${trail.join(' > ')} > left on the challenge page` };
      await o.beforeSubmit?.();
      form = chosen;
    } else {
      form = autoSubmitted(html) ?? undefined;
    }
    // A page with nothing to press (the provider's "no longer pending", 404/409, or the gateway's "you may close this page").
    if (form === undefined) return { outcome: 'stale', paymentId: null, requests, detail: `${trail.join(' > ')}: nothing to submit` };
    const action = new URL(form.action === '' ? here : form.action, here);
    next = form.method === 'POST'
      ? { url: action.toString(), method: 'POST', form: { ...form.fields } }
      : { url: `${action.origin}${action.pathname}?${new URLSearchParams(form.fields).toString()}`, method: 'GET', form: {} };
  }
  return { outcome: 'lost', paymentId: null, requests, detail: `${trail.join(' > ')}: too many hops` };
}
