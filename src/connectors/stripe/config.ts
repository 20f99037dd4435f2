// The Stripe account settings from the routing config, validated once at load. Every rejected
// value names its path and the reason.

import { z } from 'zod';
import type { ConnectorAccountConfig } from '../contract.ts';
import { ConnectorConfigError } from '../contract.ts';
import { STRIPE_POLICY } from './defaults.ts';

const StripeSettings = z.strictObject({
  secretKey: z.string().regex(/^(sk|rk)_(test|live)_[A-Za-z0-9_]+$/, 'must be a Stripe secret or restricted key'),
  /** Every secret that may sign webhooks right now; two during a rotation. */
  webhookSecrets: z.array(z.string().min(1)).min(1),
  /** Host name only: a port inside the host makes stripe-node look up "host:port" in DNS. */
  apiHost: z.string().regex(/^[^:/\s]+$/, 'host name only, no port or scheme').optional(),
  apiPort: z.number().int().min(1).max(65535).optional(),
  apiProtocol: z.enum(['http', 'https']).optional(),
  /** Per-attempt socket timeout handed to the SDK. */
  timeoutMs: z.number().int().min(100).max(120_000).default(20_000),
  keepAlive: z.boolean().default(true),
  /** Page size of the PaymentIntent list that finds an authorization by attempt id (lookup.ts); small only in tests, to page. */
  lookupPageSize: z.number().int().min(1).max(100).default(100),
});

export type StripeSettings = z.infer<typeof StripeSettings>;

export interface StripeConnectorOptions extends StripeSettings {
  readonly sandbox: boolean;
  readonly keyRetentionMs: number;
}

export function parseStripeAccountConfig(account: string, config: ConnectorAccountConfig): StripeConnectorOptions {
  const parsed = StripeSettings.safeParse(config.settings);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `connectors.${account}.settings.${i.path.join('.')}: ${i.message}`);
    throw new ConnectorConfigError(problems.join('; '));
  }
  const settings = parsed.data;
  // A sandbox account must hold a test-mode key. The converse is allowed: a Stripe test-mode account
  // that the routing config does not call a sandbox simply refuses the gateway's test cards.
  if (config.sandbox && !/^(sk|rk)_test_/.test(settings.secretKey)) {
    throw new ConnectorConfigError(`connectors.${account}.sandbox: a sandbox account needs a test-mode key (sk_test_/rk_test_)`);
  }
  const keyRetentionMs = config.keyRetentionMs ?? STRIPE_POLICY.keyRetentionMs;
  if (keyRetentionMs <= 0 || keyRetentionMs > STRIPE_POLICY.keyRetentionMs) {
    throw new ConnectorConfigError(`connectors.${account}.keyRetentionMs: must be in (0, ${STRIPE_POLICY.keyRetentionMs}], Stripe may prune keys after 24 h`);
  }
  return { ...settings, sandbox: config.sandbox, keyRetentionMs };
}

/** Maps an endpoint URL from the routing config (http://127.0.0.1:12111) to the SDK's host/port/protocol settings. */
export function stripeEndpointSettings(url: string): Pick<StripeSettings, 'apiHost' | 'apiPort' | 'apiProtocol'> {
  const u = new URL(url);
  const protocol = u.protocol === 'http:' ? 'http' : 'https';
  return { apiHost: u.hostname, apiPort: u.port === '' ? (protocol === 'http' ? 80 : 443) : Number(u.port), apiProtocol: protocol };
}
