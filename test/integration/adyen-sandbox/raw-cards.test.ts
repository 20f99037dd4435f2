// Vaulted cards through the Adyen connector (issue 44): the /payments request carries the card as
// paymentMethod {type: scheme, number, expiryMonth, expiryYear, cvc?, holderName?} through the
// official library over TLS to the sandbox, which checks it as Adyen does and keeps only brand,
// last 4, expiry and a fingerprint.

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeRequest } from '../../../src/conformance/harness.ts';
import type { AuthenticationRequest, Connector, ConnectorCard } from '../../../src/connectors/contract.ts';
import { createConnector } from '../../../src/connectors/registry.ts';
import { startAdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import { createSandboxTestDatabase } from '../helpers/sandbox-db.ts';
import type { TestSandboxDatabase } from '../helpers/sandbox-db.ts';
import { sandboxDatabaseText } from '../helpers/sandbox-scan.ts';

const API_KEY = 'AQE_raw_cards';
const MERCHANT = 'SwitchyardRawCards';
const NEXT_YEAR = new Date().getUTCFullYear() + 1;
const CVC = '737';
let database: TestSandboxDatabase;
let sandbox: AdyenSandbox;
let connector: Connector;

beforeAll(async () => {
  database = await createSandboxTestDatabase('adyen_raw_cards');
  sandbox = await startAdyenSandbox({ database, account: 'adyen_raw', apiKey: API_KEY, merchantAccount: MERCHANT, certificateDirectory: join(tmpdir(), 'switchyard-adyen-sandbox') });
  connector = createConnector('adyen_raw', {
    type: 'adyen',
    sandbox: true,
    settings: {
      apiKey: API_KEY, merchantAccount: MERCHANT, hmacKeys: ['44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056'],
      webhookUsername: 'u', webhookPassword: 'p', environment: 'TEST', baseUrl: sandbox.url, caPem: sandbox.caPem, timeoutMs: 5_000,
    },
  });
});
afterAll(async () => {
  await connector?.close?.();
  await sandbox?.close();
  await database?.drop();
});
beforeEach(() => sandbox.configureRawCardData(true));

function card(number: string, o: Partial<ConnectorCard> = {}): ConnectorCard {
  return { paymentMethodId: 'pmd_test', number, expMonth: 3, expYear: NEXT_YEAR, cvc: CVC, holderName: 'Ada Lovelace', ...o };
}

function authorize(c: ConnectorCard, o: { authentication?: AuthenticationRequest } = {}) {
  const req = { ...authorizeRequest(connector, { paymentMethod: { card: c }, ...o }), providerRef: null };
  return connector.authorize(req).then((outcome) => ({ req, outcome }));
}

async function ledgerOf(attemptId: string) {
  return (await sandbox.ledger()).filter((e) => e.reference === attemptId);
}

describe('Adyen connector with a vaulted card (paymentMethod scheme, raw card data)', () => {
  it("authorizes Adyen's test cards, with and without the code", async () => {
    for (const [number, o] of [['5555555555554444', {}], ['5555341244441115', {}], ['4111111145551142', { cvc: null, holderName: null }], ['370000000000002', { cvc: '7373' }]] as const) {
      const { req, outcome } = await authorize(card(number, o));
      expect(outcome, number).toMatchObject({ kind: 'succeeded', amount: 1000 });
      expect(await ledgerOf(req.attemptId)).toMatchObject([{ authorized: 1000, captured: 0 }]);
    }
  });

  it("honours the gateway's test cards (Stripe's numbers) as this sandbox always has: 4242… approved, 9995 refused for funds", async () => {
    expect((await authorize(card('4242424242424242'))).outcome).toMatchObject({ kind: 'succeeded' });
    expect((await authorize(card('4000000000009995'))).outcome).toMatchObject({ kind: 'declined', code: 'insufficient_funds', providerCode: '12' });
  });

  it("refuses as Adyen's test platform does: holder-name triggers, an expired card, a number it does not know", async () => {
    expect((await authorize(card('5555555555554444', { holderName: 'DECLINED' }))).outcome).toMatchObject({ kind: 'declined', code: 'generic_decline', providerCode: '2' });
    const expired = await authorize(card('5555555555554444', { expYear: new Date().getUTCFullYear() - 1 }));
    expect(expired.outcome).toMatchObject({ kind: 'declined', code: 'expired_card', class: 'hard', providerCode: '6' });
    expect(await ledgerOf(expired.req.attemptId)).toMatchObject([{ status: 'Refused', authorized: 0 }]);
    expect((await authorize(card('4024007134364842'))).outcome).toMatchObject({ kind: 'declined', code: 'generic_decline', providerCode: '2' });
  });

  it('a 3-D Secure 2 card asks the shopper with a return page, and is refused Authentication required without one', async () => {
    const returnUrl = 'https://gateway.example/authenticate/att/return';
    const auth: AuthenticationRequest = { mode: 'automatic', forced: false, returnUrl, origin: 'https://shop.example', browserInfo: null, shopperIp: null };
    const challenged = await authorize(card('4917610000000000'), { authentication: auth });
    expect(challenged.outcome).toMatchObject({ kind: 'action_required', redirect: { method: 'GET' } });
    const never: AuthenticationRequest = { ...auth, returnUrl: null };
    expect((await authorize(card('5454545454545454'), { authentication: never })).outcome).toMatchObject({ kind: 'declined', code: 'authentication_required' });
  });

  it("an invalid card is Adyen's 422 validation error, not sent (nothing recorded): number 101, expiry 129, code 103", async () => {
    const cases: [ConnectorCard, string][] = [
      [card('5555555555554443'), '101'],
      [card('5555555555554444', { expMonth: 13 }), '129'],
      [card('5555555555554444', { cvc: '12345' }), '103'],
      [card('370000000000002', { cvc: '737' }), '103'],
    ];
    for (const [c, errorCode] of cases) {
      const { req, outcome } = await authorize(c);
      expect(outcome, errorCode).toMatchObject({ kind: 'not_sent', reason: 'validation' });
      expect((outcome as { detail?: string }).detail, errorCode).toContain(errorCode);
      expect(await ledgerOf(req.attemptId)).toEqual([]);
    }
  });

  it('refuses raw card data for an API credential without it: 403 010 Not allowed, not sent', async () => {
    await sandbox.configureRawCardData(false);
    const { req, outcome } = await authorize(card('5555555555554444'));
    expect(outcome).toMatchObject({ kind: 'not_sent', reason: 'permission' });
    expect(await ledgerOf(req.attemptId)).toEqual([]);
    await sandbox.configureRawCardData(true);
    expect((await connector.authorize(req)).kind).toBe('succeeded');
  });

  it('a same-key resend with the same card replays the first answer: one payment', async () => {
    const first = await authorize(card('5555555555554444'));
    expect(await connector.authorize(first.req)).toEqual(first.outcome);
    expect(await ledgerOf(first.req.attemptId)).toHaveLength(1);
  });

  it('gives the numbers of docs/sandbox.md their documented outcomes', async () => {
    const table: [string, string][] = [
      ['4111111111111111', 'succeeded'], ['2222400070000005', 'succeeded'], ['4988438843884305', 'succeeded'], ['4000000000000515', 'succeeded'],
      ['378282246310005', '2'], ['4000056655665556', '2'], ['4000000000003220', '2'], ['4000000000006975', '2'], ['4000000000000002', '2'],
      ['4000000000009979', '5'], ['4000000000000069', '6'], ['4000000000000127', '24'], ['4000000000000119', '4'],
    ];
    for (const [number, expected] of table) {
      const { outcome } = await authorize(card(number, number.startsWith('37') ? { cvc: '7373' } : {}));
      expect(outcome.kind === 'declined' ? outcome.providerCode : outcome.kind, number).toBe(expected);
    }
    const returnUrl = 'https://gateway.example/authenticate/att/return';
    const auth: AuthenticationRequest = { mode: 'automatic', forced: false, returnUrl, origin: 'https://shop.example', browserInfo: null, shopperIp: null };
    for (const number of ['5454545454545454', '4212345678910006', '4000002760003184', '4000008260003178']) {
      expect((await authorize(card(number), { authentication: auth })).outcome.kind, number).toBe('action_required');
    }
  });

  it('the sandbox stores no card number and no code: payments, keys, answers, notifications', async () => {
    await authorize(card('2222400070000005'));
    await sandbox.webhooksIdle();
    const text = await sandboxDatabaseText(database);
    expect(text).toMatch(/last4[^0-9]{1,12}0005/);
    // Booleans, not toContain: a failure must not print the whole database.
    for (const n of ['5555555555554444', '2222400070000005', '4024007134364842', '4917610000000000', '4111111145551142']) {
      expect(text.includes(n), `${n} is stored in the sandbox database`).toBe(false);
    }
    expect(text.includes(`"${CVC}"`), 'the code is stored').toBe(false);
    expect(/"cvc\\?":/.test(text), 'a cvc field is stored').toBe(false);
  });
});
