// The rate limits as policies: the configuration's syntax, which operation bucket a request draws
// from, and the RateLimit-Policy and RateLimit fields read back with an RFC 9651 parser (as a client
// would) against draft-ietf-httpapi-ratelimit-headers: Lists of String items, `q` and `w` (window
// >= 1) on the policy, `r` and an optional `t` on the limit, all Integers.
import { parseList } from 'structured-headers';
import type { Response } from 'express';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RATE_LIMITS, limitField, operationOf, parseQuota, policyField, refusingPolicies, requestBuckets, retryAfterSeconds,
} from '../../../src/api/rate-limit-policy.ts';
import { rateLimitKeyOf } from '../../../src/api/rate-limit.ts';
import { settingsFromEnv, SettingsError } from '../../../src/cli/settings.ts';
import { hashApiKey } from '../../../src/store/merchants.ts';

const items = (field: string): { name: unknown; params: Record<string, unknown> }[] =>
  parseList(field).map((m) => {
    // The library's BareItem names BufferSource, which this project's lib (no DOM) does not declare.
    const [name, params] = m as unknown as [unknown, Map<string, unknown>];
    return { name, params: Object.fromEntries(params) };
  });

describe('parseQuota', () => {
  it('reads <requests>/<window> in whole seconds, and off', () => {
    expect(parseQuota('200/2s')).toEqual({ quota: 200, windowS: 2 });
    expect(parseQuota(' 600/1m ')).toEqual({ quota: 600, windowS: 60 });
    expect(parseQuota('10000/1d')).toEqual({ quota: 10000, windowS: 86400 });
    expect(parseQuota('off')).toBe('off');
  });

  it('refuses what the fields could not say: no window under a second or with a fraction, no zero quota', () => {
    for (const bad of ['', '200', '200/', '/2s', '0/1s', '10/500ms', '10/1500ms', '10/0s', '-1/1s', '1.5/1s', '10/2d', '10/1 s', 'on']) {
      expect(parseQuota(bad), bad).toBeNull();
    }
  });

  it('settings name the variable of a bad value, keep the defaults, and SWITCHYARD_RATE_LIMITS=off turns all off', () => {
    expect(settingsFromEnv({}).rateLimits).toEqual(DEFAULT_RATE_LIMITS);
    const s = settingsFromEnv({ SWITCHYARD_RATE_LIMIT_MERCHANT: '50/10s', SWITCHYARD_RATE_LIMIT_READS: 'off' }).rateLimits!;
    expect(s.merchant).toEqual({ quota: 50, windowS: 10 });
    expect(s.read).toBeNull();
    expect(s.create).toEqual(DEFAULT_RATE_LIMITS.create);
    expect(() => settingsFromEnv({ SWITCHYARD_RATE_LIMIT_REFUNDS: '5 per second' })).toThrow(SettingsError);
    expect(() => settingsFromEnv({ SWITCHYARD_RATE_LIMIT_REFUNDS: '5 per second' })).toThrow(/SWITCHYARD_RATE_LIMIT_REFUNDS=5 per second/);
    expect(settingsFromEnv({ SWITCHYARD_RATE_LIMITS: 'off' }).rateLimits).toBeNull();
    expect(() => settingsFromEnv({ SWITCHYARD_RATE_LIMITS: 'no' })).toThrow(/SWITCHYARD_RATE_LIMITS/);
    expect(() => settingsFromEnv({ SWITCHYARD_RATE_LIMIT_PREFIX: 'a{b}' })).toThrow(/SWITCHYARD_RATE_LIMIT_PREFIX/);
    expect(settingsFromEnv({ SWITCHYARD_RATE_LIMIT_PREFIX: 'sy_blue' }).rateLimitPrefix).toBe('sy_blue');
  });
});

describe('operationOf', () => {
  it('creates and refunds apart from other writes and reads', () => {
    expect(operationOf('POST', '/v1/payments')).toBe('create');
    expect(operationOf('POST', '/v1/payments/')).toBe('create');
    expect(operationOf('POST', '/v1/payment_methods')).toBe('create');
    expect(operationOf('POST', '/v1/payments/pay_1/refunds')).toBe('refund');
    expect(operationOf('POST', '/v1/payments/pay_1/capture')).toBe('write');
    expect(operationOf('POST', '/v1/payments/pay_1/void')).toBe('write');
    expect(operationOf('POST', '/v1/webhook_endpoints')).toBe('write');
    expect(operationOf('DELETE', '/v1/webhook_endpoints/we_1')).toBe('write');
    expect(operationOf('GET', '/v1/payments')).toBe('read');
    expect(operationOf('GET', '/v1/refunds/rfd_1')).toBe('read');
    expect(operationOf('HEAD', '/v1/payments/pay_1')).toBe('read');
  });
});

describe('the fields', () => {
  const buckets = requestBuckets(DEFAULT_RATE_LIMITS, 'h_abc', 'create');

  it('a request draws from its merchant, its key and its operation', () => {
    expect(buckets.map((b) => [b.policy, b.key])).toEqual([['merchant', 'merchant'], ['key', 'key:h_abc'], ['create', 'op:create']]);
    expect(requestBuckets({ ...DEFAULT_RATE_LIMITS, key: null, read: null }, 'h_abc', 'read').map((b) => b.policy)).toEqual(['merchant']);
  });

  it('RateLimit-Policy is a List of quota policies: a String item with q and w Integers', () => {
    const field = policyField(buckets);
    expect(field).toBe('"merchant";q=200;w=2, "key";q=150;w=2, "create";q=100;w=2');
    expect(items(field)).toEqual([
      { name: 'merchant', params: { q: 200, w: 2 } }, { name: 'key', params: { q: 150, w: 2 } }, { name: 'create', params: { q: 100, w: 2 } },
    ]);
  });

  it('RateLimit is a List of service limits: r always, t (whole seconds, rounded up) only when quota is coming back', () => {
    const states = [{ remaining: 199, waitUs: 10_000 }, { remaining: 150, waitUs: 0 }, { remaining: 0, waitUs: 1_000_001 }];
    const field = limitField(buckets, states);
    expect(field).toBe('"merchant";r=199;t=1, "key";r=150, "create";r=0;t=2');
    expect(items(field)).toEqual([
      { name: 'merchant', params: { r: 199, t: 1 } }, { name: 'key', params: { r: 150 } }, { name: 'create', params: { r: 0, t: 2 } },
    ]);
  });

  it('a refusal waits for the slowest refusing bucket, never less than 1 s, and names it', () => {
    const refused = { allowed: false, buckets, states: [{ remaining: 3, waitUs: 10_000 }, { remaining: 0, waitUs: 2_500_000 }, { remaining: 0, waitUs: 400_000 }] };
    expect(retryAfterSeconds(refused)).toBe(3);
    expect(refusingPolicies(refused).map((b) => b.policy)).toEqual(['key', 'create']);
    expect(retryAfterSeconds({ ...refused, states: [{ remaining: 1, waitUs: 0 }, { remaining: 0, waitUs: 5 }, { remaining: 1, waitUs: 0 }] })).toBe(1);
  });
});

describe('rateLimitKeyOf', () => {
  const res = (authorization: string, locals: Record<string, unknown> = {}) =>
    ({ locals, req: { get: (h: string) => (h.toLowerCase() === 'authorization' ? authorization : undefined) } }) as unknown as Response;

  it("names the key's bucket by its id once authentication sets one", () => {
    expect(rateLimitKeyOf(res('Bearer sk_sy_x', { apiKey: { id: 'key_01abc' } }))).toBe('key_01abc');
  });

  it('until then by a short hash of the stored hash: one per key, never the key or the stored hash', () => {
    const key = 'sk_sy_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';
    const ref = rateLimitKeyOf(res(`Bearer ${key}`));
    expect(ref).toMatch(/^h_[A-Za-z0-9_-]{16}$/);
    expect(rateLimitKeyOf(res(`Bearer ${key}`))).toBe(ref);
    expect(rateLimitKeyOf(res('Bearer sk_sy_another'))).not.toBe(ref);
    expect(ref).not.toContain(key.slice(6, 14));
    expect(hashApiKey(key)).not.toContain(ref.slice(2));
  });
});
