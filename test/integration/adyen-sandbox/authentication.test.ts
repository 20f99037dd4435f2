// The Adyen sandbox's 3-D Secure (issue 27) through the official library over real TLS sockets:
// RedirectShopper with a GET or POST redirect action, the hosted challenge page, /payments/details
// (idempotent by key; a second call with the same redirectResult and another key or none is 422
// errorCode 704, as live Adyen answers, with no second notification or booking), threeDS2 actions, attemptAuthentication never, the cancel of a
// payment awaiting its shopper, and faults aimed at the resume call (op `resume`). Request and
// answer bodies are validated against the shipped CheckoutService-v72.json.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import adyen from '@adyen/api-library';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedirectingHttpClient } from '../../../src/connectors/adyen/transport.ts';
import { startAdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import { withOwnSandboxDatabase } from '../helpers/sandbox-db.ts';

const spec = JSON.parse(readFileSync(new URL('../../fixtures/provider-specs/adyen/CheckoutService-v72.json', import.meta.url), 'utf8')) as object;
const ajv = new Ajv({ unknownFormats: 'ignore', validateSchema: false, allErrors: true, logger: false });
ajv.addSchema(spec, 'checkout');
const valid = (schema: string, data: unknown): string[] =>
  ajv.validate({ $ref: `checkout#/components/schemas/${schema}` }, data) ? [] : (ajv.errors ?? []).map((e) => `${schema}${e.dataPath} ${e.message ?? ''}`);

const merchantAccount = 'SwitchyardSca';
const RETURN_URL = 'https://shop.example/authenticate/att/return';
const CHALLENGE = '4000002760003184';
const THEN_NO_FUNDS = '4000008260003178';

class RecordingClient extends RedirectingHttpClient {
  readonly exchanges: { endpoint: string; request: string; response: string }[] = [];
  override async request(...args: Parameters<RedirectingHttpClient['request']>): Promise<string> {
    const response = await super.request(...args);
    this.exchanges.push({ endpoint: args[0], request: String(args[1]), response });
    return response;
  }
}

let sandbox: AdyenSandbox;
let client: RecordingClient;
let checkout: InstanceType<typeof adyen.CheckoutAPI>;
let hooks: Server;
const items: Record<string, unknown>[] = [];
let n = 0;

beforeAll(async () => {
  hooks = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { notificationItems: { NotificationRequestItem: Record<string, unknown> }[] };
      items.push(...body.notificationItems.map((i) => i.NotificationRequestItem));
      res.writeHead(200).end('[accepted]');
    });
  });
  await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
  const webhook = { url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/`, hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056', username: 'u', password: 'p' };
  sandbox = await withOwnSandboxDatabase('adyen_sca', (database) => startAdyenSandbox({ database, account: 'adyen_sca', apiKey: 'AQE_sca', merchantAccount, webhook, certificateDirectory: join(tmpdir(), 'switchyard-adyen-sandbox') }));
  client = new RecordingClient(sandbox.url, sandbox.caPem);
  checkout = new adyen.CheckoutAPI(new adyen.Client({ apiKey: 'AQE_sca', environment: adyen.EnvironmentEnum.TEST }, client));
});
afterAll(async () => {
  await sandbox?.close();
  await new Promise((r) => hooks?.close(r));
});
beforeEach(async () => {
  await sandbox.configureAuthentication({ redirectMethod: 'GET', forceNative: false });
  await sandbox.clearFaults();
});

type Auth = Record<string, unknown>;
const act = (r: adyen.Types.checkout.PaymentResponse): Record<string, unknown> => r.action as unknown as Record<string, unknown>;
const REDIRECT: Auth = { authenticationData: { threeDSRequestData: { nativeThreeDS: 'disabled' } }, channel: 'Web', origin: 'https://shop.example' };

function pay(card: string, auth: Auth = REDIRECT, holderName = 'Sca Test', manual = true): Promise<adyen.Types.checkout.PaymentResponse & { reference: string }> {
  const reference = `att_sca_${++n}`;
  const body = {
    amount: { value: 1000, currency: 'EUR' }, merchantAccount, reference, returnUrl: RETURN_URL,
    paymentMethod: { type: 'scheme', encryptedCardNumber: `test_${card}`, encryptedExpiryMonth: 'test_03', encryptedExpiryYear: 'test_2030', encryptedSecurityCode: 'test_737', holderName },
    ...(manual && { additionalData: { manualCapture: 'true' } }), ...auth,
  } as adyen.Types.checkout.PaymentRequest;
  return checkout.PaymentsApi.payments(body, { idempotencyKey: `${reference}:auth` }).then((r) => ({ ...r, reference }));
}

function details(redirectResult: string, key: string): Promise<adyen.Types.checkout.PaymentDetailsResponse> {
  return checkout.PaymentsApi.paymentsDetails({ details: { redirectResult } }, { idempotencyKey: key });
}

/** A browser-like request to the sandbox (the challenge page needs no API key). */
function browser(method: 'GET' | 'POST', url: string, form?: Record<string, string>): Promise<{ status: number; location: string | null; text: string }> {
  return new Promise((resolve, reject) => {
    const body = form === undefined ? '' : new URLSearchParams(form).toString();
    const req = httpsRequest(new URL(url), { method, ca: sandbox.caPem, headers: form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: typeof res.headers.location === 'string' ? res.headers.location : null, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Opens the GET action's page and clicks a button; answers the redirectResult the browser brings back. */
async function clickGet(action: Record<string, unknown>, choice: 'complete' | 'fail'): Promise<string> {
  const url = String(action['url']);
  const shown = await browser('GET', url);
  expect(shown.status).toBe(200);
  expect(shown.text).toContain('Complete authentication');
  expect(shown.text).toContain('Fail authentication');
  const clicked = await browser('POST', url.split('?')[0]!, { choice, MD: new URL(url).searchParams.get('token') ?? '' });
  expect(clicked.status).toBe(302);
  const back = new URL(clicked.location!);
  expect(`${back.origin}${back.pathname}`).toBe(RETURN_URL);
  return back.searchParams.get('redirectResult')!;
}

const notificationsFor = async (psp: string): Promise<Record<string, unknown>[]> => {
  await sandbox.webhooksIdle();
  return items.filter((i) => i['pspReference'] === psp || i['originalReference'] === psp);
};
const ledgerOf = async (psp: string) => (await sandbox.ledger()).find((e) => e.id === psp)!;

describe('adyen sandbox: 3-D Secure by redirect', () => {
  it('challenge card, GET redirect: RedirectShopper, the page, Complete → /payments/details Authorised once, whatever is called again', async () => {
    const created = await pay(CHALLENGE);
    expect(created).toMatchObject({ resultCode: 'RedirectShopper', merchantReference: created.reference, action: { type: 'redirect', method: 'GET', paymentMethodType: 'scheme' } });
    const psp = created.pspReference!;
    expect(String(created.action!.url)).toMatch(/\/checkoutshopper\/threeDS\/redirect\/[A-Z0-9]{16}\?token=/);
    expect((await ledgerOf(psp)).authorized).toBe(0);
    expect(await notificationsFor(psp)).toEqual([]);
    expect((await ledgerOf(psp)).authentication).toMatchObject({ completed_at: null, outcome: null });
    const redirectResult = await clickGet(act(created), 'complete');
    // The provider's own record of the shopper's click (the chaos invariant captured_after_authentication reads it).
    const record = (await ledgerOf(psp)).authentication!;
    expect(record.outcome).toBe('completed');
    expect(Date.parse(record.completed_at!)).toBeGreaterThanOrEqual(Date.parse(record.asked_at));
    // The page is spent: a second click is refused.
    expect((await browser('POST', String(created.action!.url).split('?')[0]!, { choice: 'fail', MD: new URL(String(created.action!.url)).searchParams.get('token')! })).status).toBe(409);
    const first = await details(redirectResult, `${created.reference}:resume:1`);
    expect(first).toMatchObject({ resultCode: 'Authorised', pspReference: psp, merchantReference: created.reference, amount: { value: 1000, currency: 'EUR' } });
    // Same key: the stored answer. A new key (or none) with the same redirectResult: 422 errorCode 704, nothing new.
    expect(await details(redirectResult, `${created.reference}:resume:1`)).toEqual(first);
    expect(await details(redirectResult, `${created.reference}:resume:2`).catch((e: unknown) => e)).toMatchObject({ statusCode: 422, errorCode: '704' });
    expect(await checkout.PaymentsApi.paymentsDetails({ details: { redirectResult } }).catch((e: unknown) => e)).toMatchObject({ statusCode: 422, errorCode: '704' });
    const notes = await notificationsFor(psp);
    expect(notes.map((x) => [x['eventCode'], x['success']])).toEqual([['AUTHORISATION', 'true']]);
    expect(await ledgerOf(psp)).toMatchObject({ authorized: 1000, captured: 0, status: 'Authorised' });
    // Then it behaves as any authorisation: captured, refunded.
    await checkout.ModificationsApi.captureAuthorisedPayment(psp, { amount: { value: 1000, currency: 'EUR' }, merchantAccount });
    expect((await ledgerOf(psp)).captured).toBe(1000);
    const problems = client.exchanges.flatMap((x) => x.endpoint.endsWith('/payments/details')
      ? [...valid('PaymentDetailsRequest', JSON.parse(x.request)), ...valid('PaymentDetailsResponse', JSON.parse(x.response))]
      : x.endpoint.endsWith('/v72/payments') ? [...valid('PaymentRequest', JSON.parse(x.request)), ...valid('PaymentResponse', JSON.parse(x.response))] : []);
    expect(problems).toEqual([]);
  });

  it('Fail authentication → Refused 11 "3D Not Authenticated", AUTHORISATION success=false, nothing authorised', async () => {
    const created = await pay(CHALLENGE);
    const redirectResult = await clickGet(act(created), 'fail');
    expect((await ledgerOf(created.pspReference!)).authentication).toMatchObject({ outcome: 'failed' });
    expect(await details(redirectResult, `${created.reference}:resume:1`)).toMatchObject({ resultCode: 'Refused', refusalReasonCode: '11', refusalReason: '3D Not Authenticated', pspReference: created.pspReference });
    expect((await notificationsFor(created.pspReference!)).map((x) => [x['eventCode'], x['success'], x['reason']])).toEqual([['AUTHORISATION', 'false', '3D Not Authenticated']]);
    expect((await ledgerOf(created.pspReference!)).authorized).toBe(0);
  });

  it('4000008260003178: authenticated, then Refused 12 "Not enough balance"', async () => {
    const created = await pay(THEN_NO_FUNDS);
    expect(created.resultCode).toBe('RedirectShopper');
    const redirectResult = await clickGet(act(created), 'complete');
    expect(await details(redirectResult, `${created.reference}:resume:1`)).toMatchObject({ resultCode: 'Refused', refusalReasonCode: '12', refusalReason: 'Not enough balance' });
  });

  it('automatic capture: the details call authorises and captures', async () => {
    const created = await pay(CHALLENGE, REDIRECT, 'Sca Test', false);
    const redirectResult = await clickGet(act(created), 'complete');
    await details(redirectResult, `${created.reference}:resume:1`);
    expect(await ledgerOf(created.pspReference!)).toMatchObject({ authorized: 1000, captured: 1000 });
  });

  it('POST redirect: data {MD, PaReq, TermUrl}; the page posts redirectResult back to the returnUrl', async () => {
    await sandbox.configureAuthentication({ redirectMethod: 'POST' });
    const created = await pay(CHALLENGE);
    const action = act(created) as Record<string, unknown> & { data: Record<string, string> };
    expect(action).toMatchObject({ type: 'redirect', method: 'POST', data: { TermUrl: RETURN_URL } });
    expect(Object.keys(action.data).sort()).toEqual(['MD', 'PaReq', 'TermUrl']);
    const shown = await browser('POST', String(action['url']), action.data);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('Complete authentication');
    expect((await browser('GET', String(action['url']))).status).toBe(404); // no token: not the page
    const clicked = await browser('POST', String(action['url']), { choice: 'complete', MD: action.data['MD']! });
    expect(clicked.status).toBe(200);
    expect(clicked.text).toContain(`method="post" action="${RETURN_URL}"`);
    const redirectResult = /name="redirectResult" value="([^"]+)"/.exec(clicked.text)![1]!;
    expect(await details(redirectResult, `${created.reference}:resume:1`)).toMatchObject({ resultCode: 'Authorised' });
  });

  it('an unknown, tampered or another payment\'s redirectResult is answered 422, and settles nothing', async () => {
    const a = await pay(CHALLENGE);
    const b = await pay(CHALLENGE);
    const ra = await clickGet(act(a), 'complete');
    const forged = Buffer.from(JSON.stringify({ p: b.pspReference, s: 'guess' })).toString('base64url');
    for (const bad of ['nonsense', forged]) {
      const err: unknown = await details(bad, `bad:${bad.slice(0, 20)}`).catch((e: unknown) => e);
      expect(err).toMatchObject({ statusCode: 422, errorCode: '14_018' });
    }
    expect((await ledgerOf(b.pspReference!)).authorized).toBe(0);
    expect((await details(ra, `${a.reference}:resume:1`)).resultCode).toBe('Authorised');
  });

  it('a payment awaiting its shopper is cancelled (CANCELLATION success=true); a later details call answers Cancelled', async () => {
    const created = await pay(CHALLENGE);
    const redirectResult = await clickGet(act(created), 'complete');
    await checkout.ModificationsApi.cancelAuthorisedPaymentByPspReference(created.pspReference!, { merchantAccount, reference: created.reference });
    expect((await notificationsFor(created.pspReference!)).map((x) => [x['eventCode'], x['success']])).toEqual([['CANCELLATION', 'true']]);
    expect(await details(redirectResult, `${created.reference}:resume:1`)).toMatchObject({ resultCode: 'Cancelled', pspReference: created.pspReference });
    expect(await ledgerOf(created.pspReference!)).toMatchObject({ authorized: 0, cancelled: true });
    expect((await notificationsFor(created.pspReference!)).map((x) => x['eventCode'])).toEqual(['CANCELLATION']);
    // The page of a cancelled payment is gone too.
    const other = await pay(CHALLENGE);
    await checkout.ModificationsApi.cancelAuthorisedPayment({ merchantAccount, paymentReference: other.reference, reference: `fence-${other.reference}` });
    expect((await browser('GET', String(other.action!.url))).status).toBe(404);
  });

  it('threeDS2 action when native 3-D Secure is preferred (or forced on the account); attemptAuthentication never → Refused 38', async () => {
    const native = await pay(CHALLENGE, { authenticationData: { threeDSRequestData: { nativeThreeDS: 'preferred' } } });
    expect(native).toMatchObject({ resultCode: 'IdentifyShopper', action: { type: 'threeDS2', subtype: 'fingerprint', paymentMethodType: 'scheme' } });
    expect(typeof act(native)['token']).toBe('string');
    expect((await pay(CHALLENGE, {})).resultCode).toBe('IdentifyShopper');
    await sandbox.configureAuthentication({ forceNative: true });
    expect((await pay(CHALLENGE)).resultCode).toBe('IdentifyShopper');
    // The cancel of a threeDS2 payment is confirmed like a redirect's.
    await checkout.ModificationsApi.cancelAuthorisedPaymentByPspReference(native.pspReference!, { merchantAccount, reference: native.reference });
    expect((await notificationsFor(native.pspReference!)).map((x) => [x['eventCode'], x['success']])).toEqual([['CANCELLATION', 'true']]);
    const never = await pay(CHALLENGE, { authenticationData: { attemptAuthentication: 'never' } });
    expect(never).toMatchObject({ resultCode: 'Refused', refusalReasonCode: '38', refusalReason: 'Authentication required' });
    // A card that needs no authentication is challenged only when the request says always.
    await sandbox.configureAuthentication({ forceNative: false });
    expect((await pay('4242424242424242')).resultCode).toBe('Authorised');
    expect((await pay('4242424242424242', { ...REDIRECT, authenticationData: { attemptAuthentication: 'always', threeDSRequestData: { nativeThreeDS: 'disabled' } } })).resultCode).toBe('RedirectShopper');
    expect(client.exchanges.filter((x) => x.endpoint.endsWith('/v72/payments')).flatMap((x) => valid('PaymentResponse', JSON.parse(x.response)))).toEqual([]);
  });

  it('faults target the resume call (op resume): a 500 after processing, a reset; /payments is not hit', async () => {
    await sandbox.scheduleFault({ op: 'resume', mode: 'error_500_after_processing', count: 1 });
    const created = await pay(CHALLENGE);
    expect(created.resultCode).toBe('RedirectShopper'); // the resume fault did not fire on /payments
    const redirectResult = await clickGet(act(created), 'complete');
    const err: unknown = await details(redirectResult, `${created.reference}:resume:1`).catch((e: unknown) => e);
    expect(err).toMatchObject({ statusCode: 500 });
    // It was processed: authorised once, notified once; a new key is told it was processed (704), not the result.
    expect((await ledgerOf(created.pspReference!)).authorized).toBe(1000);
    await sandbox.scheduleFault({ op: 'resume', mode: 'reset_before_processing', count: 1 });
    await expect(details(redirectResult, `${created.reference}:resume:2`)).rejects.toThrow();
    expect(await details(redirectResult, `${created.reference}:resume:2`).catch((e: unknown) => e)).toMatchObject({ statusCode: 422, errorCode: '704' });
    expect((await notificationsFor(created.pspReference!)).map((x) => x['eventCode'])).toEqual(['AUTHORISATION']);
    expect((await sandbox.faults()).every((f) => f.remaining === 0)).toBe(true);
  });

  // Last: every exchange above (GET and POST actions, threeDS2, Refused, Cancelled details) against the spec.
  it('every /payments and /payments/details exchange of this file validates against CheckoutService-v72.json', () => {
    const checked = client.exchanges.filter((x) => /\/v72\/payments(\/details)?$/.test(x.endpoint));
    expect(checked.filter((x) => x.endpoint.endsWith('/details')).length).toBeGreaterThan(5);
    const problems = checked.flatMap((x) => x.endpoint.endsWith('/details')
      ? [...valid('PaymentDetailsRequest', JSON.parse(x.request)), ...valid('PaymentDetailsResponse', JSON.parse(x.response))]
      : [...valid('PaymentRequest', JSON.parse(x.request)), ...valid('PaymentResponse', JSON.parse(x.response))]);
    expect(problems).toEqual([]);
    expect(valid('PaymentDetailsResponse', { resultCode: 'Authorised', surprise: 1 })).not.toEqual([]);
  });
});
