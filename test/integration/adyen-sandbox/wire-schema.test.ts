// The Adyen sandbox driven by the official library over real TLS sockets: every request the library
// sends and every answer the sandbox gives is validated against the shipped CheckoutService-v72.json
// (ajv, present in node_modules through eslint; the spec's additionalProperties:false catches extras);
// the dispute notifications it sends against the shipped Webhooks-v1.json.

import { withOwnSandboxDatabase } from '../helpers/sandbox-db.ts';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import adyen from '@adyen/api-library';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startAdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import { RedirectingHttpClient } from '../../../src/connectors/adyen/transport.ts';

const spec = JSON.parse(readFileSync(new URL('../../fixtures/provider-specs/adyen/CheckoutService-v72.json', import.meta.url), 'utf8')) as object;
const webhooksSpec = JSON.parse(readFileSync(new URL('../../fixtures/provider-specs/adyen/Webhooks-v1.json', import.meta.url), 'utf8')) as object;
const ajv = new Ajv({ unknownFormats: 'ignore', validateSchema: false, allErrors: true, logger: false });
ajv.addSchema(spec, 'checkout');
ajv.addSchema(webhooksSpec, 'webhooks');

interface Exchange {
  readonly endpoint: string;
  readonly request: string;
  readonly response: string;
}

/** The library's own client, recording the exact JSON it sends and receives. */
class RecordingClient extends RedirectingHttpClient {
  readonly exchanges: Exchange[] = [];
  override async request(...args: Parameters<RedirectingHttpClient['request']>): Promise<string> {
    const response = await super.request(...args);
    this.exchanges.push({ endpoint: args[0], request: String(args[1]), response });
    return response;
  }
}

function valid(schema: string, data: unknown, document = 'checkout'): string[] {
  const ok = ajv.validate({ $ref: `${document}#/components/schemas/${schema}` }, data);
  return ok ? [] : (ajv.errors ?? []).map((e) => `${schema}${e.dataPath} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

const SCHEMAS: readonly [RegExp, string, string][] = [
  [/\/v72\/payments$/, 'PaymentRequest', 'PaymentResponse'],
  [/\/captures$/, 'PaymentCaptureRequest', 'PaymentCaptureResponse'],
  [/\/payments\/[^/]+\/cancels$/, 'PaymentCancelRequest', 'PaymentCancelResponse'],
  [/\/refunds$/, 'PaymentRefundRequest', 'PaymentRefundResponse'],
  [/\/reversals$/, 'PaymentReversalRequest', 'PaymentReversalResponse'],
  [/\/v72\/cancels$/, 'StandalonePaymentCancelRequest', 'StandalonePaymentCancelResponse'],
];

describe('adyen sandbox: wire shapes against CheckoutService-v72.json', () => {
  let sandbox: AdyenSandbox;
  let client: RecordingClient;
  let checkout: InstanceType<typeof adyen.CheckoutAPI>;
  const merchantAccount = 'SwitchyardWire';

  beforeAll(async () => {
    sandbox = await withOwnSandboxDatabase('adyen_wire', (database) => startAdyenSandbox({ database, account: 'adyen_wire', apiKey: 'AQE_wire', merchantAccount, certificateDirectory: join(tmpdir(), 'switchyard-adyen-sandbox') }));
    client = new RecordingClient(sandbox.url, sandbox.caPem);
    checkout = new adyen.CheckoutAPI(new adyen.Client({ apiKey: 'AQE_wire', environment: adyen.EnvironmentEnum.TEST }, client));
  });
  afterAll(() => sandbox.close());

  it('every operation the connector uses, approved and refused, validates both ways', async () => {
    const amount = { value: 1000, currency: 'EUR' };
    const card = (holderName: string) => ({ type: 'scheme', encryptedCardNumber: 'test_4111111111111111', encryptedExpiryMonth: 'test_03', encryptedExpiryYear: 'test_2030', encryptedSecurityCode: 'test_737', holderName });
    const pay = (reference: string, holder: string, manual: boolean) =>
      checkout.PaymentsApi.payments({ amount, merchantAccount, reference, returnUrl: 'https://wire.invalid', paymentMethod: card(holder), ...(manual && { additionalData: { manualCapture: 'true' } }) } as adyen.Types.checkout.PaymentRequest, { idempotencyKey: `${reference}:auth` });
    const held = await pay('att_w1', 'Wire Test', true);
    const refused = await pay('att_w2', 'NOT_ENOUGH_BALANCE', true);
    expect(refused).toMatchObject({ resultCode: 'Refused', refusalReasonCode: '12' });
    const toVoid = await pay('att_w3', 'Wire Test', true);
    const taken = await pay('att_w4', 'Wire Test', false);
    const mods = checkout.ModificationsApi;
    await mods.captureAuthorisedPayment(held.pspReference ?? '', { amount, merchantAccount, reference: 'att_w1' });
    await mods.cancelAuthorisedPaymentByPspReference(toVoid.pspReference ?? '', { merchantAccount, reference: 'att_w3' });
    await mods.refundCapturedPayment(taken.pspReference ?? '', { amount: { value: 400, currency: 'EUR' }, merchantAccount, reference: 'att_w4', merchantRefundReason: 'CUSTOMER REQUEST' as adyen.Types.checkout.PaymentRefundRequest.MerchantRefundReasonEnum });
    await mods.refundOrCancelPayment(taken.pspReference ?? '', { merchantAccount, reference: 'att_w4' });
    await mods.cancelAuthorisedPayment({ merchantAccount, paymentReference: 'att_w5', reference: 'fence-att_w5' });

    expect(client.exchanges.length).toBe(9);
    const problems: string[] = [];
    for (const x of client.exchanges) {
      const row = SCHEMAS.find(([re]) => re.test(x.endpoint));
      expect(row, x.endpoint).toBeDefined();
      if (row === undefined) continue;
      problems.push(...valid(row[1], JSON.parse(x.request)), ...valid(row[2], JSON.parse(x.response)));
    }
    expect(problems).toEqual([]);
  });

  it('error answers are ServiceError bodies whose status matches the HTTP status', async () => {
    const err: unknown = await checkout.ModificationsApi.captureAuthorisedPayment('NOPE', { amount: { value: 1, currency: 'EUR' }, merchantAccount }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'HttpClientException', statusCode: 422, errorCode: '167' });
    const body: unknown = JSON.parse(String((err as { responseBody?: string }).responseBody));
    expect(valid('ServiceError', body)).toEqual([]);
  });

  it('dispute notifications, every code of every path: DisputesNotificationRequestItem of Webhooks-v1.json, the dispute\'s pspReference on each', async () => {
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end('[accepted]');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      sandbox.setWebhookEndpoint({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056', username: 'u', password: 'p' });
      const amount = { value: 5000, currency: 'EUR' };
      const paid = await checkout.PaymentsApi.payments({ amount, merchantAccount, reference: 'att_wd', returnUrl: 'https://wire.invalid', paymentMethod: { type: 'scheme', encryptedCardNumber: 'test_4111111111111111', encryptedExpiryMonth: 'test_03', encryptedExpiryYear: 'test_2030', encryptedSecurityCode: 'test_737', holderName: 'Wire Test' } } as adyen.Types.checkout.PaymentRequest, { idempotencyKey: 'att_wd:auth' });
      const psp = paid.pspReference ?? '';
      const paths = [
        ['NOTIFICATION_OF_CHARGEBACK', 'CHARGEBACK', 'INFORMATION_SUPPLIED', 'CHARGEBACK_REVERSED', 'SECOND_CHARGEBACK'],
        ['CHARGEBACK', 'CHARGEBACK_REVERSED', 'SECOND_CHARGEBACK', 'ISSUER_COMMENTS', 'PREARBITRATION_LOST'],
        ['REQUEST_FOR_INFORMATION', 'ISSUER_COMMENTS', 'ISSUER_RESPONSE_TIMEFRAME_EXPIRED'],
        ['NOTIFICATION_OF_FRAUD'],
        ['CHARGEBACK', 'DISPUTE_DEFENSE_PERIOD_ENDED'],
        ['CHARGEBACK', 'CHARGEBACK_REVERSED', 'SECOND_CHARGEBACK', 'PREARBITRATION_WON'],
      ];
      const refs: string[] = [];
      for (const [i, codes] of paths.entries()) {
        // The first path without disputeStatus (Brazil); SECOND_CHARGEBACK Pending where pre-arbitration follows.
        refs.push(await sandbox.dispute(psp, codes.map((eventCode) => ({ eventCode, ...(i === 0 ? { disputeStatus: null } : eventCode === 'SECOND_CHARGEBACK' ? { disputeStatus: 'Pending' } : {}) })), { amount: 1000 }));
      }
      // A step the lifecycle does not allow is refused: a reversal of funds never withdrawn, anything after the end.
      await expect(sandbox.dispute(psp, [{ eventCode: 'CHARGEBACK_REVERSED' }])).rejects.toThrow(/no funds are withdrawn/);
      await expect(sandbox.dispute(psp, [{ eventCode: 'CHARGEBACK' }], { disputePspReference: refs[4]! })).rejects.toThrow(/closed/);
      await sandbox.webhooksIdle();
      const items = bodies.flatMap((b) => (JSON.parse(b) as { notificationItems: { NotificationRequestItem: Record<string, unknown> & { additionalData?: Record<string, string> } }[] }).notificationItems.map((w) => w.NotificationRequestItem))
        .filter((x) => refs.includes(String(x['pspReference'])));
      expect(items.map((x) => x['eventCode'])).toEqual(paths.flat());
      expect(new Set(items.map((x) => x['originalReference']))).toEqual(new Set([psp]));
      expect(items.map((x) => x['pspReference'])).toEqual(paths.flatMap((codes, i) => codes.map(() => refs[i])));
      expect(items.slice(0, 5).every((x) => x.additionalData?.['disputeStatus'] === undefined)).toBe(true);
      expect(items.slice(5).map((x) => x.additionalData?.['disputeStatus'])).toEqual([
        'Undefended', 'Pending', 'Pending', 'Pending', 'Lost', 'Unresponded', 'Pending', 'Expired', undefined, 'Undefended', 'Expired', 'Undefended', 'Pending', 'Pending', 'Won']);
      expect(items.flatMap((x) => valid('DisputesNotificationRequestItem', x, 'webhooks'))).toEqual([]);
      expect(valid('DisputesNotificationRequestItem', { ...items[0], surprise: 1 }, 'webhooks')).not.toEqual([]);
    } finally {
      sandbox.setWebhookEndpoint(undefined);
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('the validator is not vacuous: an extra field or a wrong type is refused', () => {
    expect(valid('PaymentCaptureResponse', { merchantAccount, paymentPspReference: 'A', pspReference: 'B', status: 'received', amount: { value: 1, currency: 'EUR' }, surprise: 1 })).not.toEqual([]);
    expect(valid('PaymentCaptureResponse', { merchantAccount, paymentPspReference: 'A', pspReference: 'B', status: 'received', amount: { value: '1', currency: 'EUR' } })).not.toEqual([]);
  });
});
