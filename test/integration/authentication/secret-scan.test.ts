// Issue 42 §2: Stripe's client secret reaches the gateway in the hosted page's URL
// (payment_intent_client_secret), in every PaymentIntent answer and in every payment_intent.* webhook
// body. After a 3-D Secure payment followed URL by URL with fetch (as a browser would) and a webhook
// round, the secret is nowhere the gateway keeps or shows things: no column of any table, not the
// timeline API, not the operator view, not the logs. The history keeps the page's URL without its query.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentResource } from '../../../src/resources/schemas.ts';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { startMerchantPage } from '../helpers/browser.ts';
import type { MerchantPage } from '../helpers/browser.ts';
import { twoStripeConfig } from '../helpers/runtime.ts';
import { until } from '../observability/helpers.ts';

const CHALLENGE_CARD = '4000002760003184';
const ADMIN_TOKEN = 'ops-secret-scan-token-0123456789';
/** Live Stripe's client secret shape (a PaymentIntent's or a SetupIntent's), as a PostgreSQL regex. */
const LIVE_SHAPED_SECRET = '(pi|seti)_[A-Za-z0-9]+_secret_[A-Za-z0-9]+';

let api: ApiGateway;
let merchant: MerchantPage;

beforeAll(async () => {
  merchant = await startMerchantPage();
  // intake: the sandbox's webhooks come back to this gateway; its URL is also the customer-facing one.
  api = await startApiGateway('secret_scan', { authorizationWaitMs: 5_000, adminToken: ADMIN_TOKEN }, twoStripeConfig(), { relaySweepMs: 200 }, true);
});
afterAll(async () => {
  await api?.close();
  await merchant?.close();
});

const getPayment = async (id: string) => paymentResource.parse((await api.call('GET', `/v1/payments/${id}`)).json);

/** GET without following: the Location a browser would go to next. */
async function next(url: string, init: RequestInit = {}): Promise<string> {
  const res = await fetch(url, { ...init, redirect: 'manual' });
  await res.arrayBuffer();
  expect(res.status, `${init.method ?? 'GET'} ${url}`).toBe(303);
  return new URL(res.headers.get('location')!, url).toString();
}

/** Every column of every table of the gateway's database whose value matches the pattern or holds one of the strings. */
async function tablesHolding(needles: readonly string[]): Promise<string[]> {
  const columns = await api.gw.db.db.execute<{ table_schema: string; table_name: string; column_name: string; data_type: string }>(sql`
    SELECT c.table_schema, c.table_name, c.column_name, c.data_type
      FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')`);
  expect(columns.rows.some((c) => c.table_name === 'inbound_events' && c.column_name === 'raw_body')).toBe(true);
  const found: string[] = [];
  for (const c of columns.rows) {
    const column = sql`${sql.identifier(c.table_schema)}.${sql.identifier(c.table_name)}.${sql.identifier(c.column_name)}`;
    // bytea as its escaped text (printable ASCII stays as is); everything else as its text form.
    const text = c.data_type === 'bytea' ? sql`encode(${column}, 'escape')` : sql`${column}::text`;
    const hits = await api.gw.db.db.execute<{ n: string }>(sql`
      SELECT count(*)::text AS n FROM ${sql.identifier(c.table_schema)}.${sql.identifier(c.table_name)}
       WHERE ${text} ~ ${LIVE_SHAPED_SECRET} OR ${sql.join(needles.map((n) => sql`strpos(${text}, ${n}) > 0`), sql` OR `)}`);
    if (Number(hits.rows[0]!.n) > 0) found.push(`${c.table_name}.${c.column_name}`);
  }
  return found;
}

describe("Stripe's client secret after a 3-D Secure payment and its webhooks", () => {
  it('is stored nowhere, served nowhere, logged nowhere; the history keeps the page URL without its query', async () => {
    const created = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: CHALLENGE_CARD }, return_url: `${merchant.url}/done` }) });
    expect(created.status, created.text).toBe(201);
    const p = paymentResource.parse(created.json);
    expect(p.status).toBe('requires_action');
    // The merchant is given the gateway's own page, never Stripe's.
    expect(p.next_action!.url.startsWith(`${api.url}/authenticate/`)).toBe(true);
    expect(created.text).not.toContain('_secret_');

    // The customer's browser: the gateway's page sends it on to Stripe's, which carries the secret.
    const stripePage = new URL(await next(p.next_action!.url));
    const secret = stripePage.searchParams.get('payment_intent_client_secret') ?? '';
    expect(secret).toMatch(new RegExp(`^${LIVE_SHAPED_SECRET}$`));
    expect(secret.startsWith(`${stripePage.searchParams.get('payment_intent')}_secret_`)).toBe(true);
    const shown = await fetch(stripePage);
    expect(shown.status).toBe(200);
    expect(await shown.text()).toContain('Complete authentication');
    // "Complete authentication": Stripe sends the browser back with the secret in the query string.
    const back = await next(`${stripePage.origin}${stripePage.pathname}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: stripePage.searchParams.get('token') ?? '', outcome: 'complete' }).toString(),
    });
    expect(new URL(back).searchParams.get('payment_intent_client_secret')).toBe(secret);
    expect(back.startsWith(`${api.url}/authenticate/`)).toBe(true);
    const merchantPage = await next(back);
    expect(merchantPage).toBe(`${merchant.url}/done?payment_id=${p.id}`);

    const authorized = await until(() => getPayment(p.id), (x) => x.status === 'authorized');
    expect(authorized.status).toBe('authorized');
    const capture = await api.call('POST', `/v1/payments/${p.id}/capture`, { body: {} });
    expect([200, 201], capture.text).toContain(capture.status);
    // The webhook round: every payment_intent.* event Stripe sent (their bodies carry client_secret) is in and settled.
    const events = await until(
      async () => (await api.gw.db.db.execute<{ type: string; outcome: string }>(sql`
        SELECT event->>'rawType' AS type, outcome FROM inbound_events WHERE event->>'providerRef' = ${authorized.attempts[0]!.provider_reference}`)).rows,
      (rows) => rows.some((r) => r.type === 'payment_intent.succeeded') && rows.every((r) => r.outcome !== 'pending'),
    );
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['payment_intent.requires_action', 'payment_intent.amount_capturable_updated', 'payment_intent.succeeded']));
    expect(events.every((e) => e.outcome !== 'pending')).toBe(true);

    // Nothing in the gateway's database.
    // The secret whole, and its random part alone (a leak that re-encoded or cut it still shows).
    expect(await tablesHolding([secret, secret.split('_secret_')[1]!])).toEqual([]);
    // The history keeps where the customer was sent, without the query that carried the secret.
    const page = `${stripePage.origin}${stripePage.pathname}`;
    const kept = await api.gw.db.db.execute<{ url: string }>(sql`
      SELECT DISTINCT jsonb_path_query(input, 'strict $.**.redirect.url') #>> '{}' AS url FROM payment_transitions WHERE payment_id = ${p.id}`);
    expect(kept.rows.map((r) => r.url)).toEqual([page]);
    // The attempt keeps the page only while the customer is expected there.
    const attempt = await api.gw.db.db.execute<{ action: unknown }>(sql`SELECT authentication->'action' AS action FROM payment_attempts WHERE payment_id = ${p.id}`);
    expect(attempt.rows.map((r) => r.action)).toEqual([null]);

    // Nothing served: the payment, its timeline, the operator view.
    const served = [
      (await api.call('GET', `/v1/payments/${p.id}`)).text,
      (await api.call('GET', `/v1/payments/${p.id}/timeline`)).text,
      await (await fetch(`${api.url}/ops`)).text(),
      await (await fetch(`${api.url}/ops/api/payments/${p.id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text(),
      await (await fetch(`${api.url}/ops/api/overview`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text(),
    ];
    expect(served[1]).toContain(page);
    expect(served[3]).toContain(p.id);
    for (const text of served) {
      expect(text).not.toContain(secret);
      expect(text).not.toMatch(new RegExp(LIVE_SHAPED_SECRET));
    }
    // Nothing logged.
    expect(api.logs.length).toBeGreaterThan(0);
    const logs = api.logs.join('\n');
    expect(logs).not.toContain(secret);
    expect(logs).not.toMatch(new RegExp(LIVE_SHAPED_SECRET));
  });

  it('is not served from history written before the fix: the timeline and the operator view mask it on read', async () => {
    const created = await api.call('POST', '/v1/payments', { body: paymentBody() });
    expect([201, 202], created.text).toContain(created.status);
    const id = created.json.id;
    const secret = 'pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH';
    const page = 'https://hooks.stripe.com/3d_secure_2/hosted';
    const url = `${page}?merchant=acct_1&payment_intent=pi_3MtwBwLkdIwHu7ix28a3tqPa&payment_intent_client_secret=${secret}&publishable_key=pk_test_1&source=src_1`;
    const outcome = { kind: 'action_required', action: 'redirect_to_url', providerRef: 'pi_3MtwBwLkdIwHu7ix28a3tqPa', redirect: { url, method: 'GET' } };
    // As an older gateway wrote it: the whole page URL in the input, the raw object in raw_provider (history is append-only).
    await api.gw.db.db.execute(sql`
      INSERT INTO payment_transitions (payment_id, from_state, to_state, input, origin, attempt_id, raw_provider, outcome, code, reason, version, at)
      SELECT id, state, state, ${JSON.stringify({ type: 'provider_fact', fact: { fact: 'authorization', outcome } })}::jsonb, 'webhook', NULL,
             ${JSON.stringify({ object: 'payment_intent', client_secret: secret, next_action: { redirect_to_url: { url } } })}::jsonb, 'ignored', 'noop', 'legacy row', version, now()
        FROM payments WHERE id = ${id}`);
    const timeline = await api.call('GET', `/v1/payments/${id}/timeline`);
    const ops = await fetch(`${api.url}/ops/api/payments/${id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const served = [timeline.text, await ops.text()];
    expect(timeline.text).toContain('legacy row');
    expect(served[1]).toContain('legacy row');
    for (const text of served) {
      expect(text).not.toContain(secret);
      expect(text).not.toMatch(new RegExp(LIVE_SHAPED_SECRET));
    }
    expect(timeline.text).toContain(`"url":"${page}"`);
  });
});
