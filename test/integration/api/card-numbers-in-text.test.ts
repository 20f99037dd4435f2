// Issue 42 §5: merchant text fields refuse a card number (a 13-19 digit run, whole or grouped by
// single spaces or dashes, that card-validator takes for a card), naming the field and writing
// nothing; numbers that only look long (epoch milliseconds, order numbers) are accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentBody, rowCounts, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('api_card_text', { authorizationWaitMs: 2_000 });
});
afterAll(async () => api?.close());

describe('card numbers in merchant text', () => {
  const refused: [string, Record<string, unknown>, string][] = [
    ['a spaced card number as reference', { reference: '4242 4242 4242 4242' }, 'reference'],
    ['a dashed card number as reference', { reference: '4242-4242-4242-4242' }, 'reference'],
    ['a card number inside other text', { reference: 'order for card 4242424242424242, thanks' }, 'reference'],
    ['a card number in a metadata value', { metadata: { note: 'pan 5555 5555 5555 4444' } }, 'metadata.note'],
    ['a card number as a metadata key', { metadata: { '4242424242424242': 'x' } }, 'metadata.[card]'],
    ['a card number in the return URL', { return_url: 'https://shop.example/back?card=4242424242424242' }, 'return_url'],
  ];
  it.each(refused)('%s is refused (400 naming the field), nothing written', async (_name, over, path) => {
    const before = await rowCounts(api.gw);
    const r = await api.call('POST', '/v1/payments', { body: paymentBody(over) });
    expect([r.status, r.json.code, r.json.errors[0]?.path]).toEqual([400, 'validation_error', path]);
    expect(r.json.errors[0]?.message).toMatch(/card number/);
    // The answer does not echo the number back either.
    expect(r.text.replace(/\D/g, '')).not.toContain('4242424242424242');
    expect(await rowCounts(api.gw)).toEqual(before);
  });

  it('a refund reason with a card number is refused; without one it is taken', async () => {
    const p = (await api.call('POST', '/v1/payments', { body: paymentBody({ capture_method: 'automatic' }) })).json;
    expect(p.status).toBe('captured');
    const before = await rowCounts(api.gw);
    const bad = await api.call('POST', `/v1/payments/${p.id}/refunds`, { body: { amount: 10, reason: 'customer card 4242 4242 4242 4242' } });
    expect([bad.status, bad.json.code, bad.json.errors[0]?.path]).toEqual([400, 'validation_error', 'reason']);
    expect(await rowCounts(api.gw)).toEqual(before);
    const good = await api.call('POST', `/v1/payments/${p.id}/refunds`, { body: { amount: 10, reason: 'order 1764662400000 returned' } });
    expect(good.status).toBeLessThan(300);
  });

  it.each([
    ['13-digit epoch milliseconds', '1764662400000'],
    ['a 19-digit order number that is no card number', '2026120100000012345'],
    ['a Visa-like number that fails Luhn', '4242424242424241'],
    ['a card-like number joined to a prefix', 'ORD-4242424242424242'],
  ])('%s is accepted as reference', async (_name, reference) => {
    const r = await api.call('POST', '/v1/payments', { body: paymentBody({ reference, metadata: { ref: reference } }) });
    expect(r.status, r.text).toBeLessThan(300);
    expect(r.json.reference).toBe(reference);
  });
});
