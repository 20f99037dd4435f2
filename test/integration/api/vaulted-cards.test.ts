// Issue 44: a payment paid with a vaulted card (payment_method {type: card, id: pmd_…}). The id
// must be this merchant's and the card not past its expiry, else a 400 on payment_method.id and
// nothing written; exactly one of id, tokens, test_card; the payment shows the card's summary.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openVault } from '../../../src/vault/index.ts';
import { paymentBody, rowCounts, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

const CARD = { number: '5555555555554444', exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: '737', holder_name: 'Ada Lovelace' };

let api: ApiGateway;

beforeAll(async () => {
  api = await startApiGateway('vaulted_cards', { authorizationWaitMs: 8000, log: () => undefined });
});
afterAll(async () => api?.close());

async function tokenize(merchantId: string, card = CARD): Promise<string> {
  const r = await api.gw.rt.vault.tokenize(merchantId, card);
  if (!r.ok) throw new Error(`tokenize: ${r.field} ${r.reason}`);
  return r.paymentMethod.id;
}

async function refusedWithNothingWritten(body: Record<string, unknown>, path: string, message: RegExp): Promise<void> {
  const before = await rowCounts(api.gw);
  const a = await api.call('POST', '/v1/payments', { body: paymentBody(body) });
  expect(a.status, a.text).toBe(400);
  expect(a.json.errors).toContainEqual({ path, message: expect.stringMatching(message) as unknown });
  const after = await rowCounts(api.gw);
  expect({ ...after, payment_transitions: 0, outbox: 0 }).toEqual({ ...before, payment_transitions: 0, outbox: 0 });
}

describe('payment_method.id', () => {
  it('an unknown id, and another merchant\'s, are a 400 on payment_method.id with nothing written (and say nothing of the other merchant)', async () => {
    await refusedWithNothingWritten({ payment_method: { type: 'card', id: 'pmd_0000000000aaaaaaaaaaaaaaaa' } }, 'payment_method.id', /not a payment method of this merchant/);
    const other = await api.newMerchant('other');
    const theirs = await tokenize(other.id);
    await refusedWithNothingWritten({ payment_method: { type: 'card', id: theirs } }, 'payment_method.id', /not a payment method of this merchant/);
  });

  it('a card past its expiry month is a 400 on payment_method.id', async () => {
    // Tokenized while it was still good: a vault with a clock in 2020.
    const then = await openVault({ gatewayDatabaseUrl: api.gw.db.url, now: () => new Date('2020-03-10T00:00:00Z'), sweepEveryMs: 0, poolMax: 1 });
    try {
      const r = await then.tokenize(api.merchantId, { ...CARD, exp_month: 2, exp_year: 2021 });
      if (!r.ok) throw new Error(r.reason);
      await refusedWithNothingWritten({ payment_method: { type: 'card', id: r.paymentMethod.id } }, 'payment_method.id', /the card expired \(02\/2021\)/);
    } finally {
      await then.close();
    }
  });

  it('takes exactly one of id, tokens, test_card', async () => {
    const id = await tokenize(api.merchantId);
    await refusedWithNothingWritten({ payment_method: { type: 'card', id, test_card: '4242424242424242' } }, 'payment_method', /exactly one of id, tokens, test_card \(got id, test_card\)/);
    await refusedWithNothingWritten({ payment_method: { type: 'card' } }, 'payment_method', /exactly one of id/);
    await refusedWithNothingWritten({ payment_method: { type: 'card', id: 'pm_card_visa' } }, 'payment_method.id', /payment method id \(pmd_…\)/);
  });

  it('a payment with a vaulted card is routed to connectors that take card data and shows the card, never its number', async () => {
    const id = await tokenize(api.merchantId);
    const a = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', id } }) });
    expect([201, 202]).toContain(a.status);
    expect(a.json['payment_method']).toEqual({ type: 'card', id, card: { brand: 'mastercard', last4: '4444', exp_month: 12, exp_year: CARD.exp_year } });
    expect((a.json['routing'] as { candidates: string[] }).candidates).toEqual(['stripe_a', 'stripe_b']);
    expect(a.text).not.toContain(CARD.number);
    const read = await api.call('GET', `/v1/payments/${a.json.id}`);
    expect(read.json['payment_method']).toEqual(a.json['payment_method']);
    const stored = await api.gw.db.pool.query<{ pm: unknown }>('SELECT payment_method AS pm FROM payments WHERE id = $1', [a.json.id]);
    expect(JSON.stringify(stored.rows[0]!.pm)).not.toContain('5555555555554444');
  });
});
