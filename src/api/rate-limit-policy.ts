// The merchant API's rate limits as policies (pure: no Redis here). Every /v1 request with a secret
// key draws one unit from three buckets at once: its merchant's, its key's and its operation's
// (creates, refunds, other writes and reads each have their own, so a burst of reads cannot use up
// what creates and refunds need). POST /v1/tokens draws from its publishable key's bucket and, before
// the key is even looked up, from its client address's. src/api/shared-rate-limit.ts keeps the
// buckets in Redis (GCRA); this file says which buckets a request takes and writes the answer's
// RateLimit-Policy and RateLimit fields as draft-ietf-httpapi-ratelimit-headers defines them.

import { serializeList } from 'structured-headers';
import type { Parameters } from 'structured-headers';
import { parseDuration } from '../routing/duration.ts';

/** `quota` requests per `windowS` seconds: a bucket of `quota` units refilled evenly over the window. */
export interface Quota {
  readonly quota: number;
  readonly windowS: number;
}

export type OperationClass = 'create' | 'refund' | 'write' | 'read';

/** Every limit; null turns that one off. */
export interface RateLimitSettings {
  readonly merchant: Quota | null;
  readonly key: Quota | null;
  readonly create: Quota | null;
  readonly refund: Quota | null;
  readonly write: Quota | null;
  readonly read: Quota | null;
  /** POST /v1/tokens: per publishable key. */
  readonly publishableKey: Quota | null;
  /** POST /v1/tokens (and its preflight) and the hosted card form: per client address. */
  readonly client: Quota | null;
}

/**
 * Fleet-wide (every API process draws from the same buckets). The merchant's equals what one API
 * process allowed before (100/s, bursts of 200); one key may use three quarters of it, so a runaway
 * key leaves the merchant's other keys room; creates and refunds (provider calls, ledger writes) are
 * held tighter than reads. The tokens' are the publishable key's and client address's of issue 44.
 */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  merchant: { quota: 200, windowS: 2 },
  key: { quota: 150, windowS: 2 },
  create: { quota: 100, windowS: 2 },
  refund: { quota: 40, windowS: 2 },
  write: { quota: 100, windowS: 2 },
  read: { quota: 150, windowS: 2 },
  publishableKey: { quota: 100, windowS: 5 },
  client: { quota: 30, windowS: 60 },
};

/** The environment variable of each limit (docs/operations.md). */
export const RATE_LIMIT_VARIABLES: Readonly<Record<keyof RateLimitSettings, string>> = {
  merchant: 'SWITCHYARD_RATE_LIMIT_MERCHANT',
  key: 'SWITCHYARD_RATE_LIMIT_KEY',
  create: 'SWITCHYARD_RATE_LIMIT_CREATES',
  refund: 'SWITCHYARD_RATE_LIMIT_REFUNDS',
  write: 'SWITCHYARD_RATE_LIMIT_WRITES',
  read: 'SWITCHYARD_RATE_LIMIT_READS',
  publishableKey: 'SWITCHYARD_RATE_LIMIT_PUBLISHABLE_KEY',
  client: 'SWITCHYARD_RATE_LIMIT_CLIENT',
};

/** The policy names the fields carry (one per bucket a request draws from). */
export const POLICY_NAMES: Readonly<Record<keyof RateLimitSettings, string>> = {
  merchant: 'merchant', key: 'key', create: 'create', refund: 'refund', write: 'write', read: 'read',
  publishableKey: 'publishable_key', client: 'client',
};

const MAX_QUOTA = 1_000_000;
const MAX_WINDOW_S = 86_400;

/**
 * `<requests>/<window>` ("200/2s", "1000/1m") or "off"; null when the text is neither. The window is
 * whole seconds: the draft's `w` has no sub-second precision.
 */
export function parseQuota(text: string): Quota | 'off' | null {
  const t = text.trim();
  if (t === 'off') return 'off';
  const m = /^(\d{1,7})\/(\S+)$/.exec(t);
  if (m === null) return null;
  const quota = Number(m[1]);
  const ms = parseDuration(m[2]!);
  if (quota < 1 || quota > MAX_QUOTA || ms === null || ms < 1000 || ms % 1000 !== 0 || ms / 1000 > MAX_WINDOW_S) return null;
  return { quota, windowS: ms / 1000 };
}

export function formatQuota(q: Quota | null): string {
  return q === null ? 'off' : `${q.quota}/${q.windowS}s`;
}

/**
 * Which operation bucket a secret-key request draws from. Creates are the two routes that make a new
 * payment or store a card; refunds the refund route; every other POST/DELETE a write; the rest reads.
 */
export function operationOf(method: string, path: string): OperationClass {
  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD' || m === 'OPTIONS') return 'read';
  const p = path.replace(/\/+$/, '');
  if (m === 'POST' && (p === '/v1/payments' || p === '/v1/payment_methods')) return 'create';
  if (m === 'POST' && /^\/v1\/payments\/[^/]+\/refunds$/.test(p)) return 'refund';
  return 'write';
}

/** One bucket of a request: its Redis key suffix (under the merchant's hash tag) and its policy. */
export interface Bucket {
  readonly policy: string;
  readonly quota: Quota;
  /** The bucket's own part of its Redis key (the caller adds the prefix and the hash tag). */
  readonly key: string;
}

/** The buckets a secret-key request draws from, in the order its fields list them. */
export function requestBuckets(s: RateLimitSettings, keyRef: string, operation: OperationClass): Bucket[] {
  const out: Bucket[] = [];
  if (s.merchant !== null) out.push({ policy: POLICY_NAMES.merchant, quota: s.merchant, key: 'merchant' });
  if (s.key !== null) out.push({ policy: POLICY_NAMES.key, quota: s.key, key: `key:${keyRef}` });
  const op = s[operation];
  if (op !== null) out.push({ policy: POLICY_NAMES[operation], quota: op, key: `op:${operation}` });
  return out;
}

/** What the script says of one bucket: the units left, and how long until one more is free (0: full). */
export interface BucketState {
  readonly remaining: number;
  /** Microseconds until the bucket holds one more unit; for the bucket that refused, until the request would fit. */
  readonly waitUs: number;
}

export interface LimitDecision {
  readonly allowed: boolean;
  readonly buckets: readonly Bucket[];
  readonly states: readonly BucketState[];
}

/** Whole seconds, rounded up: the draft's `t` and Retry-After are delay-seconds. */
export function waitSeconds(us: number): number {
  return Math.ceil(us / 1_000_000);
}

/** RateLimit-Policy: `"merchant";q=200;w=2, "key";q=150;w=2, "create";q=100;w=2`. */
export function policyField(buckets: readonly Bucket[]): string {
  return serializeList(buckets.map((b) => [b.policy, new Map([['q', b.quota.quota], ['w', b.quota.windowS]]) as Parameters]));
}

/**
 * RateLimit: `"merchant";r=187;t=1, …`: the units left after this request, and (when the bucket is
 * not full) the seconds until another unit is free. A full bucket has no `t` (optional in the draft:
 * no quota is waiting to come back).
 */
export function limitField(buckets: readonly Bucket[], states: readonly BucketState[]): string {
  return serializeList(buckets.map((b, i) => {
    const s = states[i]!;
    const params: Parameters = new Map([['r', s.remaining]]);
    if (s.waitUs > 0) params.set('t', waitSeconds(s.waitUs));
    return [b.policy, params];
  }));
}

/** The refused request's wait: the longest of the buckets that refused it (whole seconds, at least 1). */
export function retryAfterSeconds(d: LimitDecision): number {
  let us = 0;
  d.states.forEach((s, i) => {
    if (s.remaining === 0 && d.buckets[i] !== undefined) us = Math.max(us, s.waitUs);
  });
  return Math.max(1, waitSeconds(us));
}

/** The policies that refused: the buckets with nothing left. */
export function refusingPolicies(d: LimitDecision): Bucket[] {
  return d.buckets.filter((_b, i) => d.states[i]!.remaining === 0);
}
