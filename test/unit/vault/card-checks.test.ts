// Card checks before anything is stored: card-validator decides number and code; the expiry is
// compared with the caller's clock. Each refusal names its field.

import { describe, expect, it } from 'vitest';
import { checkCard } from '../../../src/vault/card-checks.ts';

const now = new Date('2026-05-15T12:00:00Z');
const visa = { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' };

describe('checkCard', () => {
  it('accepts a good card: brand, last 4, digits only', () => {
    const r = checkCard({ ...visa, number: '4242 4242-4242 4242', holder_name: 'Ada Lovelace' }, now);
    expect(r).toEqual({ ok: true, card: { number: '4242424242424242', brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, cvc: '123', holderName: 'Ada Lovelace' } });
  });

  it('names the brand by card-validator, as providers spell it', () => {
    const amex = checkCard({ number: '378282246310005', exp_month: 1, exp_year: 2030, cvc: '1234' }, now);
    expect(amex.ok && amex.card.brand).toBe('amex');
    const mc = checkCard({ number: '5555555555554444', exp_month: 1, exp_year: 2030 }, now);
    expect(mc.ok && mc.card).toMatchObject({ brand: 'mastercard', cvc: null });
  });

  it.each([
    ['a failed check digit', { ...visa, number: '4242424242424241' }, 'card.number'],
    ['letters', { ...visa, number: '4242x42424242424' }, 'card.number'],
    ['too short', { ...visa, number: '424242' }, 'card.number'],
    ['month 13', { ...visa, exp_month: 13 }, 'card.exp_month'],
    ['a two-digit year', { ...visa, exp_year: 30 }, 'card.exp_year'],
    ['last year', { ...visa, exp_year: 2025 }, 'card.exp_year'],
    ['last month', { ...visa, exp_month: 4, exp_year: 2026 }, 'card.exp_month'],
    ['a far future', { ...visa, exp_year: 2050 }, 'card.exp_year'],
    ['a 4-digit code on a Visa', { ...visa, cvc: '1234' }, 'card.cvc'],
    ['a 3-digit code on an Amex', { number: '378282246310005', exp_month: 1, exp_year: 2030, cvc: '123' }, 'card.cvc'],
    ['a code with letters', { ...visa, cvc: '12a' }, 'card.cvc'],
    ['a card number as the name', { ...visa, holder_name: 'pay 4242 4242 4242 4242' }, 'card.holder_name'],
    ['an empty name', { ...visa, holder_name: '' }, 'card.holder_name'],
  ])('refuses %s on its field', (_label, input, field) => {
    const r = checkCard(input, now);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.field).toBe(field);
    expect(r.reason).not.toContain(input.number);
  });

  it('takes a card through the last day of its expiry month', () => {
    expect(checkCard({ ...visa, exp_month: 5, exp_year: 2026 }, now).ok).toBe(true);
    expect(checkCard({ ...visa, exp_month: 5, exp_year: 2026 }, new Date('2026-06-01T00:00:00Z')).ok).toBe(false);
  });
});
