// Raw-SQL fixtures for tests that exercise the database guards without going through the store.

import type pg from 'pg';

let seq = 0;

export async function insertMerchant(pool: pg.Pool | pg.PoolClient, id = `mer_test${++seq}`): Promise<string> {
  await pool.query(`INSERT INTO merchants (id, name) VALUES ($1, $2)`, [id, `merchant ${id}`]);
  return id;
}

/** A bare payment row (default state `created`), enough for trigger tests. */
export async function insertPaymentRow(pool: pg.Pool | pg.PoolClient, merchantId: string, state = 'created'): Promise<string> {
  const id = `pay_test${++seq}`;
  await pool.query(
    `INSERT INTO payments (id, merchant_id, reference, amount, currency, state, capture_method, allow_partial,
       routing, routing_snapshot, version, created_at, updated_at, deadline_at, livemode)
     VALUES ($1, $2, 'order-1', 1000, 'EUR', $3, 'manual', false, '{}'::jsonb, 'v1', 0, now(), now(), now() + interval '1 day', false)`,
    [id, merchantId, state],
  );
  return id;
}
