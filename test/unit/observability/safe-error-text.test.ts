// safeErrorText (issue 42 §3): a database error is logged by the driver's cause, never with the
// statement's parameters (drizzle's "Failed query: … params: …" carries a customer's return, a raw
// webhook body, a payment's fields).
import { DrizzleQueryError } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { safeErrorText } from '../../../src/observability/safe-error-text.ts';

function pgError(message: string, code: string): Error {
  const e = new pg.DatabaseError(message, message.length, 'error');
  e.code = code;
  return e;
}

const PARAMS = ['https://hooks.stripe.com/3d_secure?payment_intent_client_secret=pi_1_secret_abc', 'eJzVWFmTokgQ-PaRes', 'https://shop.example/back?order=77', 'secret-reference-xyz'];

describe('safeErrorText', () => {
  it("names a drizzle query error by the driver's cause and SQLSTATE, without the statement's parameters", () => {
    const err = new DrizzleQueryError('insert into "payment_transitions" ("input") values ($1, $2, $3, $4)', PARAMS, pgError('invalid byte sequence for encoding "UTF8": 0x00', '22021'));
    // What drizzle itself would have logged:
    expect(err.message).toContain('secret-reference-xyz');
    const text = safeErrorText(err);
    expect(text).toBe('database query failed: invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021)');
    for (const p of PARAMS) expect(text).not.toContain(p);
    expect(text).not.toContain('payment_transitions');
  });

  it('cuts a quoted query error out of a wrapper that repeated its message', () => {
    const inner = new DrizzleQueryError('select $1', ['secret-reference-xyz'], pgError('relation "payments" does not exist', '42P01'));
    const wrapper = new Error(`loading the payment failed: ${inner.message}`, { cause: inner });
    const text = safeErrorText(wrapper);
    expect(text).not.toContain('secret-reference-xyz');
    expect(text).toBe('loading the payment failed: a database query failed: relation "payments" does not exist (SQLSTATE 42P01)');
  });

  it('keeps names, messages and socket codes of other errors, redacted', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(safeErrorText(new TypeError('x is not a function'))).toBe('TypeError: x is not a function');
    expect(safeErrorText(refused)).toBe('connect ECONNREFUSED 127.0.0.1:5432 (ECONNREFUSED)');
    expect(safeErrorText(new AggregateError([refused], ''))).toBe('connect ECONNREFUSED 127.0.0.1:5432 (ECONNREFUSED)');
    expect(safeErrorText(new Error('card 4242 4242 4242 4242 key sk_test_abc'))).toBe('card [card] key [secret]');
    expect(safeErrorText('a string')).toBe('a string');
    expect(safeErrorText(undefined)).toBe('unknown error');
  });

  it('is one line of bounded length', () => {
    const text = safeErrorText(new Error(`first\nsecond ${'x'.repeat(5_000)}`));
    expect(text).not.toContain('\n');
    expect(text.length).toBeLessThan(400);
  });
});
