// Customer authentication end to end in Debian's Chromium (issue 27): a merchant creates a payment
// with the challenge card and a return_url served here; the browser opens next_action.url, goes on
// to the Stripe sandbox's hosted 3-D Secure page, clicks a button and comes back through the
// gateway's return endpoint to the merchant's page with payment_id. Complete → authorized, then
// captured and refunded; Fail → declined (after the PaymentIntent's cancel is confirmed); a page
// closed → at expires_at (injected clock) the cancel, confirmed, then failed authentication_abandoned.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentResource } from '../../../src/resources/schemas.ts';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import { launchChromium, startMerchantPage } from '../helpers/browser.ts';
import type { MerchantPage, TestBrowser } from '../helpers/browser.ts';
import { until } from '../observability/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { twoStripeConfig } from '../helpers/runtime.ts';

const CHALLENGE_CARD = '4000002760003184';
const MIN = 60_000;

let api: ApiGateway;
let chromium: TestBrowser;
let merchant: MerchantPage;
let offsetMs = 0;

beforeAll(async () => {
  merchant = await startMerchantPage();
  // intake: the sandbox's webhooks come back to this gateway; its URL is also the customer-facing one.
  api = await startApiGateway('sca_stripe_browser', { authorizationWaitMs: 5_000 }, twoStripeConfig(), {
    now: () => new Date(Date.now() + offsetMs), relaySweepMs: 200,
  }, true);
  chromium = await launchChromium();
});
afterAll(async () => {
  await chromium?.close();
  await api?.close();
  await merchant?.close();
});


const getPayment = async (id: string) => paymentResource.parse((await api.call('GET', `/v1/payments/${id}`)).json);

async function challenged(): Promise<ReturnType<typeof paymentResource.parse>> {
  const created = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: CHALLENGE_CARD }, return_url: `${merchant.url}/done` }) });
  expect(created.status, created.text).toBe(201);
  const p = paymentResource.parse(created.json);
  expect(p.status).toBe('requires_action');
  expect(p.next_action).toMatchObject({ type: 'redirect_to_url' });
  expect(p.next_action!.url.startsWith(`${api.url}/authenticate/`)).toBe(true);
  expect(p.next_action!.url).not.toContain(api.apiKey);
  return p;
}

describe('3-D Secure through the Stripe sandbox, in Chromium', () => {
  it('Complete authentication: back on the merchant page with payment_id, authorized, then captured and refunded', async () => {
    const p = await challenged();
    const page = await chromium.context.newPage();
    await page.goto(p.next_action!.url);
    await page.getByRole('button', { name: 'Complete authentication' }).click();
    await page.waitForURL((u) => u.href.startsWith(`${merchant.url}/done`));
    expect(new URL(page.url()).searchParams.get('payment_id')).toBe(p.id);
    await page.close();
    const after = await until(() => getPayment(p.id), (x) => x.status === 'authorized');
    expect(after.status).toBe('authorized');
    expect(after.next_action).toBeNull();
    // A made-up return (no return token) is a static page that changes nothing and leads nowhere.
    const replay = await fetch(`${api.url}/authenticate/${after.attempts[0]!.id}/return?payment_intent=pi_forged&redirect_status=failed`, { redirect: 'manual' });
    expect(replay.status).toBe(404);
    expect(replay.headers.get('location')).toBeNull();
    expect((await getPayment(p.id)).status).toBe('authorized');
    const capture = await api.call('POST', `/v1/payments/${p.id}/capture`, { body: {} });
    expect([200, 201], capture.text).toContain(capture.status);
    expect(capture.json.status).toBe('captured');
    const refund = await api.call('POST', `/v1/payments/${p.id}/refunds`, { body: { amount: 1000 } });
    expect([200, 201], refund.text).toContain(refund.status);
    expect((await getPayment(p.id)).amount_refunded).toBe(1000);
    // Stripe's client secret came back in the browser's query string: nowhere stored, nowhere logged.
    const stored = await api.gw.db.db.execute<{ n: number }>(sql`SELECT
        (SELECT count(*) FROM payment_attempts WHERE authentication::text LIKE '%secret%')
      + (SELECT count(*) FROM payment_transitions WHERE input::text LIKE '%secret%' OR coalesce(raw_provider::text, '') LIKE '%_secret_%') AS n`);
    expect(Number(stored.rows[0]!.n)).toBe(0);
    expect(api.logs.join('\n')).not.toContain('_secret_');
  });

  it('Fail authentication: declined once the PaymentIntent is cancelled, and no other connector is tried', async () => {
    const p = await challenged();
    const page = await chromium.context.newPage();
    await page.goto(p.next_action!.url);
    await page.getByRole('button', { name: 'Fail authentication' }).click();
    await page.waitForURL((u) => u.href.startsWith(`${merchant.url}/done`));
    await page.close();
    const after = await until(() => getPayment(p.id), (x) => x.status === 'declined');
    expect(after.status).toBe('declined');
    expect(after.attempts).toHaveLength(1);
    expect(after.attempts[0]).toMatchObject({ decline_code: 'authentication_failed', proof: 'declined' });
    const outbox = await api.gw.db.db.execute<{ op: string }>(sql`SELECT payload->>'op' AS op FROM outbox WHERE payment_id = ${p.id} AND kind = 'provider_call' ORDER BY id`);
    // The payment_failed webhook may settle it before the browser is back (then no resume is needed).
    const ops = outbox.rows.map((r) => r.op);
    expect(ops.filter((op) => op === 'authorize')).toHaveLength(1);
    expect(ops).toContain('fence');
  });

  it('authenticated, then declined for insufficient funds (4000008260003178): declined after the cancel', async () => {
    const created = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: '4000008260003178' }, return_url: `${merchant.url}/done` }) });
    const p = paymentResource.parse(created.json);
    expect(p.status).toBe('requires_action');
    const page = await chromium.context.newPage();
    await page.goto(p.next_action!.url);
    await page.getByRole('button', { name: 'Complete authentication' }).click();
    await page.waitForURL((u) => u.href.startsWith(`${merchant.url}/done`));
    await page.close();
    const after = await until(() => getPayment(p.id), (x) => x.status === 'declined');
    expect(after.attempts[0]).toMatchObject({ decline_code: 'insufficient_funds', proof: 'declined' });
    const ops = await api.gw.db.db.execute<{ op: string }>(sql`SELECT payload->>'op' AS op FROM outbox WHERE payment_id = ${p.id} AND kind = 'provider_call' ORDER BY id`);
    expect(ops.rows.map((r) => r.op)).toContain('fence');
  });

  it('a closed page: at expires_at the attempt is cancelled (confirmed), then failed authentication_abandoned', async () => {
    const p = await challenged();
    const page = await chromium.context.newPage();
    await page.goto(p.next_action!.url);
    await expect(page.getByRole('button', { name: 'Complete authentication' }).isVisible()).resolves.toBe(true);
    await page.close();
    offsetMs += 16 * MIN;
    const after = await until(() => getPayment(p.id), (x) => x.status === 'failed');
    expect(after.status).toBe('failed');
    expect(after.attempts[0]).toMatchObject({ status: 'abandoned', proof: 'fenced', decline_code: 'authentication_abandoned' });
    // The page is over with the window: a static page, no redirect to anywhere; the payment stays failed.
    const late = await fetch(p.next_action!.url, { redirect: 'manual' });
    expect(late.status).toBe(410);
    expect(late.headers.get('location')).toBeNull();
    expect((await getPayment(p.id)).status).toBe('failed');
  });

  it('without a return_url the challenge card is declined authentication_required, saying to send one', async () => {
    const created = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: CHALLENGE_CARD } }) });
    const p = await until(() => getPayment(created.json.id), (x) => x.status === 'declined');
    expect(p.status).toBe('declined');
    expect(p.attempts[0]!.decline_code).toBe('authentication_required');
    expect(p.attempts[0]!.decline_message).toContain('return_url');
    const bad = await api.call('POST', '/v1/payments', { body: paymentBody({ return_url: 'http://shop.example/done' }) });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('return_url');
  });
});
