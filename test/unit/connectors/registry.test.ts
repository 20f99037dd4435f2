import { describe, expect, it } from 'vitest';
import { ConnectorConfigError } from '../../../src/connectors/contract.ts';
import type { ConnectorAccountConfig } from '../../../src/connectors/contract.ts';
import { declineRuleFor, mergeDeclineTable, UNLISTED_DECLINE_RULE } from '../../../src/connectors/decline-table.ts';
import { connectorTypes, createConnector } from '../../../src/connectors/registry.ts';
import { stripeEndpointSettings } from '../../../src/connectors/stripe/config.ts';
import { STRIPE_DEFAULT_DECLINES } from '../../../src/connectors/stripe/defaults.ts';

const stripe = (settings: Record<string, unknown>, extra: Partial<ConnectorAccountConfig> = {}): ConnectorAccountConfig => ({
  type: 'stripe', sandbox: true, settings: { secretKey: 'sk_test_abc', webhookSecrets: ['whsec_1'], ...settings }, ...extra,
});

describe('registry', () => {
  it('builds a connector per type and names the account', async () => {
    expect(connectorTypes()).toContain('stripe');
    const c = createConnector('stripe_eu', stripe({}));
    expect({ type: c.type, account: c.account, sandbox: c.sandbox }).toEqual({ type: 'stripe', account: 'stripe_eu', sandbox: true });
    await c.close();
  });

  it('refuses an unknown type and invalid settings, naming the path', () => {
    expect(() => createConnector('x', { type: 'paypal', sandbox: true, settings: {} })).toThrow(ConnectorConfigError);
    expect(() => createConnector('s', stripe({ apiHost: '127.0.0.1:12111' }))).toThrow(/connectors\.s\.settings\.apiHost/);
    expect(() => createConnector('s', stripe({ webhookSecrets: [] }))).toThrow(/webhookSecrets/);
    expect(() => createConnector('s', stripe({ bogus: 1 }))).toThrow(ConnectorConfigError);
  });

  it('refuses a sandbox account with a live key; a test-mode key on a non-sandbox account refuses test cards', async () => {
    expect(() => createConnector('s', stripe({ secretKey: 'sk_live_abc' }))).toThrow(/sandbox/);
    const c = createConnector('s', stripe({}, { sandbox: false }));
    expect(c.sandbox).toBe(false);
    await c.close();
  });

  it('maps an endpoint URL to host, port and protocol (host without port)', () => {
    expect(stripeEndpointSettings('http://127.0.0.1:12111')).toEqual({ apiHost: '127.0.0.1', apiPort: 12111, apiProtocol: 'http' });
    expect(stripeEndpointSettings('https://api.stripe.com')).toEqual({ apiHost: 'api.stripe.com', apiPort: 443, apiProtocol: 'https' });
  });

  it('lets config shorten key retention but never lengthen it past the provider', async () => {
    const c = createConnector('s', stripe({}, { keyRetentionMs: 3_600_000 }));
    expect(c.policy.keyRetentionMs).toBe(3_600_000);
    await c.close();
    expect(() => createConnector('s', stripe({}, { keyRetentionMs: 48 * 3_600_000 }))).toThrow(/keyRetentionMs/);
  });

  it('takes a per-account authentication timeout into the policy the core reads; refuses one under a second', async () => {
    const c = createConnector('s', stripe({}, { authenticationTimeoutMs: 20_000 }));
    expect(c.policy.authenticationTimeoutMs).toBe(20_000);
    expect(typeof c.authorize).toBe('function');
    await c.close();
    const plain = createConnector('s', stripe({}));
    expect(plain.policy.authenticationTimeoutMs).toBeUndefined();
    await plain.close();
    expect(() => createConnector('s', stripe({}, { authenticationTimeoutMs: 10 }))).toThrow(/authentication\.timeout/);
  });

  it('merges the config decline table over the connector defaults', async () => {
    const c = createConnector('s', stripe({}, { declineTable: { insufficient_funds: { class: 'soft', retryElsewhere: true } } }));
    expect(c.declineTable['insufficient_funds']).toEqual({ class: 'soft', retryElsewhere: true });
    expect(c.declineTable['stolen_card']).toEqual(STRIPE_DEFAULT_DECLINES['stolen_card']);
    await c.close();
  });
});

describe('decline tables', () => {
  it('config rows win, unlisted codes are soft and stay on this provider', () => {
    const t = mergeDeclineTable({ a: { class: 'hard', retryElsewhere: false } }, { a: { class: 'soft', retryElsewhere: true } });
    expect(declineRuleFor(t, 'a')).toEqual({ class: 'soft', retryElsewhere: true });
    expect(declineRuleFor(t, 'never_heard_of_it')).toBe(UNLISTED_DECLINE_RULE);
    expect(declineRuleFor(t, 'toString')).toBe(UNLISTED_DECLINE_RULE);
    expect(Object.isFrozen(t)).toBe(true);
  });
});
