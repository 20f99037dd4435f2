// The config file's schema (zod), validated once at load. Every rejected value names its path.

import { z } from 'zod';
import { isCurrency } from '../core/money.ts';
import { parseDuration } from './duration.ts';

const duration = z.string().refine((s) => parseDuration(s) !== null, { message: 'must be a duration such as 500ms, 90s, 30m, 24h or 7d' });
const accountName = z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, 'must be lower case letters, digits and underscores, starting with a letter');
const currencyCode = z.string().refine(isCurrency, { message: 'must be a supported upper-case ISO 4217 currency code' });
const minor = z.number().int('must be an integer amount in minor units').nonnegative().refine(Number.isSafeInteger, { message: 'must be a safe integer' });

const breaker = z.strictObject({
  error_threshold_pct: z.number().int().min(1).max(100).default(50),
  volume_threshold: z.number().int().min(1).default(10),
  reset_ms: z.number().int().min(100).default(30_000),
  rolling_window_ms: z.number().int().min(1_000).default(10_000),
});

const queue = z.strictObject({
  concurrency: z.number().int().min(1).max(1_000).default(16),
  rate_per_s: z.number().int().min(1).default(200),
});

const common = {
  /**
   * test or live: derived from the account (a sandbox, a Stripe sk_test_/rk_test_ key, an Adyen TEST
   * environment are test; anything else is live) and checked against this when given
   * (src/routing/account-modes.ts). A test key reaches only test accounts, a live key only live ones.
   */
  mode: z.enum(['test', 'live']).optional(),
  endpoint: z.union([z.literal('sandbox'), z.url({ message: 'must be "sandbox" or an http(s) URL' })]).default('sandbox'),
  breaker: breaker.prefault({}),
  idempotency: z.strictObject({ retention: duration.optional() }).prefault({}),
  /** How long a customer may take at this connector's authentication page (default 15 min). */
  authentication: z.strictObject({ timeout: duration.optional() }).prefault({}),
  queue: queue.prefault({}),
  timeout_ms: z.number().int().min(100).max(120_000).default(10_000),
};

const stripeAccount = z.strictObject({
  type: z.literal('stripe'),
  ...common,
  secret_key: z.string().min(1),
  webhook_secrets: z.array(z.string().min(1)).min(1),
});

const adyenAccount = z.strictObject({
  type: z.literal('adyen'),
  ...common,
  api_key: z.string().min(1),
  merchant_account: z.string().min(1),
  /** Adyen's environment: TEST (a sandbox, or Adyen's test platform) or LIVE. Default: TEST for a sandbox, LIVE otherwise. */
  environment: z.enum(['TEST', 'LIVE']).optional(),
  hmac_keys: z.array(z.string().regex(/^[0-9A-Fa-f]+$/, 'must be a hex HMAC key')).min(1),
  basic_auth: z.strictObject({ username: z.string().min(1), password: z.string().min(1) }),
  /** Where the sandbox keeps its TLS certificate (ca.pem is trusted from here for an external sandbox). */
  certificate_dir: z.string().min(1).optional(),
  /** Live only: the account's endpoint prefix (e.g. 1797a841fbb37ca7-AdyenDemo). */
  live_endpoint_url_prefix: z.string().min(1).optional(),
  /** The account's time zone as configured at Adyen (IANA, e.g. Europe/Amsterdam): report times are local to it. Default UTC. */
  report_time_zone: z.string().min(1).optional(),
  /** Hours after its day (or after the next settlement batch) a report may be missing before it is a finding. Default 12. */
  report_missing_grace_hours: z.number().min(0).max(336).optional(),
  /**
   * The report service user's credential (Merchant Report Download role): report downloads do not
   * take the payments API key. One of the two; required for an account that is not a sandbox
   * (live-secrets.ts); a sandbox account without one downloads with api_key.
   */
  report_api_key: z.string().min(1).optional(),
  /** Multiple partial captures are enabled on this Adyen merchant account (Adyen's default: off). */
  multicapture: z.boolean().default(false),
  report_basic_auth: z.strictObject({ username: z.string().min(1), password: z.string().min(1) }).optional(),
}).refine((a) => a.report_api_key === undefined || a.report_basic_auth === undefined, { path: ['report_basic_auth'], message: 'give report_api_key or report_basic_auth, not both' });

export const connectorAccountSchema = z.discriminatedUnion('type', [stripeAccount, adyenAccount]);

const amountRange = z
  .strictObject({ gte: minor.optional(), gt: minor.optional(), lte: minor.optional(), lt: minor.optional() })
  .refine((r) => Object.keys(r).length > 0, { message: 'needs at least one of gte, gt, lte, lt' });

const when = z.strictObject({
  currency: z.array(currencyCode).min(1).optional(),
  amount: amountRange.optional(),
  country: z.array(z.string().regex(/^[A-Z]{2}$/, 'must be an upper-case ISO 3166 alpha-2 code')).min(1).optional(),
  brand: z.array(z.string().min(1)).min(1).optional(),
  merchant: z.array(z.string().min(1)).min(1).optional(),
  metadata: z.record(z.string(), z.string()).optional(),
});

const strategy = {
  priority: z.array(accountName).min(1).optional(),
  // An empty set would match payments and then have nowhere to send them (each ends failed with no attempt), as `priority: []` would.
  weighted: z
    .record(accountName, z.number().int().min(1, 'weights are positive integers'))
    .refine((w) => Object.keys(w).length > 0, { message: 'needs at least one connector account with a weight' })
    .optional(),
};

const rule = z.strictObject({ name: z.string().min(1), when: when.default({}), ...strategy });
const defaultRoute = z.strictObject(strategy);

const declineRule = z.strictObject({ class: z.enum(['hard', 'soft']), retry_elsewhere: z.boolean().default(false) });

export const configSchema = z
  .strictObject({
    connectors: z.record(accountName, connectorAccountSchema).refine((c) => Object.keys(c).length > 0, { message: 'needs at least one connector account' }),
    routing: z.strictObject({
      rules: z.array(rule).default([]),
      default: defaultRoute,
      max_attempts: z.number().int().min(1).max(10).default(3),
    }),
    declines: z.record(z.string(), z.record(z.string(), declineRule)).default({}),
  })
  .superRefine((cfg, ctx) => {
    const names = new Set(Object.keys(cfg.connectors));
    const checkStrategy = (s: { priority?: string[] | undefined; weighted?: Record<string, number> | undefined }, path: (string | number)[]) => {
      if ((s.priority === undefined) === (s.weighted === undefined)) {
        ctx.addIssue({ code: 'custom', path, message: 'needs exactly one of priority or weighted' });
        return;
      }
      const refs = s.priority ?? Object.keys(s.weighted ?? {});
      refs.forEach((name, i) => {
        if (!names.has(name)) ctx.addIssue({ code: 'custom', path: [...path, s.priority ? 'priority' : 'weighted', s.priority ? i : name], message: `unknown connector account "${name}"` });
      });
      if (s.priority !== undefined && new Set(s.priority).size !== s.priority.length) ctx.addIssue({ code: 'custom', path: [...path, 'priority'], message: 'lists a connector twice' });
    };
    const seen = new Set<string>();
    cfg.routing.rules.forEach((r, i) => {
      if (seen.has(r.name)) ctx.addIssue({ code: 'custom', path: ['routing', 'rules', i, 'name'], message: `duplicate rule name "${r.name}"` });
      seen.add(r.name);
      checkStrategy(r, ['routing', 'rules', i]);
    });
    checkStrategy(cfg.routing.default, ['routing', 'default']);
  });

export type SwitchyardConfig = z.output<typeof configSchema>;
export type ConnectorAccountConfig = z.output<typeof connectorAccountSchema>;
export type RouteRule = SwitchyardConfig['routing']['rules'][number];
export type RouteStrategy = Pick<RouteRule, 'priority' | 'weighted'>;

/** The JSON Schema editors use to validate config files (written to config/switchyard.schema.json). */
export function configJsonSchema(): unknown {
  return z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' });
}
