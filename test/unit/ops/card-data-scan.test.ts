// What the card-data scan recognises: a given card number whole, grouped or hex-encoded (a bytea
// column as text), and a card code under the names it travels by; not amounts or other numbers.
import { describe, expect, it } from 'vitest';
import { cardDataIn } from '../../../src/ops/card-data-scan.ts';

const N = '5555555555554444';

describe('cardDataIn', () => {
  it('finds the number whole, in groups and hex-encoded', () => {
    expect(cardDataIn(`{"number":"${N}"}`, [N])).toBe('card_number');
    expect(cardDataIn('card 5555 5555 5555 4444 seen', [N])).toBe('card_number');
    expect(cardDataIn('5555-5555-5555-4444', [N])).toBe('card_number');
    expect(cardDataIn(`(1,\\x${Buffer.from(N).toString('hex')})`, [N])).toBe('card_number');
  });

  it('finds a card code in JSON, form and Adyen fields', () => {
    expect(cardDataIn('{"card":{"cvc":"737"}}', [])).toBe('card_code');
    expect(cardDataIn('payment_method_data[card][cvc]=737&x=1', [])).toBe('card_code');
    expect(cardDataIn('{"paymentMethod":{"type":"scheme","cvc":"7373"}}', [])).toBe('card_code');
    expect(cardDataIn('{"security_code": 123}', [])).toBe('card_code');
  });

  it('leaves other numbers and the last four alone', () => {
    expect(cardDataIn('{"amount":737,"last4":"4444","brand":"mastercard","fingerprint":"abc"}', [N])).toBeNull();
    expect(cardDataIn('5555555555554443', [N])).toBeNull();
    expect(cardDataIn('{"cvc_check":"pass"}', [N])).toBeNull();
  });
});
