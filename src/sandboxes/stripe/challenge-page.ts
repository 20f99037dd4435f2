// The hosted 3-D Secure page (hooks.stripe.com in live): what the customer's browser sees after the
// merchant sends it to next_action.redirect_to_url.url. Plain HTML, no API key: the page's token in
// its URL names the PaymentIntent's pending authentication. "Complete authentication" lets the
// issuer answer; "Fail authentication" fails it. Either way the browser goes to the return_url with
// payment_intent, payment_intent_client_secret and redirect_status, as Stripe sends it.

export const CHALLENGE_PATH = /^\/3ds\/authenticate\/(pi_[A-Za-z0-9]+)$/;

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function challengePage(piId: string, token: string, amountText: string): string {
  const form = (outcome: string, label: string) =>
    `<form method="post" action="/3ds/authenticate/${escape(piId)}"><input type="hidden" name="token" value="${escape(token)}"><input type="hidden" name="outcome" value="${outcome}"><button type="submit">${label}</button></form>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>3D Secure test page</title></head>
<body><h1>3D Secure 2 test page</h1><p>Stripe sandbox: authenticate the payment of ${escape(amountText)}.</p>
${form('complete', 'Complete authentication')}
${form('fail', 'Fail authentication')}
</body></html>
`;
}

export function stalePage(): string {
  return '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>3D Secure</title></head><body><p>This authentication is no longer pending.</p></body></html>\n';
}
