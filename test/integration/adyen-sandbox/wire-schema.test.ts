// The Adyen sandbox driven by the official library over real TLS sockets: every request the library
// sends and every answer the sandbox gives is validated against the shipped CheckoutService-v72.json
// (ajv, present in node_modules through eslint; the spec's additionalProperties:false catches extras).

import { withOwnSandboxDatabase } from '../helpers/sandbox-db.ts';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import adyen from '@adyen/api-library';
import { startAdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import { RedirectingHttpClient } from '../../../src/connectors/adyen/transport.ts';

const spec = JSON.parse(readFileSync(new URL('../../fixtures/provider-specs/adyen/CheckoutService-v72.json', import.meta.url), 'utf8')) as object;
const ajv = new Ajv({ unknownFormats: 'ignore', validateSchema: false, allErrors: true, logger: false });
ajv.addSchema(spec, 'checkout');

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

function valid(schema: string, data: unknown): string[] {
  const ok = ajv.validate({ $ref: `checkout#/components/schemas/${schema}` }, data);
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

  it('the validator is not vacuous: an extra field or a wrong type is refused', () => {
    expect(valid('PaymentCaptureResponse', { merchantAccount, paymentPspReference: 'A', pspReference: 'B', status: 'received', amount: { value: 1, currency: 'EUR' }, surprise: 1 })).not.toEqual([]);
    expect(valid('PaymentCaptureResponse', { merchantAccount, paymentPspReference: 'A', pspReference: 'B', status: 'received', amount: { value: '1', currency: 'EUR' } })).not.toEqual([]);
  });
});
