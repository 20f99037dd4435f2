// Account modes (issue 47, "Test and live modes"): each connector account is test or live as its own
// settings say, a written `mode` that contradicts them is a config problem naming the account, and a
// key reaches only accounts of its mode (a legacy key every account), routing saying why it skipped.

import { describe, expect, it } from 'vitest';
import { accountConfig, parseEndpoint } from '../../../src/app/connector-accounts.ts';
import { parseAdyenAccountConfig } from '../../../src/connectors/adyen/config.ts';
import { parseConfigText } from '../../../src/routing/config-loader.ts';
import { restartNeeds } from '../../../src/routing/restart-needs.ts';
import type { LoadResult } from '../../../src/routing/config-loader.ts';
import { paymentLivemode, select } from '../../../src/routing/select.ts';
import { withAccountModes } from '../../../src/routing/snapshot.ts';
import type { RoutingSnapshot } from '../../../src/routing/snapshot.ts';

const ADYEN_SECRETS = 'hmac_keys: ["0123456789ABCDEF0123456789ABCDEF"], basic_auth: { username: u, password: own-password-0123 }, report_api_key: own-report-key';

/** Accounts of every kind; `extra` is added to each account's line (e.g. a mode). */
function config(accounts: Record<string, string>, route = Object.keys(accounts)): string {
  return `
connectors:
${Object.entries(accounts).map(([n, a]) => `  ${n}: { ${a} }`).join('\n')}
routing:
  default: { priority: [${route.join(', ')}] }
`;
}

const ACCOUNTS = {
  stripe_sb: 'type: stripe, endpoint: sandbox, secret_key: sk_test_sandbox, webhook_secrets: [whsec_sandbox]',
  stripe_ext_sb: 'type: stripe, endpoint: "http://127.0.0.1:12111", secret_key: sk_test_x, webhook_secrets: [whsec_x]',
  stripe_test: 'type: stripe, endpoint: "https://api.stripe.com", secret_key: sk_test_own0123, webhook_secrets: [whsec_own0123]',
  stripe_rk_test: 'type: stripe, endpoint: "https://api.stripe.com", secret_key: rk_test_own0123, webhook_secrets: [whsec_own0123]',
  stripe_live: 'type: stripe, endpoint: "https://api.stripe.com", secret_key: sk_live_own0123, webhook_secrets: [whsec_own0123]',
  adyen_sb: 'type: adyen, endpoint: sandbox, api_key: sandbox, merchant_account: M, hmac_keys: ["AB12"], basic_auth: { username: u, password: p }',
  adyen_test: `type: adyen, endpoint: "https://checkout-test.adyen.com", environment: TEST, api_key: own-key, merchant_account: M, ${ADYEN_SECRETS}`,
  adyen_live: `type: adyen, endpoint: "https://checkout-live.adyen.com", api_key: own-key, merchant_account: M, ${ADYEN_SECRETS}`,
};

function load(text: string): LoadResult {
  return parseConfigText(text, 'test.yaml', {});
}

function snapshot(text: string): RoutingSnapshot {
  const r = load(text);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.snapshot;
}

describe('an account is test or live as its settings say', () => {
  it('a sandbox, a Stripe test-mode key and an Adyen TEST environment are test; anything else is live', () => {
    const s = snapshot(config(ACCOUNTS));
    const modes = Object.fromEntries(Object.entries(s.connectors).map(([n, c]) => [n, [c.mode, c.sandbox]]));
    expect(modes).toEqual({
      stripe_sb: ['test', true], stripe_ext_sb: ['test', true], stripe_test: ['test', false], stripe_rk_test: ['test', false],
      stripe_live: ['live', false], adyen_sb: ['test', true], adyen_test: ['test', false], adyen_live: ['live', false],
    });
  });

  it('a written mode that agrees is accepted; one that contradicts fails, naming the account and why', () => {
    expect(load(config({ a: `${ACCOUNTS.stripe_sb}, mode: test`, b: `${ACCOUNTS.stripe_live}, mode: live`, c: `${ACCOUNTS.adyen_test}, mode: test` })).ok).toBe(true);
    const r = load(config({ stripe_sb: `${ACCOUNTS.stripe_sb}, mode: live`, stripe_test: `${ACCOUNTS.stripe_test}, mode: live`, adyen_live: `${ACCOUNTS.adyen_live}, mode: test` }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      { path: 'connectors.stripe_sb.mode', message: 'account stripe_sb is a test account (its endpoint (sandbox) is a sandbox), so mode: live contradicts it' },
      { path: 'connectors.stripe_test.mode', message: 'account stripe_test is a test account (its secret key is a Stripe test-mode key (sk_test_/rk_test_)), so mode: live contradicts it' },
      { path: 'connectors.adyen_live.mode', message: 'account adyen_live is a live account (its endpoint (https://checkout-live.adyen.com) is not a sandbox and its Adyen environment is LIVE), so mode: test contradicts it' },
    ]);
  });

  it('a sandbox with a live-mode Stripe key or a LIVE Adyen environment contradicts itself', () => {
    const r = load(config({
      s: 'type: stripe, endpoint: sandbox, secret_key: sk_live_own0123, webhook_secrets: [whsec_sandbox]',
      a: 'type: adyen, endpoint: sandbox, environment: LIVE, api_key: sandbox, merchant_account: M, hmac_keys: ["AB12"], basic_auth: { username: u, password: p }',
    }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => p.path)).toEqual(['connectors.s.secret_key', 'connectors.a.environment']);
    expect(r.problems[0]!.message).toContain('account s is a sandbox');
  });

  it('an Adyen account on Adyen\'s test platform gets a TEST connector (no live prefix needed); a live one LIVE', () => {
    const r = load(config({ adyen_test: ACCOUNTS.adyen_test, adyen_live: `${ACCOUNTS.adyen_live}, live_endpoint_url_prefix: 1797a841fbb37ca7-Own` }));
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    const built = (name: 'adyen_test' | 'adyen_live') => {
      const account = r.config.connectors[name]!;
      return parseAdyenAccountConfig(name, accountConfig(r.config, account, parseEndpoint(account.endpoint), false));
    };
    expect([built('adyen_test').environment, built('adyen_test').sandbox]).toEqual(['TEST', false]);
    expect(built('adyen_live').environment).toBe('LIVE');
  });

  it('writing down an account\'s mode is a reload, not a restart (nothing the process built changes)', () => {
    const before = load(config({ stripe_live: ACCOUNTS.stripe_live }));
    const after = load(config({ stripe_live: `${ACCOUNTS.stripe_live}, mode: live` }));
    const keyChanged = load(config({ stripe_live: `${ACCOUNTS.stripe_live.replace('sk_live_own0123', 'sk_live_own4567')}, mode: live` }));
    if (!before.ok || !after.ok || !keyChanged.ok) throw new Error('configs must load');
    expect(restartNeeds(before.config, after.config)).toEqual([]);
    expect(restartNeeds(before.config, keyChanged.config).map((p) => p.message)).toEqual([expect.stringContaining('connector account stripe_live changed (secret_key)')]);
  });

  it('the schema refuses a mode or an environment that is not one of its values', () => {
    const r = load(config({ a: `${ACCOUNTS.stripe_sb}, mode: production`, b: `${ACCOUNTS.adyen_sb}, environment: test` }));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.map((p) => p.path)).toEqual(['connectors.a.mode', 'connectors.b.environment']);
  });

  it('a snapshot stored before modes gets them from its sandbox flags (as the migration does)', () => {
    const s = snapshot(config({ stripe_sb: ACCOUNTS.stripe_sb, stripe_live: ACCOUNTS.stripe_live }));
    const old = { ...s, connectors: Object.fromEntries(Object.entries(s.connectors).map(([n, { mode: _mode, ...c }]) => [n, c])) } as unknown as RoutingSnapshot;
    expect(withAccountModes(old).connectors).toEqual(s.connectors);
    expect(withAccountModes(s)).toBe(s);
  });
});

describe('a key reaches the accounts of its mode', () => {
  const s = snapshot(config({ stripe_live: ACCOUNTS.stripe_live, stripe_sb: ACCOUNTS.stripe_sb, adyen_test: ACCOUNTS.adyen_test }));
  const tokens = { stripe_live: 'pm_card_visa', stripe_sb: 'pm_card_visa', adyen_test: { stored_payment_method_id: 'x', shopper_reference: 's' } };
  const facts = { paymentId: 'pay_1', amount: 1000, currency: 'EUR', merchantId: 'mer_1', tokens };

  it('a test key skips live accounts and a live key test ones, saying so; a legacy key reaches all', () => {
    const test = select(s, { ...facts, keyMode: 'test' });
    expect(test.decision.candidates).toEqual(['stripe_sb', 'adyen_test']);
    expect(test.decision.skipped).toEqual([{ connector: 'stripe_live', reason: 'a live account: a test key reaches only test accounts' }]);
    const live = select(s, { ...facts, keyMode: 'live' });
    expect(live.decision.candidates).toEqual(['stripe_live']);
    expect(live.decision.skipped).toEqual([
      { connector: 'stripe_sb', reason: 'a test account: a live key reaches only live accounts' },
      { connector: 'adyen_test', reason: 'a test account: a live key reaches only live accounts' },
    ]);
    expect(select(s, { ...facts, keyMode: 'any' }).decision.candidates).toEqual(['stripe_live', 'stripe_sb', 'adyen_test']);
    expect(select(s, facts).decision.candidates).toEqual(['stripe_live', 'stripe_sb', 'adyen_test']);
  });

  it('no account of the key\'s mode: no candidate (the payment is recorded failed)', () => {
    const liveOnly = snapshot(config({ stripe_live: ACCOUNTS.stripe_live }));
    const r = select(liveOnly, { ...facts, keyMode: 'test' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.code).toBe('no_candidate');
  });

  it('a test card: refused for a live key; for a test key, live accounts do not count against it, test accounts that are not sandboxes do', () => {
    const card = { paymentId: 'pay_1', amount: 1000, currency: 'EUR', merchantId: 'mer_1', testCard: '4242424242424242' };
    const mixed = snapshot(config({ stripe_live: ACCOUNTS.stripe_live, stripe_sb: ACCOUNTS.stripe_sb }));
    const live = select(mixed, { ...card, keyMode: 'live' });
    expect(live.ok).toBe(false);
    if (!live.ok) expect([live.code, live.field, live.message]).toEqual(['test_card_not_allowed', 'payment_method.test_card', 'test_card is accepted only with a test key (sk_sy_test_…): this is a live key']);
    const test = select(mixed, { ...card, keyMode: 'test' });
    expect(test.ok && test.decision.candidates).toEqual(['stripe_sb']);
    // As before modes: a legacy key's test card needs every account of the route to be a sandbox.
    expect(select(mixed, { ...card, keyMode: 'any' }).ok).toBe(false);
    const testPlatform = select(s, { ...card, keyMode: 'test' });
    expect(!testPlatform.ok && testPlatform.code).toBe('test_card_not_allowed');
  });

  it('a payment is live with a live key, test with a test key; with a legacy key, live when a candidate is', () => {
    const mixed = snapshot(config({ stripe_live: ACCOUNTS.stripe_live, stripe_sb: ACCOUNTS.stripe_sb }));
    const decide = (tokensFor: Record<string, string>, keyMode?: 'test' | 'live' | 'any') => {
      const r = select(mixed, { ...facts, tokens: tokensFor, keyMode });
      return paymentLivemode(mixed, r.decision, keyMode);
    };
    expect(decide({ stripe_sb: 'pm_card_visa' }, 'test')).toBe(false);
    expect(decide({ stripe_live: 'pm_card_visa' }, 'live')).toBe(true);
    // A test key's payment stays test even when no test account could take it (and a live key's live).
    expect(decide({ stripe_live: 'pm_card_visa' }, 'test')).toBe(false);
    expect(decide({ stripe_sb: 'pm_card_visa' }, 'live')).toBe(true);
    expect(decide({ stripe_sb: 'pm_card_visa' }, 'any')).toBe(false);
    expect(decide({ stripe_sb: 'pm_card_visa', stripe_live: 'pm_card_visa' })).toBe(true);
    expect(decide({ stripe_live: 'pm_card_visa' }, 'any')).toBe(true);
    // No candidate: the accounts its route named decide.
    expect(paymentLivemode(mixed, { snapshot: mixed.version, rule: 'default', candidates: [], skipped: [{ connector: 'stripe_sb', reason: 'x' }] }, 'any')).toBe(false);
    expect(paymentLivemode(mixed, { snapshot: mixed.version, rule: 'default', candidates: [], skipped: [{ connector: 'stripe_live', reason: 'x' }] }, 'any')).toBe(true);
  });
});
