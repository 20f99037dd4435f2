// Vaulted cards through the Stripe connector (issue 44): the authorization carries the card as
// payment_method_data[card] (card-data.ts), over the official SDK to the sandbox, which checks it
// as live Stripe does and keeps only brand, last 4, expiry and fingerprint.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type Stripe from 'stripe';
import { authorizeRequest } from '../../../src/conformance/harness.ts';
import type { AuthenticationRequest, Connector, ConnectorCard } from '../../../src/connectors/contract.ts';
import { withRawCard } from '../../../src/connectors/stripe/card-data.ts';
import { startStripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { createSandboxTestDatabase } from '../helpers/sandbox-db.ts';
import type { TestSandboxDatabase } from '../helpers/sandbox-db.ts';
import { sandboxDatabaseText } from '../helpers/sandbox-scan.ts';
import { rejectionOf, SECRET_KEY, stripeConnectorFor, stripeFor } from './helpers.ts';

const NEXT_YEAR = new Date().getUTCFullYear() + 1;
const CVC = '987';
let database: TestSandboxDatabase;
let sandbox: StripeSandbox;
let stripe: Stripe;
let connector: Connector;

beforeAll(async () => {
  database = await createSandboxTestDatabase('stripe_raw_cards');
  sandbox = await startStripeSandbox({ database, account: 'stripe_raw', secretKey: SECRET_KEY });
  stripe = stripeFor(sandbox);
  connector = stripeConnectorFor(sandbox);
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

function authorize(c: ConnectorCard, o: { authentication?: AuthenticationRequest; authKey?: string } = {}) {
  const req = { ...authorizeRequest(connector, { paymentMethod: { card: c }, ...o }), providerRef: null };
  return connector.authorize(req).then((outcome) => ({ req, outcome }));
}

async function ledgerOf(attemptId: string) {
  return (await sandbox.ledger()).filter((e) => e.reference === attemptId);
}

/** The sandbox's own answer to a raw card sent with the SDK (the connector's params, through the typed helper). */
async function rawAnswer(c: ConnectorCard): Promise<{ statusCode?: number; type?: string; rawType?: string; code?: string; param?: string; message?: string }> {
  const params = withRawCard({ amount: 1000, currency: 'eur', confirm: true, capture_method: 'manual', error_on_requires_action: true, allowed_payment_method_types: ['card'] }, c);
  return (await rejectionOf(stripe.paymentIntents.create(params))) as never;
}

describe('Stripe connector with a vaulted card (payment_method_data[card])', () => {
  it('authorizes an approved card; the charge shows brand, last 4, expiry and fingerprint, and the code was checked', async () => {
    const { req, outcome } = await authorize(card('4242424242424242'));
    expect(outcome).toMatchObject({ kind: 'succeeded', amount: 1000 });
    const pi = await stripe.paymentIntents.retrieve((outcome as { providerRef: string }).providerRef, { expand: ['latest_charge'] });
    const details = (pi.latest_charge as Stripe.Charge).payment_method_details?.card;
    expect(details).toMatchObject({ brand: 'visa', last4: '4242', exp_month: 3, exp_year: NEXT_YEAR, checks: { cvc_check: 'pass' } });
    expect(details?.fingerprint).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(pi.payment_method).toMatch(/^pm_/);
    expect(await ledgerOf(req.attemptId)).toMatchObject([{ authorized: 1000, captured: 0 }]);
  });

  it('authorizes without the code (the vault forgot it): cvc is not sent and not checked', async () => {
    const { outcome } = await authorize(card('5555555555554444', { cvc: null, holderName: null }));
    expect(outcome).toMatchObject({ kind: 'succeeded' });
    const pi = await stripe.paymentIntents.retrieve((outcome as { providerRef: string }).providerRef, { expand: ['latest_charge'] });
    expect((pi.latest_charge as Stripe.Charge).payment_method_details?.card).toMatchObject({ brand: 'mastercard', last4: '4444', checks: { cvc_check: null } });
  });

  it('the same card gives the same fingerprint; another card another', async () => {
    const fingerprint = async (c: ConnectorCard): Promise<string | null | undefined> => {
      const { outcome } = await authorize(c);
      const pi = await stripe.paymentIntents.retrieve((outcome as { providerRef: string }).providerRef, { expand: ['latest_charge'] });
      return (pi.latest_charge as Stripe.Charge).payment_method_details?.card?.fingerprint;
    };
    const a = await fingerprint(card('4000056655665556'));
    expect(await fingerprint(card('4000056655665556', { cvc: null }))).toBe(a);
    expect(await fingerprint(card('5200828282828210'))).not.toBe(a);
  });

  it('declines the documented decline numbers as their pm_card_* twins do', async () => {
    const generic = await authorize(card('4000000000000002'));
    expect(generic.outcome).toMatchObject({ kind: 'declined', code: 'generic_decline', class: 'soft', retryElsewhere: false });
    expect((generic.outcome as { providerRef?: string }).providerRef).toMatch(/^pi_/);
    const funds = await authorize(card('4000000000009995'));
    expect(funds.outcome).toMatchObject({ kind: 'declined', code: 'insufficient_funds' });
    expect(await ledgerOf(funds.req.attemptId)).toMatchObject([{ authorized: 0 }]);
  });

  it('a 3-D Secure card asks for authentication with a return page, and is declined authentication_required without one', async () => {
    const returnUrl = 'https://gateway.example/authenticate/att/return';
    const auth: AuthenticationRequest = { mode: 'automatic', forced: false, returnUrl, origin: 'https://shop.example', browserInfo: null, shopperIp: null };
    const challenged = await authorize(card('4000000000003220'), { authentication: auth });
    expect(challenged.outcome).toMatchObject({ kind: 'action_required', redirect: { method: 'GET' } });
    const page = new URL((challenged.outcome as { redirect: { url: string } }).redirect.url);
    expect(page.pathname).toMatch(/^\/3ds\/authenticate\/pi_/);
    const noPage = await authorize(card('4000002500003155'));
    expect(noPage.outcome).toMatchObject({ kind: 'declined', code: 'authentication_required' });
  });

  it('an invalid number is a hard decline (incorrect_number) that created nothing', async () => {
    const { req, outcome } = await authorize(card('4242424242424241'));
    expect(outcome).toMatchObject({ kind: 'declined', code: 'incorrect_number', class: 'hard', retryElsewhere: false });
    expect(await ledgerOf(req.attemptId)).toEqual([]);
  });

  it('a number that is no test card is declined test_mode_live_card, as in test mode', async () => {
    const { outcome } = await authorize(card('4024007134364842'));
    expect(outcome).toMatchObject({ kind: 'declined', code: 'test_mode_live_card', retryElsewhere: false });
  });

  it('refuses raw card data when the account has not enabled it: not sent, nothing created', async () => {
    await sandbox.configureRawCardData(false);
    const { req, outcome } = await authorize(card('4242424242424242'));
    expect(outcome).toMatchObject({ kind: 'not_sent', reason: 'permission' });
    expect((outcome as { detail: string }).detail).toContain('Sending credit card numbers directly to the Stripe API is generally unsafe');
    expect(await ledgerOf(req.attemptId)).toEqual([]);
    const answer = await rawAnswer(card('4242424242424242'));
    expect(answer).toMatchObject({ statusCode: 402, rawType: 'invalid_request_error' });
    // Refusals are not stored under the key: once enabled, the same request goes through.
    await sandbox.configureRawCardData(true);
    expect((await connector.authorize(req)).kind).toBe('succeeded');
  });

  it("checks the card as live does: Stripe's card_error codes, naming the parameter", async () => {
    const thisYear = new Date().getUTCFullYear();
    const cases: [ConnectorCard, string, string][] = [
      [card('4242424242424241'), 'incorrect_number', 'number'],
      [card('42424242'), 'invalid_number', 'number'],
      [card('4242424242424242', { expMonth: 13 }), 'invalid_expiry_month', 'exp_month'],
      [card('4242424242424242', { expYear: thisYear - 1 }), 'invalid_expiry_year', 'exp_year'],
      [card('4242424242424242', { cvc: '99' }), 'invalid_cvc', 'cvc'],
      [card('378282246310005', { cvc: '737' }), 'invalid_cvc', 'cvc'],
    ];
    for (const [c, code, field] of cases) {
      expect(await rawAnswer(c), code).toMatchObject({ statusCode: 402, type: 'StripeCardError', code, param: `payment_method_data[card][${field}]` });
    }
    if (new Date().getUTCMonth() > 0) {
      expect(await rawAnswer(card('4242424242424242', { expYear: thisYear, expMonth: new Date().getUTCMonth() }))).toMatchObject({ code: 'invalid_expiry_month' });
    }
  });

  it('a same-key resend with the same card is a replay; with another card it is an idempotency mismatch', async () => {
    const first = await authorize(card('4242424242424242'));
    const again = await connector.authorize(first.req);
    expect(again).toEqual(first.outcome);
    expect(await ledgerOf(first.req.attemptId)).toHaveLength(1);
    const other = await connector.authorize({ ...first.req, paymentMethod: { card: card('4242424242424242', { cvc: '123' }) } });
    expect(other).toMatchObject({ kind: 'unknown', reason: 'idempotency_mismatch' });
  });

  it('gives the numbers of docs/sandbox.md their documented outcomes', async () => {
    const table: [string, string][] = [
      ['5555555555554444', 'succeeded'], ['378282246310005', 'succeeded'], ['6011111111111117', 'succeeded'], ['5105105105105100', 'succeeded'],
      ['4111111111111111', 'test_mode_live_card'], ['5555341244441115', 'test_mode_live_card'], ['4917610000000000', 'test_mode_live_card'],
      ['4000000000009979', 'stolen_card'], ['4000000000000069', 'expired_card'], ['4000000000000127', 'incorrect_cvc'], ['4000000000000119', 'processing_error'],
      ['4000000000006975', 'card_velocity_exceeded'], ['4000000000003220', 'authentication_required'], ['4000002760003184', 'authentication_required'],
    ];
    for (const [number, expected] of table) {
      const { outcome } = await authorize(card(number, number.startsWith('37') ? { cvc: '7373' } : {}));
      expect(outcome.kind === 'declined' ? outcome.code : outcome.kind, number).toBe(expected);
    }
    const partial = await authorize(card('4000000000000515'));
    expect(partial.outcome, 'half authorized').toMatchObject({ kind: 'succeeded', amount: 500 });
  });

  it('the sandbox stores no card number and no code: objects, keys, answers, events', async () => {
    const numbers = ['4242424242424242', '5555555555554444', '4000000000000002', '4000000000003220', '4024007134364842', '4000056655665556'];
    await authorize(card('4242424242424242'));
    await sandbox.webhooksIdle();
    const text = await sandboxDatabaseText(database);
    expect(text).toMatch(/last4[^0-9]{1,12}4242/);
    // Booleans, not toContain: a failure must not print the whole database.
    for (const n of numbers) expect(text.includes(n), `${n} is stored in the sandbox database`).toBe(false);
    expect(text.includes(`"${CVC}"`), 'the code is stored').toBe(false);
    expect(/"cvc\\?":/.test(text), 'a cvc field is stored').toBe(false);
  });
});
