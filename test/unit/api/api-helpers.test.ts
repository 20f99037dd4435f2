// Small pieces of the API: the rate limiter's buckets, log redaction, problem field errors,
// the amount and currency schemas, and operation ids fixed by the idempotency key.
import { describe, expect, it } from 'vitest';
import { operationIdFor } from '../../../src/api/idempotent-post.ts';
import { redact } from '../../../src/api/log-redaction.ts';
import { ApiProblem, fieldErrors } from '../../../src/api/problems.ts';
import { TokenBuckets } from '../../../src/api/process-buckets.ts';
import { createPaymentBody, currencyCode, minorUnits } from '../../../src/api/request-schemas.ts';

describe('TokenBuckets', () => {
  it('allows a burst, then one request per 1/rate seconds, per key', () => {
    let now = 0;
    const b = new TokenBuckets({ perSecond: 2, burst: 3 }, () => now);
    expect([b.take('m'), b.take('m'), b.take('m')]).toEqual([0, 0, 0]);
    expect(b.take('m')).toBe(1);
    expect(b.take('other')).toBe(0);
    now += 500;
    expect(b.take('m')).toBe(0);
    expect(b.take('m')).toBeGreaterThan(0);
  });
});

describe('redact', () => {
  it('removes card numbers, keys, bearer tokens and URL passwords', () => {
    const line = redact('card 4242424242424242 key sk_sy_abcDEF-123_x sk_test_x whsec_y Bearer abc postgres://u:pw@h/db');
    expect(line).toBe('card [card] key [secret] [secret] [secret] Bearer [secret] postgres://u:***@h/db');
  });
});

describe('schemas', () => {
  it('minor units are non-negative safe integers, with the core messages', () => {
    expect(minorUnits.safeParse(0).success).toBe(true);
    expect(minorUnits.safeParse(Number.MAX_SAFE_INTEGER).success).toBe(true);
    for (const [v, msg] of [[-1, /negative/], [1.5, /not an integer/], [2 ** 53, /safe integer/], ['1', /string/], [Number.NaN, /NaN/]] as const) {
      const r = minorUnits.safeParse(v);
      expect(r.success).toBe(false);
      expect(r.error?.issues[0]?.message).toMatch(msg);
    }
  });

  it('currency is an upper-case ISO 4217 code the core supports', () => {
    expect(currencyCode.safeParse('EUR').success).toBe(true);
    expect(currencyCode.safeParse('JPY').success).toBe(true);
    for (const c of ['eur', 'XYZ', 'EURO', 5]) expect(currencyCode.safeParse(c).success).toBe(false);
  });

  it('unknown fields are named by their own path', () => {
    const r = createPaymentBody.safeParse({ amount: 1, currency: 'EUR', reference: 'r', capture_method: 'manual', payment_method: { type: 'card', test_card: '4242424242424242', pan: 'x' }, merchant_id: 'm' });
    expect(fieldErrors(r.error!).map((e) => e.path).sort()).toEqual(['merchant_id', 'payment_method.pan']);
  });
});

describe('ApiProblem', () => {
  it('is an RFC 9457 problem with the contract code', () => {
    expect(new ApiProblem('amount_exceeds_captured', 'too much', [{ path: 'amount', message: 'too much' }]).toProblem()).toEqual({
      type: 'https://switchyard.dev/problems/amount_exceeds_captured', title: 'Amount exceeds what remains captured', status: 422, detail: 'too much',
      code: 'amount_exceeds_captured', errors: [{ path: 'amount', message: 'too much' }],
    });
  });
});

describe('operationIdFor', () => {
  it('is fixed by merchant, key and record creation, and is a valid id', () => {
    const claim = { merchantId: 'mer_1', key: 'k1', fingerprint: 'f1', lease: new Date(), createdAt: new Date(1_700_000_000_000), paymentId: null, resumed: false };
    const a = operationIdFor('capture', claim);
    expect(a).toMatch(/^cap_[0-9a-z]{26}$/);
    expect(operationIdFor('capture', { ...claim, lease: new Date(0), resumed: true })).toBe(a);
    expect(operationIdFor('capture', { ...claim, key: 'k2' })).not.toBe(a);
    expect(operationIdFor('refund', claim)).toMatch(/^rfd_/);
  });
});
