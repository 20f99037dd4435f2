// Customer authentication end to end in Debian's Chromium through the Adyen sandbox (issue 27): a
// merchant creates a payment with the challenge card and a return_url served here; the browser
// opens next_action.url, is sent on (303, or the gateway's auto-submitting POST form) to the
// sandbox's hosted 3-D Secure page, clicks a button and comes back with redirectResult (GET, or
// POST for a POST redirect action) through the gateway's return endpoint, which resumes with
// /payments/details, to the merchant's page with payment_id. Complete → authorized, captured,
// refunded; Fail → declined, no other connector tried; a closed page → at expires_at (injected
// clock) the cancel, confirmed by CANCELLATION, then failed authentication_abandoned; a threeDS2
// action → cancelled, then declined authentication_unsupported; faults on /payments/details →
// still authorized, never declined.
//
// The sandbox serves its page over HTTPS with its own CA: this browser context accepts that
// certificate (ignoreHTTPSErrors) as a tester's browser would after trusting the sandbox CA.
import { sql } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { paymentResource } from '../../../src/resources/schemas.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import { launchChromium, startMerchantPage } from '../helpers/browser.ts';
import type { MerchantPage, TestBrowser } from '../helpers/browser.ts';
import { until } from '../observability/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { adyenFirstConfig } from '../helpers/runtime.ts';

const CHALLENGE_CARD = '4000002760003184';
const MIN = 60_000;

let api: ApiGateway;
let adyen: AdyenSandbox;
let chromium: TestBrowser;
let merchant: MerchantPage;
let offsetMs = 0;

beforeAll(async () => {
  merchant = await startMerchantPage();
  // intake: the sandbox's notifications come back to this gateway; its URL is also the customer-facing one.
  api = await startApiGateway('sca_adyen_browser', { authorizationWaitMs: 5_000, modificationWaitMs: 5_000 }, adyenFirstConfig(), {
    now: () => new Date(Date.now() + offsetMs), relaySweepMs: 200,
  }, true);
  adyen = api.gw.rt.sandboxes.find((s) => s.account === 'adyen_a') as AdyenSandbox;
  chromium = await launchChromium({ ignoreHTTPSErrors: true });
});
afterAll(async () => {
  await chromium?.close();
  await api?.close();
  await merchant?.close();
});
afterEach(async () => {
  await adyen.configureAuthentication({ redirectMethod: 'GET', forceNative: false });
  await adyen.clearFaults();
  await adyen.configureWebhooks({ enabled: true, delayMs: 0 });
});


const getPayment = async (id: string) => paymentResource.parse((await api.call('GET', `/v1/payments/${id}`)).json);
const providerOps = async (id: string): Promise<string[]> =>
  (await api.gw.db.db.execute<{ op: string }>(sql`SELECT payload->>'op' AS op FROM outbox WHERE payment_id = ${id} AND kind = 'provider_call' ORDER BY id`)).rows.map((r) => r.op);

async function challenged(card = CHALLENGE_CARD): Promise<ReturnType<typeof paymentResource.parse>> {
  const created = await api.call('POST', '/v1/payments', { body: paymentBody({ amount: 1000, payment_method: { type: 'card', test_card: card }, return_url: `${merchant.url}/done` }) });
  expect(created.status, created.text).toBe(201);
  const p = paymentResource.parse(created.json);
  expect(p.status).toBe('requires_action');
  expect(p.next_action).toMatchObject({ type: 'redirect_to_url' });
  expect(p.next_action!.url.startsWith(`${api.url}/authenticate/`)).toBe(true);
  expect(p.next_action!.url).not.toContain(api.apiKey);
  expect(p.attempts.map((a) => a.connector)).toEqual(['adyen_a']);
  return p;
}

/** Opens the payment's page, clicks, and waits to land on the merchant's return_url. */
async function authenticate(p: ReturnType<typeof paymentResource.parse>, button: 'Complete authentication' | 'Fail authentication'): Promise<Page> {
  const page = await chromium.context.newPage();
  await page.goto(p.next_action!.url);
  expect(new URL(page.url()).pathname).toMatch(/^\/checkoutshopper\/threeDS\/redirect\//);
  await page.getByRole('button', { name: button }).click();
  await page.waitForURL((u) => u.href.startsWith(`${merchant.url}/done`));
  expect(new URL(page.url()).searchParams.get('payment_id')).toBe(p.id);
  return page;
}

describe('3-D Secure through the Adyen sandbox, in Chromium', () => {
  it('Complete authentication: back on the merchant page with payment_id, authorized, then captured and refunded', async () => {
    const p = await challenged();
    const page = await authenticate(p, 'Complete authentication');
    await page.close();
    const after = await until(() => getPayment(p.id), (x) => x.status === 'authorized');
    expect(after.status).toBe('authorized');
    expect(after.next_action).toBeNull();
    const ops = await providerOps(p.id);
    // One authorize, then the resume (a slow answer may be resent with the same key); no fence.
    expect(ops[0]).toBe('authorize');
    expect(ops.slice(1).length).toBeGreaterThanOrEqual(1);
    expect(ops.slice(1).every((op) => op === 'resume')).toBe(true);
    // The redirectResult was kept for resends; a made-up return (no return token) changes nothing and leads nowhere.
    const replay = await fetch(`${api.url}/authenticate/${after.attempts[0]!.id}/return?redirectResult=forged`, { redirect: 'manual' });
    expect(replay.status).toBe(404);
    expect(replay.headers.get('location')).toBeNull();
    expect((await getPayment(p.id)).status).toBe('authorized');
    expect(await providerOps(p.id)).toEqual(ops);
    const psp = after.attempts[0]!.provider_reference!;
    expect((await adyen.ledger()).find((e) => e.id === psp)).toMatchObject({ authorized: 1000, captured: 0 });
    const capture = await api.call('POST', `/v1/payments/${p.id}/capture`, { body: {} });
    expect([200, 201, 202], capture.text).toContain(capture.status);
    expect((await until(() => getPayment(p.id), (x) => x.status === 'captured')).status).toBe('captured');
    const refund = await api.call('POST', `/v1/payments/${p.id}/refunds`, { body: { amount: 1000 } });
    expect([200, 201, 202], refund.text).toContain(refund.status);
    expect((await until(() => getPayment(p.id), (x) => x.amount_refunded === 1000)).amount_refunded).toBe(1000);
    expect((await adyen.ledger()).find((e) => e.id === psp)).toMatchObject({ authorized: 1000, captured: 1000, refunded: 1000 });
    // The redirectResult is the shopper's, not a log line's.
    const stored = await api.gw.db.db.execute<{ r: string }>(sql`SELECT authentication->'returned'->>'redirectResult' AS r FROM payment_attempts WHERE id = ${after.attempts[0]!.id}`);
    const redirectResult = stored.rows[0]!.r;
    expect(typeof redirectResult).toBe('string');
    expect(api.logs.join('\n')).not.toContain(redirectResult);
  });

  it('the POST redirect action: the gateway\'s auto-submitting form, the page posts redirectResult back; authorized', async () => {
    await adyen.configureAuthentication({ redirectMethod: 'POST' });
    const before = merchant.hits.length;
    const p = await challenged();
    const page = await authenticate(p, 'Complete authentication');
    await page.close();
    expect((await until(() => getPayment(p.id), (x) => x.status === 'authorized')).status).toBe('authorized');
    // The merchant's page was reached with a GET (the gateway's 303 after its POST return).
    expect(merchant.hits.slice(before).filter((h) => h.url.startsWith('/done')).map((h) => h.method)).toEqual(['GET']);
  });

  it('Fail authentication: declined authentication_failed, and no other connector is tried', async () => {
    const p = await challenged();
    const page = await authenticate(p, 'Fail authentication');
    await page.close();
    const after = await until(() => getPayment(p.id), (x) => x.status === 'declined');
    expect(after.status).toBe('declined');
    expect(after.attempts).toHaveLength(1);
    expect(after.attempts[0]).toMatchObject({ connector: 'adyen_a', decline_code: 'authentication_failed', proof: 'declined' });
    expect((await providerOps(p.id)).filter((op) => op === 'authorize')).toHaveLength(1);
  });

  it('authenticated, then refused for not enough balance (4000008260003178): declined insufficient_funds', async () => {
    const p = await challenged('4000008260003178');
    const page = await authenticate(p, 'Complete authentication');
    await page.close();
    const after = await until(() => getPayment(p.id), (x) => x.status === 'declined');
    expect(after.attempts[0]).toMatchObject({ decline_code: 'insufficient_funds', proof: 'declined' });
  });

  it('a closed page: at expires_at the payment is cancelled at Adyen (CANCELLATION), then failed authentication_abandoned', async () => {
    const p = await challenged();
    const page = await chromium.context.newPage();
    await page.goto(p.next_action!.url);
    await expect(page.getByRole('button', { name: 'Complete authentication' }).isVisible()).resolves.toBe(true);
    await page.close();
    offsetMs += 16 * MIN;
    const after = await until(() => getPayment(p.id), (x) => x.status === 'failed');
    expect(after.status).toBe('failed');
    expect(after.attempts[0]).toMatchObject({ status: 'abandoned', proof: 'fenced', decline_code: 'authentication_abandoned' });
    expect((await adyen.ledger()).find((e) => e.id === after.attempts[0]!.provider_reference)).toMatchObject({ authorized: 0, cancelled: true });
    // The page is over with the window: a static page, no redirect to anywhere; the payment stays failed.
    const late = await fetch(p.next_action!.url, { redirect: 'manual' });
    expect(late.status).toBe(410);
    expect(late.headers.get('location')).toBeNull();
    expect((await getPayment(p.id)).status).toBe('failed');
    expect(after.attempts).toHaveLength(1);
  });

  it('a threeDS2 action (Adyen\'s JavaScript component only): cancelled at Adyen, then declined authentication_unsupported', async () => {
    await adyen.configureAuthentication({ forceNative: true });
    const created = await api.call('POST', '/v1/payments', { body: paymentBody({ amount: 1000, payment_method: { type: 'card', test_card: CHALLENGE_CARD }, return_url: `${merchant.url}/done` }) });
    expect([201, 202], created.text).toContain(created.status);
    const after = await until(() => getPayment(String(created.json.id)), (x) => x.status === 'declined');
    expect(after.status).toBe('declined');
    expect(after.attempts).toHaveLength(1);
    expect(after.attempts[0]).toMatchObject({ connector: 'adyen_a', decline_code: 'authentication_unsupported' });
    expect(await providerOps(after.id)).toContain('fence');
    expect((await adyen.ledger()).find((e) => e.id === after.attempts[0]!.provider_reference)).toMatchObject({ authorized: 0, cancelled: true });
  });

  // Adyen has no lookup: an unknown resume is resent with the same key and redirectResult, or the
  // AUTHORISATION notification settles it. A 500 after processing is stored under the key (the
  // sandbox replays it), so there only the notification can tell; a 503 (nothing processed) and a
  // timeout (processed, the answer stored) are settled by the resend alone, with notifications off.
  // Processed with its answer lost and not stored (already_done): the resend is a new request for a
  // processed redirectResult, which Adyen answers 422 errorCode 704 — unknown, in progress — so the
  // AUTHORISATION notification settles it.
  const RESUME_FAULTS = [
    { fault: { mode: 'error_500_after_processing', count: 1 }, webhooks: true },
    { fault: { mode: 'already_done', count: 1 }, webhooks: true, notificationDelayMs: 3_000 },
    { fault: { mode: 'error_503', count: 1 }, webhooks: false },
    { fault: { mode: 'latency', latencyMs: 2_500, count: 1 }, webhooks: false },
  ] as const;
  for (const { fault, webhooks, notificationDelayMs } of RESUME_FAULTS.map((r) => ({ notificationDelayMs: 0, ...r }))) {
    it(`/payments/details faulted once (${fault.mode}, notifications ${webhooks ? 'on' : 'off'}): authorized, never declined`, async () => {
      // A delayed notification: the resend goes out before it arrives.
      await adyen.configureWebhooks({ enabled: webhooks, delayMs: notificationDelayMs });
      await adyen.scheduleFault({ op: 'resume', ...fault });
      const p = await challenged();
      const page = await authenticate(p, 'Complete authentication');
      await page.close();
      const after = await until(() => getPayment(p.id), (x) => x.status === 'authorized' || x.status === 'declined' || x.status === 'failed', 30_000);
      expect(after.status).toBe('authorized');
      expect((await adyen.faults()).at(-1)).toMatchObject({ remaining: 0 });
      const resumes = (await providerOps(p.id)).filter((op) => op === 'resume').length;
      if (!webhooks) expect(resumes).toBeGreaterThanOrEqual(2);
      if (fault.mode === 'already_done') {
        // The resend met 704: kept as unknown (in progress), never a decline; the notification settled it.
        const inputs = (await api.gw.db.db.execute<{ input: string }>(sql`SELECT input::text AS input FROM payment_transitions WHERE payment_id = ${p.id} ORDER BY id`)).rows.map((r) => r.input);
        expect(inputs.some((i) => i.includes('"in_progress"')), inputs.join('\n')).toBe(true);
      }
      const psp = after.attempts[0]!.provider_reference!;
      expect((await adyen.ledger()).find((e) => e.id === psp)).toMatchObject({ authorized: 1000 });
    }, 60_000);
  }

  it('authentication: challenge asks any card (attemptAuthentication always): 4242 is challenged, then authorized', async () => {
    const created = await api.call('POST', '/v1/payments', { body: paymentBody({ amount: 1000, payment_method: { type: 'card', test_card: '4242424242424242' }, authentication: 'challenge', return_url: `${merchant.url}/done` }) });
    expect(created.status, created.text).toBe(201);
    const p = paymentResource.parse(created.json);
    expect(p.status).toBe('requires_action');
    const page = await authenticate(p, 'Complete authentication');
    await page.close();
    expect((await until(() => getPayment(p.id), (x) => x.status === 'authorized')).status).toBe('authorized');
  });

  it('without a return_url the challenge card is declined authentication_required, saying to send one', async () => {
    const created = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: CHALLENGE_CARD } }) });
    const p = await until(() => getPayment(String(created.json.id)), (x) => x.status === 'declined');
    expect(p.status).toBe('declined');
    expect(p.attempts[0]!.decline_code).toBe('authentication_required');
    expect(p.attempts[0]!.decline_message).toContain('return_url');
  });
});
