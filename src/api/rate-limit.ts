// The merchant API's rate limits, shared by every API process (src/api/shared-rate-limit.ts keeps the
// buckets in Redis). Mounted on /v1 after the secret key's authentication and before the body is
// read: a refused request costs one Redis call and writes nothing (no idempotency record, no payment).
// Every answer from here on carries RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-
// headers); a refusal is 429 `rate_limited` with Retry-After. When Redis does not answer in time the
// request passes (fail open) with the policy but no RateLimit field: a limiter outage must not stop
// payments.

import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { hashApiKey } from '../store/merchants.ts';
import { merchantIdOf } from './http.ts';
import { ApiProblem } from './problems.ts';
import { limitField, operationOf, policyField, refusingPolicies, requestBuckets, retryAfterSeconds } from './rate-limit-policy.ts';
import { POLICY_NAMES } from './rate-limit-policy.ts';
import type { Bucket, LimitDecision, Quota, RateLimitSettings } from './rate-limit-policy.ts';
import type { SharedRateLimiter } from './shared-rate-limit.ts';

export interface RateLimiting {
  readonly limiter: SharedRateLimiter;
  readonly settings: RateLimitSettings;
}

/** One bucket on the shared limiter: a client address's, or a publishable key's. */
export interface BucketLimit {
  readonly limiter: SharedRateLimiter;
  readonly quota: Quota;
}

/**
 * What names the authenticating key's bucket (secret or publishable). The key's id once
 * authentication sets one (`res.locals.apiKey.id`, `key_…`); until then a short hash of the stored key
 * hash, so neither the key nor the hash the database keeps is ever written to Redis.
 */
export function rateLimitKeyOf(res: Response): string {
  const keyId: unknown = (res.locals['apiKey'] as { id?: unknown } | undefined)?.id;
  if (typeof keyId === 'string' && keyId !== '') return keyId;
  const match = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec((res.req.get('authorization') ?? '').trim());
  if (match === null) throw new Error('rate limit reached without an authenticated key');
  return `h_${createHash('sha256').update(hashApiKey(match[1]!)).digest('base64url').slice(0, 16)}`;
}

/**
 * The fields of an answer: the policy always, the current limit when the buckets were read. Appended:
 * a request limited twice (POST /v1/tokens: its address, then its key) sends each List as a field
 * line of its own, which RFC 9651 joins into one List.
 */
export function setRateLimitFields(res: Response, buckets: readonly Bucket[], decision: LimitDecision | null): void {
  if (buckets.length === 0) return;
  res.append('RateLimit-Policy', policyField(buckets));
  if (decision !== null) res.append('RateLimit', limitField(decision.buckets, decision.states));
}

/** The 429 of a refused decision: which policy, its quota, and when to come back. */
export function rateLimitedProblem(decision: LimitDecision, what: string): ApiProblem {
  const retryAfter = retryAfterSeconds(decision);
  const refusing = refusingPolicies(decision);
  const named = refusing.map((b) => `"${b.policy}" (${b.quota.quota} requests per ${b.quota.windowS} s)`).join(' and ');
  return new ApiProblem('rate_limited', `over the ${named || 'rate'} limit ${what}; retry in ${retryAfter} s`, undefined, retryAfter);
}

export function rateLimitRequests(rl: RateLimiting) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const merchantId = merchantIdOf(res);
    const buckets = requestBuckets(rl.settings, rateLimitKeyOf(res), operationOf(req.method, req.baseUrl + req.path));
    const decision = await rl.limiter.take(merchantId, buckets);
    setRateLimitFields(res, buckets, decision);
    if (decision !== null && !decision.allowed) throw rateLimitedProblem(decision, 'of this merchant');
    next();
  };
}

/** Takes a unit of the client address's bucket (under its own hash tag) and sets the fields; null: Redis did not answer. */
export async function takeClientAddress(limit: BucketLimit, address: string, res: Response): Promise<LimitDecision | null> {
  const buckets: Bucket[] = [{ policy: POLICY_NAMES.client, quota: limit.quota, key: 'client' }];
  const decision = await limit.limiter.take(`client:${address}`, buckets);
  setRateLimitFields(res, buckets, decision);
  return decision;
}

/** Takes a unit of the publishable key's bucket (under its merchant's hash tag) and sets the fields; null: Redis did not answer. */
export async function takePublishableKey(limit: BucketLimit, merchantId: string, res: Response): Promise<LimitDecision | null> {
  const buckets: Bucket[] = [{ policy: POLICY_NAMES.publishableKey, quota: limit.quota, key: `pk:${rateLimitKeyOf(res)}` }];
  const decision = await limit.limiter.take(merchantId, buckets);
  setRateLimitFields(res, buckets, decision);
  return decision;
}
