// Prepared statements (src/store/prepared.ts): the hot statements run as named statements, parsed
// once per connection, and run on the caller's own connection — inside a transaction they see its
// uncommitted rows and roll back with it, exactly as the unprepared queries did.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAggregate } from '../../../src/store/payment-load.ts';
import { authenticateMerchant, createMerchant } from '../../../src/store/merchants.ts';
import { createPayment } from '../../../src/store/transition.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { env, paymentRequest } from './env.ts';

describe('prepared hot statements', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('store_prepared');
  });
  afterAll(async () => {
    await t.drop();
  });

  it('run named on each connection, and inside a transaction on its connection: they see its rows and roll back with it', async () => {
    const { merchant, apiKey } = await createMerchant(t.db, { name: 'Prepared' });
    const created = await createPayment(t.db, paymentRequest(merchant.id), env);
    let statements: string[] = [];
    let innerKey = '';
    const rolledBack = new Error('roll back');
    await expect(t.db.transaction(async (tx) => {
      // A merchant created in this transaction is found by the prepared lookup run on it...
      const inner = await createMerchant(tx, { name: 'Uncommitted' });
      innerKey = inner.apiKey;
      expect(await authenticateMerchant(tx, inner.apiKey)).toEqual(inner.merchant);
      // ...and not from the pool, where it is not committed.
      expect(await authenticateMerchant(t.db, inner.apiKey)).toBeNull();
      expect((await loadAggregate(tx, created.payment.id, { merchantId: merchant.id }))?.id).toBe(created.payment.id);
      expect(await loadAggregate(tx, created.payment.id, { merchantId: inner.merchant.id })).toBeNull();
      statements = (await tx.execute<{ name: string }>(sql`SELECT name FROM pg_prepared_statements ORDER BY name`)).rows.map((x) => x.name);
      throw rolledBack;
    })).rejects.toBe(rolledBack);
    // The transaction's connection holds them as named statements.
    expect(statements).toEqual(expect.arrayContaining(['sy_aggregate_by_id_merchant', 'sy_api_key_by_id']));
    expect(await authenticateMerchant(t.db, innerKey)).toBeNull();
    expect(await authenticateMerchant(t.db, apiKey)).toEqual(merchant);
    expect((await loadAggregate(t.db, created.payment.id))?.version).toBe(created.payment.version);
  });
});
