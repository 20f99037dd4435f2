// Process settings from the environment, validated once; a bad value names the variable.

import { DEFAULT_IDEMPOTENCY_RETENTION_MS, DEFAULT_MAX_IN_FLIGHT, DEFAULT_TOKENS_PER_HOUR, DEFAULT_WAIT_MS } from '../api/defaults.ts';
import { databaseUrlFromEnv } from '../store/database-url.ts';
import { configPath } from '../routing/config-loader.ts';
import { parseDuration } from '../routing/duration.ts';
import { DEFAULT_ORPHAN_GRACE_MS } from '../jobs/unpublishable-rows.ts';
import { DEFAULT_RATE_LIMITS, formatQuota, parseQuota, RATE_LIMIT_VARIABLES } from '../api/rate-limit-policy.ts';
import type { Quota, RateLimitSettings } from '../api/rate-limit-policy.ts';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_PORT = 8080;
export const DEFAULT_START_TIMEOUT_MS = 60_000;

export interface GatewaySettings {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly configFile: string;
  readonly port: number;
  readonly waitMs: number;
  readonly idempotencyRetentionMs: number;
  /** SWITCHYARD_API_MAX_IN_FLIGHT: merchant API requests one process holds at once before it sheds with 503 (src/api/admission.ts). */
  readonly maxInFlight: number;
  /** SWITCHYARD_TOKENS_PER_HOUR: payment methods one merchant may store per clock hour (src/store/payment-method-quota.ts). */
  readonly tokensPerHour: number;
  /** How long `start` waits out an unreachable or blipping PostgreSQL or Redis before giving up. */
  readonly startTimeoutMs: number;
  /** SWITCHYARD_ORPHAN_GRACE: how long a connector account may be absent from the config before its outbox rows are dead-lettered. */
  readonly orphanGraceMs: number;
  /**
   * SWITCHYARD_JOB_ATTEMPTS, SWITCHYARD_JOB_BACKOFF: a job's infrastructure tries and the first pause
   * between them (doubling); null: the defaults (8 tries from 500 ms, about a minute).
   */
  readonly jobRetries: { readonly attempts: number | null; readonly backoffMs: number | null };
  /** SWITCHYARD_RELAY_REPUBLISH: a row published this long ago and still pending has its job looked at (null: the default, 30 s). */
  readonly relayRepublishMs: number | null;
  /** SWITCHYARD_METRICS_PORT: /metrics on its own listener (null: on the main port); SWITCHYARD_METRICS_TOKEN: a bearer token it requires (null: none). */
  readonly metrics: { readonly port: number | null; readonly token: string | null };
  /**
   * The merchant API's rate limits, shared by every API process (SWITCHYARD_RATE_LIMIT_MERCHANT, _KEY,
   * _CREATES, _REFUNDS, _WRITES, _READS, _PUBLISHABLE_KEY, _CLIENT: `<requests>/<window>` or `off`);
   * null: SWITCHYARD_RATE_LIMITS=off turns them all off.
   */
  readonly rateLimits: RateLimitSettings | null;
  /** SWITCHYARD_RATE_LIMIT_PREFIX: the Redis key prefix of the limits' buckets (default `sy`, the gateway's). */
  readonly rateLimitPrefix: string | null;
}

export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}

function duration(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const ms = parseDuration(v);
  if (ms === null) throw new SettingsError(`${name}=${v} is not a duration like 10s, 30m or 7d`);
  return ms;
}

/** A whole number >= 1 from the environment; a bad value names the variable. */
export function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v) || Number(v) < 1 || !Number.isSafeInteger(Number(v))) throw new SettingsError(`${name}=${v} is not a whole number >= 1`);
  return Number(v);
}

export function parsePort(text: string, what: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 65535) throw new SettingsError(`${what} ${text} is not a port number (0-65535)`);
  return n;
}

function metricsSettings(env: NodeJS.ProcessEnv): GatewaySettings['metrics'] {
  const port = env['SWITCHYARD_METRICS_PORT'];
  const token = env['SWITCHYARD_METRICS_TOKEN'];
  if (token !== undefined && token !== '' && (token.length < 24 || /\s/.test(token))) throw new SettingsError('SWITCHYARD_METRICS_TOKEN must be at least 24 characters without spaces (try: openssl rand -hex 24)');
  return { port: port === undefined || port === '' ? null : parsePort(port, 'SWITCHYARD_METRICS_PORT'), token: token === undefined || token === '' ? null : token };
}

function rateLimitSettings(env: NodeJS.ProcessEnv): RateLimitSettings | null {
  const all = env['SWITCHYARD_RATE_LIMITS'];
  if (all !== undefined && all !== '' && all !== 'on' && all !== 'off') throw new SettingsError(`SWITCHYARD_RATE_LIMITS=${all} is not on or off`);
  if (all === 'off') return null;
  const out: Record<string, Quota | null> = {};
  for (const [name, variable] of Object.entries(RATE_LIMIT_VARIABLES) as [keyof RateLimitSettings, string][]) {
    const v = env[variable];
    if (v === undefined || v === '') {
      out[name] = DEFAULT_RATE_LIMITS[name];
      continue;
    }
    const q = parseQuota(v);
    if (q === null) throw new SettingsError(`${variable}=${v} is not <requests>/<window> (whole seconds, e.g. ${formatQuota(DEFAULT_RATE_LIMITS[name])} or 600/1m) or off`);
    out[name] = q === 'off' ? null : q;
  }
  return out as unknown as RateLimitSettings;
}

function rateLimitPrefix(env: NodeJS.ProcessEnv): string | null {
  const v = env['SWITCHYARD_RATE_LIMIT_PREFIX'];
  if (v === undefined || v === '') return null;
  // Braces would move the Redis Cluster hash tag off the merchant's id.
  if (!/^[A-Za-z0-9_:.-]{1,64}$/.test(v)) throw new SettingsError(`SWITCHYARD_RATE_LIMIT_PREFIX=${v} must be 1-64 letters, digits or _:.-`);
  return v;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): GatewaySettings {
  return {
    databaseUrl: databaseUrlFromEnv(env),
    redisUrl: env['REDIS_URL'] !== undefined && env['REDIS_URL'] !== '' ? env['REDIS_URL'] : DEFAULT_REDIS_URL,
    configFile: configPath(env),
    port: env['PORT'] === undefined || env['PORT'] === '' ? DEFAULT_PORT : parsePort(env['PORT'], 'PORT'),
    waitMs: duration(env, 'SWITCHYARD_API_WAIT', DEFAULT_WAIT_MS),
    idempotencyRetentionMs: duration(env, 'SWITCHYARD_IDEMPOTENCY_RETENTION', DEFAULT_IDEMPOTENCY_RETENTION_MS),
    maxInFlight: positiveInteger(env, 'SWITCHYARD_API_MAX_IN_FLIGHT', DEFAULT_MAX_IN_FLIGHT),
    tokensPerHour: positiveInteger(env, 'SWITCHYARD_TOKENS_PER_HOUR', DEFAULT_TOKENS_PER_HOUR),
    startTimeoutMs: duration(env, 'SWITCHYARD_START_TIMEOUT', DEFAULT_START_TIMEOUT_MS),
    orphanGraceMs: duration(env, 'SWITCHYARD_ORPHAN_GRACE', DEFAULT_ORPHAN_GRACE_MS),
    jobRetries: {
      attempts: env['SWITCHYARD_JOB_ATTEMPTS'] === undefined || env['SWITCHYARD_JOB_ATTEMPTS'] === '' ? null : positiveInteger(env, 'SWITCHYARD_JOB_ATTEMPTS', 8),
      backoffMs: env['SWITCHYARD_JOB_BACKOFF'] === undefined || env['SWITCHYARD_JOB_BACKOFF'] === '' ? null : duration(env, 'SWITCHYARD_JOB_BACKOFF', 500),
    },
    relayRepublishMs: env['SWITCHYARD_RELAY_REPUBLISH'] === undefined || env['SWITCHYARD_RELAY_REPUBLISH'] === '' ? null : duration(env, 'SWITCHYARD_RELAY_REPUBLISH', 30_000),
    metrics: metricsSettings(env),
    rateLimits: rateLimitSettings(env),
    rateLimitPrefix: rateLimitPrefix(env),
  };
}
