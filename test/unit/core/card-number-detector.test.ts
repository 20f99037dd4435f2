// The card number detector: what card-validator takes for a card (brand prefix and length, Luhn)
// in runs of 13-19 digits, whole or grouped by single spaces or dashes; not numbers that merely look long.
import { describe, expect, it } from 'vitest';
import { containsCardNumber, findCardNumbers, isCardNumber, maskCardNumbers } from '../../../src/core/card-number-detector.ts';

describe('isCardNumber', () => {
  it.each([
    ['4242424242424242', 'Visa 16'],
    ['4000000000000000006', 'Visa 19'],
    ['5555555555554444', 'Mastercard'],
    ['378282246310005', 'Amex 15'],
    ['36227206271667', 'Diners 14'],
    ['6200000000000005', 'UnionPay 16'],
    ['6205500000000000004', 'UnionPay 19'],
  ])('%s (%s) is a card number', (digits) => {
    expect(isCardNumber(digits)).toBe(true);
  });

  it.each([
    ['1764662400000', 'epoch milliseconds (2025-12-02), no brand starts with 1'],
    ['2026120100000012345', 'a 19-digit order number, no brand prefix'],
    ['4242424242424241', 'a Visa prefix that fails Luhn'],
    ['4000000000000000001', 'a 19-digit Visa prefix that fails Luhn'],
    // card-validator takes any UnionPay-prefixed number without Luhn unless asked: we ask.
    ['8100000000000000', 'a UnionPay prefix that fails Luhn'],
    ['424242424242', 'too short'],
    ['42424242424242424242', 'too long'],
  ])('%s (%s) is not', (digits) => {
    expect(isCardNumber(digits)).toBe(false);
  });
});

describe('findCardNumbers', () => {
  it('finds a card number alone, with single spaces or dashes, or inside other text', () => {
    for (const text of ['4242424242424242', '4242 4242 4242 4242', '4242-4242-4242-4242', 'card: 4242424242424242, thanks', 'paid with (3782 822463 10005)', 'x 4242 4242-4242 4242 y']) {
      expect(containsCardNumber(text), text).toBe(true);
    }
  });

  it('finds a card number written after other digit groups, by whole groups', () => {
    expect(maskCardNumbers('invoice 2024 4242 4242 4242 4242 paid', '#')).toBe('invoice 2024 # paid');
  });

  it('merges overlapping candidates into one span', () => {
    // Groups 1-4 and 2-5 are both Luhn-valid Visa numbers.
    expect(findCardNumbers('4242 4242 4242 4242 4242')).toEqual([{ start: 0, end: 24 }]);
  });

  it('leaves numbers that are not card numbers alone', () => {
    for (const text of ['1764662400000', 'order 2026120100000012345', '4242424242424241', '4242  4242  4242  4242', '4242--4242--4242--4242', '42424242424242424242', 'tel +44 20 7946 0958']) {
      expect(containsCardNumber(text), text).toBe(false);
    }
  });

  it('does not count digits joined to a word (the documented way around a false positive)', () => {
    for (const text of ['ORD4242424242424242', 'ORD-4242424242424242', 'ORD_4242424242424242', '4242424242424242x', '4242424242424242-A']) {
      expect(containsCardNumber(text), text).toBe(false);
      expect(containsCardNumber(text, { includeJoined: true }), text).toBe(true);
    }
    // A separator alone is no word: these are still card numbers.
    expect(containsCardNumber('-4242424242424242')).toBe(true);
    expect(containsCardNumber('ref: 4242424242424242.')).toBe(true);
  });

  it('masks each card number and nothing else', () => {
    expect(maskCardNumbers('a 4242 4242 4242 4242 b 5555-5555-5555-4444 c 1764662400000', '[card]')).toBe('a [card] b [card] c 1764662400000');
  });

  it('stays cheap on hostile digit text (a few checks per run, not one per window)', () => {
    let groups = '';
    for (let i = 0; i < 50_000; i++) groups += `${(i * 7919) % 10} `;
    let runs = '';
    for (let i = 0; i < 2_000; i++) runs += `4${String(i * 104_729).padStart(15, '0')}/`;
    const t0 = performance.now();
    findCardNumbers(groups);
    findCardNumbers(runs);
    expect(performance.now() - t0).toBeLessThan(1_000);
  });
});
