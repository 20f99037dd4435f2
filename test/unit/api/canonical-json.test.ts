// RFC 8785 (JCS) with the RFC's own examples.
import { describe, expect, it } from 'vitest';
import { canonicalJson, NotCanonicalizableError } from '../../../src/api/canonical-json.ts';
import { requestFingerprint } from '../../../src/api/idempotent-post.ts';

describe('canonicalJson (RFC 8785)', () => {
  it('matches the RFC 8785 §3.2.2 example', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    ) as unknown;
    expect(canonicalJson(input)).toBe('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it('sorts members by UTF-16 code units (RFC 8785 §3.2.3)', () => {
    const input = JSON.parse('{"\\u20ac":1,"\\r":2,"\\ufb33":3,"1":4,"\\ud83d\\ude00":5,"\\u0080":6,"\\u00f6":7}') as Record<string, number>;
    // Read the order off the text: a JS object would list the integer-like key "1" first.
    expect(canonicalJson(input)).toBe('{"\\r":2,"1":4,"\u0080":6,"\u00f6":7,"\u20ac":1,"\ud83d\ude00":5,"\ufb33":3}');
  });

  it('sorts nested objects, keeps array order, prints -0 as 0 and omits whitespace', () => {
    expect(canonicalJson({ b: [3, { z: 1, a: -0 }], a: 'x' })).toBe('{"a":"x","b":[3,{"a":0,"z":1}]}');
  });

  it('refuses what is not I-JSON', () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(NotCanonicalizableError);
    expect(() => canonicalJson({ a: Infinity })).toThrow(NotCanonicalizableError);
    expect(() => canonicalJson({ a: '\ud800' })).toThrow(NotCanonicalizableError);
    expect(() => canonicalJson({ a: 1n })).toThrow(NotCanonicalizableError);
  });
});

describe('requestFingerprint', () => {
  it('is the same for reordered bodies and differs by method, path and body', () => {
    const base = requestFingerprint('POST', '/v1/payments', { amount: 1, currency: 'EUR' });
    expect(requestFingerprint('post', '/v1/payments', { currency: 'EUR', amount: 1 })).toBe(base);
    expect(requestFingerprint('POST', '/v1/payments/x/void', { amount: 1, currency: 'EUR' })).not.toBe(base);
    expect(requestFingerprint('PUT', '/v1/payments', { amount: 1, currency: 'EUR' })).not.toBe(base);
    expect(requestFingerprint('POST', '/v1/payments', { amount: 2, currency: 'EUR' })).not.toBe(base);
  });
});
