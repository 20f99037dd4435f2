// The customer's return proves it came from the customer (issue 42 §1, §5), on both connectors,
// without a browser: the kit's plain-HTTP customer (src/conformance/customer-browser.ts) plays
// the shopper at the sandboxes' hosted pages and hands back the request the provider's page sends
// to the gateway's return endpoint, which the test then sends itself (or forges).
//
// A return without the attempt's return token, or without the provider's evidence for the attempt
// (Stripe: its own payment_intent and a redirect_status; Adyen: a redirectResult), is a static page
// and changes nothing: no history row, no outbox row (no provider call), no merchant event, the same
// expires_at. The page never redirects to the merchant; HEAD is 405; the routes are rate-limited
// per client address (X-Forwarded-For from a trusted proxy; requests without a valid token) and per
// attempt (token holders only);
// only what the connector's resume reads is stored; Adyen's /payments/details answer about another
// payment is never an approval. Stripe is reached by USD, Adyen by EUR.
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Operators } from '../../../src/ops/operators.ts';
import { pressButton } from '../../../src/conformance/customer-browser.ts';
import type { Landing } from '../../../src/conformance/customer-browser.ts';
import { attemptToken } from '../../../src/resources/authentication-tokens.ts';
import { paymentResource } from '../../../src/resources/schemas.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { until } from '../observability/helpers.ts';

const CHALLENGE_CARD = '4000002760003184';
const SHOP = 'http://127.0.0.1:9/shop/done';
const MIN = 60_000;
const LIMITS = { perClient: { perSecond: 0.001, burst: 15 }, perAttempt: { perSecond: 0.001, burst: 10 } };

const CONFIG = `
connectors:
  adyen_a:
    type: adyen
    endpoint: sandbox
    api_key: sandbox
    merchant_account: SwitchyardSandbox
    hmac_keys: ["44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"]
    basic_auth: { username: switchyard, password: sandbox }
    timeout_ms: 1500
    breaker: { volume_threshold: 50 }
  stripe_b:
    type: stripe
    secret_key: sk_test_b
    webhook_secrets: [whsec_b]
    timeout_ms: 1500
    breaker: { volume_threshold: 50 }
routing:
  rules:
    - name: usd-stripe
      when: { currency: [USD] }
      priority: [stripe_b]
  default: { priority: [adyen_a] }
  max_attempts: 2
`;

let api: ApiGateway;
let adyen: AdyenSandbox;
let offsetMs = 0;

beforeAll(async () => {
  api = await startApiGateway('i42_customer_return', {
    authorizationWaitMs: 5_000, modificationWaitMs: 5_000, authenticationLimits: LIMITS,
    // 127.0.0.1 is a trusted proxy here: each test names its client in X-Forwarded-For.
    ops: { operators: new Operators([]), cookies: { secure: false, trustedProxies: ['127.0.0.1'] } },
  }, CONFIG, { now: () => new Date(Date.now() + offsetMs), relaySweepMs: 200 }, true);
  adyen = api.gw.rt.sandboxes.find((s) => s.account === 'adyen_a') as AdyenSandbox;
});
afterAll(async () => {
  await api?.close();
});
afterEach(async () => {
  await adyen.configureAuthentication({ redirectMethod: 'GET', forceNative: false, detailsReferences: 'echo' });
  await adyen.configureWebhooks({ enabled: true });
});

type PaymentResource = ReturnType<typeof paymentResource.parse>;
const db = () => api.gw.db.db;
const getPayment = async (id: string): Promise<PaymentResource> => paymentResource.parse((await api.call('GET', `/v1/payments/${id}`)).json);

async function challenged(currency: 'EUR' | 'USD'): Promise<PaymentResource> {
  const created = await api.call('POST', '/v1/payments', { body: paymentBody({ amount: 1000, currency, payment_method: { type: 'card', test_card: CHALLENGE_CARD }, return_url: SHOP }) });
  expect(created.status, created.text).toBe(201);
  const p = paymentResource.parse(created.json);
  expect(p.status).toBe('requires_action');
  expect(p.next_action!.url).toMatch(/\/authenticate\/att_[0-9a-z]+\?token=[A-Za-z0-9_-]{43}$/);
  return p;
}

const attemptOf = (p: PaymentResource): string => p.attempts[p.attempts.length - 1]!.id;

async function returnToken(p: PaymentResource): Promise<string> {
  const r = await db().execute<{ key: string }>(sql`SELECT authentication->>'tokenKey' AS key FROM payments WHERE id = ${p.id}`);
  return attemptToken(r.rows[0]!.key, 'return', attemptOf(p));
}

/** The shopper at the provider's page: the request its page sends back to the gateway (not sent). */
function shopperPresses(p: PaymentResource, button = 'Complete authentication'): Promise<Landing> {
  return pressButton({ url: p.next_action!.url, method: 'GET' }, { button, stopAtOrigin: api.url, ca: adyen.caPem });
}

interface Answer { readonly status: number; readonly location: string | null; readonly csp: string | null; readonly body: string }

async function send(path: string, client: string, o: { method?: string; form?: Record<string, string> } = {}): Promise<Answer> {
  const res = await fetch(new URL(path, api.url), {
    method: o.method ?? (o.form === undefined ? 'GET' : 'POST'), redirect: 'manual',
    headers: { 'x-forwarded-for': client, ...(o.form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
    ...(o.form === undefined ? {} : { body: new URLSearchParams(o.form).toString() }),
  });
  return { status: res.status, location: res.headers.get('location'), csp: res.headers.get('content-security-policy'), body: await res.text() };
}

const sendLanding = (l: Landing, client: string): Promise<Answer> => {
  const u = new URL(l.url);
  return send(`${u.pathname}${u.search}`, client, l.method === 'POST' ? { form: { ...l.form } } : {});
};

/** Everything a return could write: history, outbox (provider calls, timers, events), merchant events, the attempt. */
async function footprint(p: PaymentResource): Promise<unknown> {
  const r = await db().execute(sql`SELECT
      (SELECT count(*) FROM payment_transitions WHERE payment_id = ${p.id})::int AS transitions,
      (SELECT count(*) FROM outbox WHERE payment_id = ${p.id})::int AS outbox,
      (SELECT count(*) FROM merchant_events WHERE payment_id = ${p.id})::int AS events,
      (SELECT row_to_json(a)::text FROM payment_attempts a WHERE id = ${attemptOf(p)}) AS attempt`);
  return r.rows[0];
}

/** The footprint once the provider's own events about the new payment have been taken in (a webhook may still be on its way). */
async function settledFootprint(p: PaymentResource): Promise<unknown> {
  let last = await footprint(p);
  for (let quiet = 0; quiet < 3;) {
    await new Promise((r) => setTimeout(r, 250));
    const now = await footprint(p);
    quiet = JSON.stringify(now) === JSON.stringify(last) ? quiet + 1 : 0;
    last = now;
  }
  return last;
}

function expectStatic(a: Answer, what: string): void {
  expect([400, 404], `${what}: ${a.status} ${a.body}`).toContain(a.status);
  expect(a.location, what).toBeNull();
  expect(a.csp, what).toContain("default-src 'none'");
}

for (const [name, currency, evidence] of [
  ['Stripe', 'USD', (pi: string) => ({ payment_intent: pi, redirect_status: 'succeeded' })],
  ['Adyen', 'EUR', () => ({ redirectResult: 'eyJwIjoiQUJDIn0' })],
] as const) {
  describe(`${name}: the customer's return`, () => {
    it('forged returns change nothing (no history, no provider call, no event, same expires_at); the real return resumes', async () => {
      const client = `198.51.100.${currency === 'USD' ? 1 : 2}`;
      const p = await challenged(currency);
      const other = await challenged(currency);
      const attemptId = attemptOf(p);
      const pi = p.attempts[0]!.provider_reference!;
      const token = await returnToken(p);
      const pageToken = new URL(p.next_action!.url).searchParams.get('token')!;
      const before = await settledFootprint(p);
      const q = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
      const base = `/authenticate/${attemptId}/return`;
      const forgeries: [string, Parameters<typeof send>[2]][] = [
        [`${base}?${q(evidence(pi))}`, {}],
        [base, { form: evidence(pi) }],
        [`${base}?${q({ token: pageToken, ...evidence(pi) })}`, {}],
        [`${base}?${q({ token: await returnToken(other), ...evidence(pi) })}`, {}],
        [`${base}?${q({ token })}`, {}],
        [`${base}?${q({ token })}`, { form: { MD: 'md', PaRes: 'pares' } }],
        ...(currency === 'USD' ? [[`${base}?${q({ token, ...evidence(other.attempts[0]!.provider_reference!) })}`, {}] as [string, Parameters<typeof send>[2]]] : []),
      ];
      for (const [path, o] of forgeries) expectStatic(await send(path, client, o), `${o?.form === undefined ? 'GET' : 'POST'} ${path}`);
      expect(await footprint(p)).toEqual(before);
      const still = await getPayment(p.id);
      expect(still.status).toBe('requires_action');
      expect(still.next_action!.expires_at).toBe(p.next_action!.expires_at);

      // The shopper's own return: to the merchant with payment_id, authorized.
      const landing = await shopperPresses(p);
      // As the live provider does: the gateway's query (the token) kept, the provider's own appended.
      expect(new URL(landing.url).searchParams.get('token')).toBe(token);
      expect(Object.keys(landing.query).sort()).toEqual(currency === 'USD' ? ['payment_intent', 'payment_intent_client_secret', 'redirect_status', 'token'] : ['redirectResult', 'token']);
      const back = await sendLanding(landing, client);
      expect(back.status, back.body).toBe(303);
      expect(back.location).toBe(`${SHOP}?payment_id=${p.id}`);
      expect((await until(() => getPayment(p.id), (x) => x.status === 'authorized')).status).toBe('authorized');
      // Only what the resume reads is kept: Adyen's redirectResult; nothing of Stripe's query.
      const stored = await db().execute<{ r: Record<string, string> }>(sql`SELECT authentication->'returned' AS r FROM payment_attempts WHERE id = ${attemptId}`);
      expect(Object.keys(stored.rows[0]!.r)).toEqual(currency === 'USD' ? [] : ['redirectResult']);
    });

    it('the page never leads to the merchant: a settled attempt\'s page and a return without token are static pages', async () => {
      const client = `198.51.100.${currency === 'USD' ? 3 : 4}`;
      const p = await challenged(currency);
      const landing = await shopperPresses(p);
      expect((await sendLanding(landing, client)).location).toBe(`${SHOP}?payment_id=${p.id}`);
      await until(() => getPayment(p.id), (x) => x.status === 'authorized');
      const page = await send(new URL(p.next_action!.url).pathname + new URL(p.next_action!.url).search, client);
      expect(page.status).toBe(200);
      expect(page.location).toBeNull();
      expectStatic(await send(`/authenticate/${attemptOf(p)}/return`, client), 'return without token');
      expectStatic(await send(`/authenticate/${attemptOf(p)}`, client), 'page without token');
      // The customer's reload of the real return, with its token and evidence: back to the merchant again.
      expect((await sendLanding(landing, client)).location).toBe(`${SHOP}?payment_id=${p.id}`);
    });
  });
}

describe('Adyen: the POST return and the resume\'s binding', () => {
  it('a POST return keeps redirectResult only, never MD or PaRes', async () => {
    await adyen.configureAuthentication({ redirectMethod: 'POST' });
    const p = await challenged('EUR');
    // The auto-submitting form: its one script named by a nonce, posting only to the provider's origin.
    const form = await send(new URL(p.next_action!.url).pathname + new URL(p.next_action!.url).search, '198.51.100.5');
    expect(form.status, form.body).toBe(200);
    const nonce = /<script nonce="([^"]+)">/.exec(form.body)?.[1];
    expect(nonce).toBeDefined();
    const provider = new URL(/<form[^>]* action="([^"]+)"/.exec(form.body)![1]!.replace(/&#38;/g, '&')).origin;
    expect(form.csp).toBe(`default-src 'none'; script-src 'nonce-${nonce!}'; form-action ${provider}; base-uri 'none'; frame-ancestors 'none'`);
    const landing = await shopperPresses(p);
    expect(landing.method).toBe('POST');
    const back = await sendLanding({ ...landing, form: { ...landing.form, MD: 'md-3ds1', PaRes: 'pares-3ds1' } }, '198.51.100.5');
    expect(back.status, back.body).toBe(303);
    await until(() => getPayment(p.id), (x) => x.status === 'authorized');
    const stored = await db().execute<{ r: string }>(sql`SELECT authentication::text AS r FROM payment_attempts WHERE id = ${attemptOf(p)}`);
    expect(stored.rows[0]!.r).not.toMatch(/PaRes|pares-3ds1|md-3ds1/);
    const history = await db().execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM payment_transitions WHERE payment_id = ${p.id} AND input::text ~ 'PaRes|pares-3ds1|md-3ds1'`);
    expect(history.rows[0]!.n).toBe(0);
  });

  for (const mode of ['other_psp', 'no_merchant_reference'] as const) {
    it(`/payments/details answering ${mode === 'other_psp' ? 'for another pspReference' : 'without its merchantReference'}: no approval from the resume; the notification decides`, async () => {
      await adyen.configureAuthentication({ detailsReferences: mode });
      const p = await challenged('EUR');
      const psp = p.attempts[0]!.provider_reference;
      const back = await sendLanding(await shopperPresses(p), '198.51.100.6');
      expect(back.status, back.body).toBe(303);
      const after = await until(() => getPayment(p.id), (x) => x.status === 'authorized', 20_000);
      expect(after.status).toBe('authorized');
      expect(after.attempts[0]!.provider_reference).toBe(psp);
      const approvals = await db().execute<{ origin: string }>(sql`SELECT origin FROM payment_transitions WHERE payment_id = ${p.id} AND to_state = 'authorized' AND from_state <> 'authorized'`);
      expect(approvals.rows.map((r) => r.origin)).toEqual(['webhook']);
    });
  }
});

describe('method, rate limits and expiry', () => {
  it('HEAD is 405 on both routes (express would run the GET for it)', async () => {
    const p = await challenged('USD');
    const before = await settledFootprint(p);
    for (const path of [new URL(p.next_action!.url).pathname + new URL(p.next_action!.url).search, `/authenticate/${attemptOf(p)}/return?token=${await returnToken(p)}`]) {
      const head = await send(path, '198.51.100.7', { method: 'HEAD' });
      expect(head.status, path).toBe(405);
      expect(head.location).toBeNull();
    }
    expect(await footprint(p)).toEqual(before);
  });

  it('per client address: requests without a valid token from the client X-Forwarded-For names (through a trusted proxy) are limited, then refused before any read', async () => {
    for (let i = 0; i < LIMITS.perClient.burst; i += 1) expect((await send('/authenticate/att_nobody/return', '203.0.113.7')).status).toBe(404);
    const limited = await send('/authenticate/att_nobody/return', '203.0.113.7');
    expect(limited.status).toBe(429);
    expect(limited.location).toBeNull();
    // Only the trusted proxy's word counts: a client's own claim further left changes nothing.
    expect((await send('/authenticate/att_nobody/return', '192.0.2.99, 203.0.113.7')).status).toBe(429);
    expect((await send('/authenticate/att_nobody/return', '203.0.113.8')).status).toBe(404);
    // A used-up address is refused even with a valid link (nothing is read for it).
    const p = await challenged('USD');
    expect((await send(new URL(p.next_action!.url).pathname + new URL(p.next_action!.url).search, '203.0.113.7')).status).toBe(429);
  });

  it('per client address: shoppers with valid links never use up their address (a shop behind one NAT)', async () => {
    const p = await challenged('USD');
    const page = new URL(p.next_action!.url).pathname + new URL(p.next_action!.url).search;
    for (let i = 0; i < LIMITS.perAttempt.burst; i += 1) expect((await send(page, '203.0.113.9')).status).toBe(303);
    for (let i = 0; i < LIMITS.perClient.burst; i += 1) expect((await send('/authenticate/att_nobody', '203.0.113.9')).status).toBe(404);
    expect((await send('/authenticate/att_nobody', '203.0.113.9')).status).toBe(429);
  });

  it('per attempt, for token holders only: requests without the token cannot use up the customer\'s', async () => {
    const p = await challenged('USD');
    const path = new URL(p.next_action!.url).pathname;
    for (let i = 0; i < 20; i += 1) expect((await send(path, `203.0.113.${20 + i}`)).status).toBe(404);
    const withToken = path + new URL(p.next_action!.url).search;
    for (let i = 0; i < LIMITS.perAttempt.burst; i += 1) expect((await send(withToken, `203.0.113.${50 + i}`)).status).toBe(303);
    expect((await send(withToken, '203.0.113.99')).status).toBe(429);
  });

  it('the tokens end with the authentication window: an expired page or return leads nowhere', async () => {
    const p = await challenged('USD');
    const landing = await shopperPresses(p);
    offsetMs += 16 * MIN;
    const late = await sendLanding(landing, '198.51.100.8');
    expect(late.status).toBe(410);
    expect(late.location).toBeNull();
    const page = await send(new URL(p.next_action!.url).pathname + new URL(p.next_action!.url).search, '198.51.100.8');
    expect(page.status).toBe(410);
    expect(page.location).toBeNull();
  });
});
