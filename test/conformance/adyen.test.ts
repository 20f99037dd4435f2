// Registers the Adyen connector with the conformance kit, against the Adyen HTTPS sandbox, and adds
// the Adyen-only cases: an unknown /payments resolved by same-key replay (the technical cancel is the
// kit's "fence by our reference" block).

import { withOwnSandboxDatabase } from '../integration/helpers/sandbox-db.ts';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import adyen from '@adyen/api-library';
import { defineConnectorConformance } from '../../src/conformance/kit.ts';
import type { ConformanceSubject, KitConnectorOptions, WireReply, WireSample } from '../../src/conformance/kit.ts';
import { useSandbox } from '../../src/conformance/context.ts';
import { authorizeRequest } from '../../src/conformance/harness.ts';
import type { Connector, FailureSituation } from '../../src/connectors/contract.ts';
import { createConnector } from '../../src/connectors/registry.ts';
import { basicAuthorization, ensureSandboxTlsMaterial, resignNotificationBody, startAdyenSandbox } from '../../src/sandboxes/adyen/index.ts';
import type { AdyenSandbox } from '../../src/sandboxes/adyen/index.ts';
import { RedirectingHttpClient } from '../../src/connectors/adyen/transport.ts';

export const ADYEN_KIT = {
  apiKey: 'AQE_switchyard_kit_key',
  merchantAccount: 'SwitchyardKitECOM',
  username: 'adyen-webhooks',
  password: 'kit-webhook-password',
  certificateDirectory: join(tmpdir(), 'switchyard-adyen-sandbox'),
  reportDelayMs: 200,
  /** The report service user's key: reports are not served to the payments key. */
  reportApiKey: 'AQE_switchyard_kit_report_user',
} as const;
const KEYS = {
  previous: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
  current: 'DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00',
  foreign: '0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF',
} as const;

const tls = ensureSandboxTlsMaterial(ADYEN_KIT.certificateDirectory);
const spec = JSON.parse(readFileSync(new URL('../fixtures/provider-specs/adyen/CheckoutService-v72.json', import.meta.url), 'utf8')) as {
  components: { examples: Record<string, { value: Record<string, unknown> }> };
};

function adyenAccount(baseUrl: string, o: KitConnectorOptions = {}): Connector {
  const live = o.liveAccount === true;
  return createConnector(live ? 'adyen_kit_live' : 'adyen_kit', {
    type: 'adyen',
    sandbox: !live,
    settings: {
      apiKey: o.badCredentials === true ? 'AQE_not_this_sandbox' : ADYEN_KIT.apiKey,
      merchantAccount: ADYEN_KIT.merchantAccount,
      hmacKeys: [...(o.webhookSecrets ?? [KEYS.current])],
      webhookUsername: ADYEN_KIT.username,
      webhookPassword: ADYEN_KIT.password,
      environment: live ? 'LIVE' : 'TEST',
      ...(live && { liveEndpointUrlPrefix: 'kit-live' }),
      baseUrl,
      caPem: tls.caPem,
      timeoutMs: o.timeoutMs ?? 5_000,
      reportDelayMs: ADYEN_KIT.reportDelayMs,
      reportApiKey: ADYEN_KIT.reportApiKey,
    },
  });
}

function json(status: number, body: unknown): WireReply {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** Adyen's answers for what the sandbox does not produce. */
function scriptedReply(situation: FailureSituation): WireReply | null {
  switch (situation) {
    case 'permission':
      return json(403, { status: 403, errorCode: '010', message: 'Not allowed', errorType: 'security' });
    case 'rate_limited':
      return json(429, { status: 429, errorCode: '429', message: 'Too many requests', errorType: 'validation' });
    case 'truncated_body':
      return { ...json(200, spec.components.examples['post-payments-card-direct-200']?.value), truncate: true };
    case 'unparseable':
      return { status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>502 Bad Gateway</body></html>' };
    default:
      return null;
  }
}

async function wireSamples(sandbox: AdyenSandbox): Promise<readonly WireSample[]> {
  const client = new adyen.Client({ apiKey: ADYEN_KIT.apiKey, environment: adyen.EnvironmentEnum.TEST }, new RedirectingHttpClient(sandbox.url, sandbox.caPem));
  const checkout = new adyen.CheckoutAPI(client);
  const merchantAccount = ADYEN_KIT.merchantAccount;
  const amount = { value: 1000, currency: 'EUR' };
  const card = { type: 'scheme', encryptedCardNumber: 'test_4111111111111111', encryptedExpiryMonth: 'test_03', encryptedExpiryYear: 'test_2030', encryptedSecurityCode: 'test_737' };
  const pay = (reference: string, manual: boolean): Promise<adyen.Types.checkout.PaymentResponse> =>
    checkout.PaymentsApi.payments({ amount, merchantAccount, reference, returnUrl: 'https://kit.invalid', paymentMethod: card, ...(manual && { additionalData: { manualCapture: 'true' } }) } as adyen.Types.checkout.PaymentRequest);
  const held = await pay('att_wire_held', true);
  const toCancel = await pay('att_wire_cancel', true);
  const taken = await pay('att_wire_taken', false);
  const mods = checkout.ModificationsApi;
  const plain = (o: object): Record<string, unknown> => JSON.parse(JSON.stringify(o)) as Record<string, unknown>;
  const example = (name: string): Record<string, unknown> => spec.components.examples[name]?.value ?? {};
  return [
    { objectType: 'PaymentResponse', actual: plain(held), reference: example('post-payments-card-direct-200') },
    { objectType: 'PaymentCaptureResponse', actual: plain(await mods.captureAuthorisedPayment(held.pspReference ?? '', { amount, merchantAccount, reference: 'cap' })), reference: example('post-payments-paymentPspReference-captures-capture-201') },
    { objectType: 'PaymentCancelResponse', actual: plain(await mods.cancelAuthorisedPaymentByPspReference(toCancel.pspReference ?? '', { merchantAccount, reference: 'void' })), reference: example('post-payments-paymentPspReference-cancels-cancel-with-psp-reference-201') },
    { objectType: 'PaymentRefundResponse', actual: plain(await mods.refundCapturedPayment(taken.pspReference ?? '', { amount, merchantAccount, reference: 'ref' })), reference: example('post-payments-paymentPspReference-refunds-refund-201') },
    { objectType: 'StandalonePaymentCancelResponse', actual: plain(await mods.cancelAuthorisedPayment({ merchantAccount, paymentReference: 'att_wire_fence', reference: 'fence' })), reference: example('post-cancels-cancel-with-own-reference-201') },
  ];
}

const auth = (): Record<string, string> => ({ 'content-type': 'application/json', authorization: basicAuthorization(ADYEN_KIT.username, ADYEN_KIT.password) });

export const adyenConformanceSubject: ConformanceSubject<AdyenSandbox> = {
  name: 'adyen',
  makeSandbox: ({ webhook }) =>
    withOwnSandboxDatabase('conformance_adyen', (database) => startAdyenSandbox({
      database,
      account: 'adyen_kit',
      apiKey: ADYEN_KIT.apiKey,
      merchantAccount: ADYEN_KIT.merchantAccount,
      certificateDirectory: ADYEN_KIT.certificateDirectory,
      webhook: { url: webhook.url, hmacKey: webhook.secret, username: ADYEN_KIT.username, password: ADYEN_KIT.password },
      webhookRetry: { maxAttempts: 2, baseMs: 20 },
      reportDelayMs: ADYEN_KIT.reportDelayMs,
      reportUser: { apiKey: ADYEN_KIT.reportApiKey },
    })),
  makeConnector: (sandbox, o) => adyenAccount(sandbox.url, o),
  // A day later every booking's day has closed; the sandbox announces its reports as Adyen does.
  publishReports: async (sandbox) => {
    await sandbox.advanceClock(86_400 + 60);
    return sandbox.announceReports();
  },
  makeConnectorAt: ({ host, port }, o) => adyenAccount(`https://${host}:${port}`, o),
  // The signature is inside the body (per item); the headers carry only the basic auth.
  signWebhook: () => auth(),
  signWebhookBody: (rawBody, secret) => ({ rawBody: resignNotificationBody(rawBody, secret), headers: auth() }),
  webhookSignatureTimestamped: false,
  wireTls: { key: tls.keyPem, cert: tls.certPem },
  browserCa: tls.caPem,
  sdkResendsAfterReset: 0,
  webhookSecrets: KEYS,
  scriptedReply,
  amountCases: [
    { currency: 'JPY', amount: 500, received: 500 },
    { currency: 'EUR', amount: 1234, received: 1234 },
    { currency: 'KWD', amount: 12345, received: 12345 },
    { currency: 'CLP', amount: 5000, received: 500000 }, // Adyen takes CLP with 2 decimals
    { currency: 'ISK', amount: 2790, received: 279000 }, // and ISK
    { currency: 'IDR', amount: 1234500, received: 12345 }, // whole rupiah
    { currency: 'CVE', amount: 12300, received: 123 }, // whole escudos
  ],
  unsendableAmounts: [{ currency: 'IDR', amount: 1234550 }, { currency: 'CVE', amount: 12345 }],
  wireSamples: (sandbox) => wireSamples(sandbox),
};

defineConnectorConformance(adyenConformanceSubject);

describe('adyen: resolving an unknown /payments', () => {
  const kit = useSandbox(adyenConformanceSubject);

  it('a same-key replay inside the retention returns the stored answer: one charge, the same pspReference', async () => {
    const { connector, sandbox, ledgerOf } = kit();
    const req = { ...authorizeRequest(connector), providerRef: null };
    await sandbox.scheduleFault({ op: 'authorize', mode: 'accept_then_drop', count: 1 });
    const lost = await connector.authorize(req);
    expect(lost).toMatchObject({ kind: 'unknown', reason: 'connection_reset' });
    const replay = await connector.authorize(req);
    expect(replay).toMatchObject({ kind: 'succeeded', amount: 1000 });
    expect((await ledgerOf(req.attemptId))).toMatchObject([{ id: 'providerRef' in replay ? replay.providerRef : '', authorized: 1000 }]);
  });

  it('a replay while the first request still runs is unknown{in_progress} (704); asking again later gives the answer', async () => {
    const { connector, sandbox, ledgerOf } = kit();
    const req = { ...authorizeRequest(connector), providerRef: null };
    await sandbox.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 800, process: 'after', count: 1 });
    const first = connector.authorize(req);
    await new Promise((r) => setTimeout(r, 200));
    expect(await connector.authorize(req)).toMatchObject({ kind: 'unknown', reason: 'in_progress' });
    expect((await first).kind).toBe('succeeded');
    expect(await connector.authorize(req)).toEqual(await first);
    expect((await ledgerOf(req.attemptId))).toHaveLength(1);
  });

  // The technical cancel (fence by our reference) and what its confirmation proves: the kit's
  // 'fence by our reference' cases, in both of the sandbox's in-flight behaviours.
});
