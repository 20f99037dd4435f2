// The Adyen account settings from the routing config, validated once at load. Every rejected value
// names its path and the reason.

import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ConnectorAccountConfig } from '../contract.ts';
import { ConnectorConfigError } from '../contract.ts';
import { ADYEN_MAX_KEY_RETENTION_MS, ADYEN_POLICY } from './defaults.ts';

const hexKey = z.string().regex(/^([0-9A-Fa-f]{2})+$/, 'must be a hex HMAC key');

const AdyenSettings = z.strictObject({
  apiKey: z.string().min(1),
  merchantAccount: z.string().min(1),
  /** Every HMAC key that may sign notifications right now; two during a rotation. */
  hmacKeys: z.array(hexKey).min(1),
  /** HTTP basic auth Adyen sends with notifications (Customer Area > Webhooks). */
  webhookUsername: z.string().min(1),
  webhookPassword: z.string().min(1),
  environment: z.enum(['TEST', 'LIVE']),
  /** LIVE only: the account's prefix, e.g. 1797a841fbb37ca7-AdyenDemo. */
  liveEndpointUrlPrefix: z.string().min(1).optional(),
  /** Replaces the library's scheme://host of every Checkout call (the sandbox, a proxy); https only. */
  baseUrl: z.string().regex(/^https:\/\/[^/\s]+$/, 'an https origin without a path, e.g. https://127.0.0.1:8443').optional(),
  /** PEM of a CA to trust besides the system's (the sandbox's ca.pem); or a path to it. */
  caPem: z.string().startsWith('-----BEGIN CERTIFICATE-----').optional(),
  caFile: z.string().min(1).optional(),
  /** Socket idle timeout handed to the library (connectionTimeoutMillis). */
  timeoutMs: z.number().int().min(100).max(120_000).default(20_000),
  /**
   * The report service user's credential (Merchant Report Download role). Absent (a sandbox account
   * only: routing/live-secrets.ts requires one for any other): downloads use apiKey.
   */
  reportApiKey: z.string().min(1).optional(),
  reportBasicAuth: z.strictObject({ username: z.string().min(1), password: z.string().min(1) }).optional(),
  /** Origin of the report download (settlement details); defaults to Adyen's Customer Area host. */
  reportBaseUrl: z.string().regex(/^https:\/\/[^/\s]+$/, 'an https origin without a path').optional(),
  /** The account's time zone (Customer Area > Account > time zone): report times are local to it; IANA name. */
  reportTimeZone: z.string().min(1).refine((zone) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      return true;
    } catch {
      return false;
    }
  }, 'must be an IANA time zone, e.g. Europe/Amsterdam').default('UTC'),
  /** A daily payments accounting report not announced this many hours after its day (or a settlement batch gap this old) is a missing-report finding. */
  reportMissingGraceHours: z.number().min(0).max(24 * 14).default(12),
  /** How long after the fact a settlement row is in the report. */
  reportDelayMs: z.number().int().min(0).default(15 * 60_000),
  /**
   * Reconciliation reads a payment's whole history: when a payment has rows in the window but its
   * authorisation is not among them (a refund, a chargeback, a later capture), the reports of up to
   * this many days before the window are read for its earlier rows.
   */
  reportHistoryDays: z.number().int().min(0).max(400).default(35),
  /**
   * Multiple partial captures are enabled on the merchant account (Adyen's default: off). With them a
   * capture leaves the rest authorized and the gateway cancels it after a final partial capture;
   * without them a partial capture cancels the rest, so final: false is refused before any call.
   */
  multicapture: z.boolean().default(false),
  /** PaymentRequest.returnUrl is required even for card payments that never redirect. */
  returnUrl: z.string().url().default('https://switchyard.invalid/adyen/return'),
});

export type AdyenSettings = z.infer<typeof AdyenSettings>;

export interface AdyenConnectorOptions extends Omit<AdyenSettings, 'caFile'> {
  readonly sandbox: boolean;
  readonly keyRetentionMs: number;
}

export function parseAdyenAccountConfig(account: string, config: ConnectorAccountConfig): AdyenConnectorOptions {
  const parsed = AdyenSettings.safeParse(config.settings);
  const at = (path: string): string => `connectors.${account}.${path}`;
  if (!parsed.success) {
    throw new ConnectorConfigError(parsed.error.issues.map((i) => `${at(`settings.${i.path.join('.')}`)}: ${i.message}`).join('; '));
  }
  const { caFile, ...settings } = parsed.data;
  // A sandbox is a test account; an account on Adyen's own platform may be on its TEST environment
  // (a test-mode account, src/routing/account-modes.ts) or on LIVE.
  if (config.sandbox && settings.environment !== 'TEST') {
    throw new ConnectorConfigError(`${at('sandbox')}: a sandbox account needs environment TEST`);
  }
  if (settings.environment === 'LIVE' && settings.liveEndpointUrlPrefix === undefined && settings.baseUrl === undefined) {
    throw new ConnectorConfigError(`${at('settings.liveEndpointUrlPrefix')}: required for environment LIVE`);
  }
  if (caFile !== undefined && settings.caPem !== undefined) throw new ConnectorConfigError(`${at('settings.caFile')}: give caPem or caFile, not both`);
  let caPem = settings.caPem;
  if (caFile !== undefined) {
    try {
      caPem = readFileSync(caFile, 'utf8');
    } catch (err) {
      throw new ConnectorConfigError(`${at('settings.caFile')}: cannot read ${caFile}: ${(err as Error).message}`);
    }
  }
  const keyRetentionMs = config.keyRetentionMs ?? ADYEN_POLICY.keyRetentionMs;
  if (keyRetentionMs <= 0 || keyRetentionMs > ADYEN_MAX_KEY_RETENTION_MS) {
    throw new ConnectorConfigError(`${at('keyRetentionMs')}: must be in (0, ${ADYEN_MAX_KEY_RETENTION_MS}], Adyen documents at least 31 days at most`);
  }
  return { ...settings, ...(caPem !== undefined && { caPem }), sandbox: config.sandbox, keyRetentionMs };
}
