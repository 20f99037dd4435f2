// Merchants: hashed API keys, authentication by key, rotation.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateMerchant, createMerchant, hashApiKey, loadMerchant, rotateMerchantKey } from '../../../src/store/merchants.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

describe('merchants', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('store_merchants');
  });
  afterAll(async () => {
    await t.drop();
  });

  it('stores only a hash of the API key and authenticates by the key', async () => {
    const { merchant, apiKey } = await createMerchant(t.db, { name: 'Shop' });
    expect(merchant.id).toMatch(/^mer_/);
    const stored = await t.pool.query<{ hash: string; row: string }>(`SELECT hash, row_to_json(k)::text AS row FROM api_keys k WHERE merchant_id = $1 AND kind = 'secret'`, [merchant.id]);
    expect(stored.rows.map((r) => r.hash)).toEqual([hashApiKey(apiKey)]);
    expect(stored.rows[0]?.row).not.toContain(apiKey.slice(-43));
    expect(await authenticateMerchant(t.db, apiKey)).toEqual(merchant);
    expect(await authenticateMerchant(t.db, `${apiKey}x`)).toBeNull();
    expect(await authenticateMerchant(t.db, '')).toBeNull();
    expect(await loadMerchant(t.db, merchant.id)).toEqual(merchant);
  });

  it('rotates a key: the old one stops working, the new one works, other merchants are untouched', async () => {
    const a = await createMerchant(t.db, { name: 'A' });
    const b = await createMerchant(t.db, { name: 'B' });
    const fresh = await rotateMerchantKey(t.db, a.merchant.id);
    expect(fresh).not.toBeNull();
    expect(fresh).not.toBe(a.apiKey);
    expect(await authenticateMerchant(t.db, a.apiKey)).toBeNull();
    expect(await authenticateMerchant(t.db, fresh!)).toEqual(a.merchant);
    expect(await authenticateMerchant(t.db, b.apiKey)).toEqual(b.merchant);
    expect(await rotateMerchantKey(t.db, 'mer_missing')).toBeNull();
  });
});
