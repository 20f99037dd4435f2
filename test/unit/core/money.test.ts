import { describe, expect, it } from 'vitest';
import { addMoney, currency, CURRENCY_EXPONENTS, currencyExponent, formatMoney, money, MoneyError, rescaleMinor, subtractMoney } from '../../../src/core/index.ts';

describe('money', () => {
  it('accepts integer minor units with a known upper-case currency', () => {
    expect(money(1000, 'EUR')).toEqual({ amount: 1000, currency: 'EUR' });
    expect(money(0, 'JPY').amount).toBe(0);
  });

  it.each([
    [10.5, 'EUR', 'amount 10.5 is not an integer number of minor units'],
    [-1, 'EUR', 'amount -1 is negative'],
    [Number.MAX_SAFE_INTEGER + 1, 'EUR', 'larger than the largest safe integer'],
    [Number.NaN, 'EUR', 'NaN'],
    [Infinity, 'EUR', 'not finite'],
    ['100', 'EUR', 'amount must be a number, got string'],
    [100, 'eur', 'currency "eur" is not an upper-case ISO 4217 code'],
    [100, 'XXX', 'currency "XXX" is not supported'],
    [100, 12, 'currency must be a string'],
  ])('rejects %s %s with a reason', (amount, cur, reason) => {
    expect(() => money(amount, cur)).toThrow(MoneyError);
    expect(() => money(amount, cur)).toThrow(reason);
  });

  it('knows exponents of zero-, two- and three-decimal currencies', () => {
    expect(currencyExponent(currency('JPY'))).toBe(0);
    expect(currencyExponent(currency('EUR'))).toBe(2);
    expect(currencyExponent(currency('KWD'))).toBe(3);
  });

  it('adds and subtracts in one currency only', () => {
    expect(addMoney(money(1, 'EUR'), money(2, 'EUR')).amount).toBe(3);
    expect(() => addMoney(money(1, 'EUR'), money(2, 'USD'))).toThrow('currency mismatch');
    expect(() => subtractMoney(money(1, 'EUR'), money(2, 'EUR'))).toThrow('cannot subtract');
  });

  it('formats for people', () => {
    expect(formatMoney(money(1005, 'EUR'))).toBe('10.05 EUR');
    expect(formatMoney(money(5, 'KWD'))).toBe('0.005 KWD');
    expect(formatMoney(money(500, 'JPY'))).toBe('500 JPY');
  });

  it('holds the full ISO 4217 table, CVE and MGA among them, with exponents 0, 2, 3 or 4 only', () => {
    expect(Object.keys(CURRENCY_EXPONENTS).length).toBe(166);
    expect(CURRENCY_EXPONENTS).toMatchObject({ CVE: 2, MGA: 2, IDR: 2, CLP: 0, ISK: 0, KWD: 3, CLF: 4, UYW: 4, XCG: 2, ZWG: 2 });
    for (const e of Object.values(CURRENCY_EXPONENTS)) expect([0, 2, 3, 4]).toContain(e);
    for (const gone of ['HRK', 'ANG', 'VEF', 'ZWL', 'XAU', 'XXX']) expect(CURRENCY_EXPONENTS[gone]).toBeUndefined();
  });

  it('rescales by integer multiply and divide, refusing a remainder and an unsafe result', () => {
    expect(rescaleMinor(5000, 0, 2)).toEqual({ ok: true, amount: 500000 });
    expect(rescaleMinor(1234500, 2, 0)).toEqual({ ok: true, amount: 12345 });
    expect(rescaleMinor(1234550, 2, 0)).toEqual({ ok: false, problem: '1234550 has a remainder of 50 below the 100-unit step' });
    expect(rescaleMinor(Number.MAX_SAFE_INTEGER, 0, 2)).toMatchObject({ ok: false });
    expect(rescaleMinor(Number.MAX_SAFE_INTEGER - 7, 2, 0)).toMatchObject({ ok: false }); // 9007199254740984: a remainder of 84
    expect(rescaleMinor(9007199254740900, 2, 0)).toEqual({ ok: true, amount: 90071992547409 });
  });
});
