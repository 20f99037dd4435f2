// Database guards: the generated legal-edge trigger, append-only history, balanced ledger.

import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYMENT_STATES, isLegalEdge } from '../../../src/core/states.ts';
import { EDGE_GUARD_FUNCTION, EDGE_GUARD_TRIGGERS } from '../../../src/store/edge-trigger.ts';
import { migrate } from '../../../src/store/migrate.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { insertMerchant, insertPaymentRow } from './fixtures.ts';

function sqlState(err: unknown): string | undefined {
  return (err as { code?: string }).code;
}

describe('database guards', () => {
  let t: TestDatabase;
  let merchantId: string;

  beforeAll(async () => {
    t = await createTestDatabase('store_guards');
    merchantId = await insertMerchant(t.pool);
  });
  afterAll(async () => {
    await t.drop();
  });

  /** Puts the payment in `from` with triggers off, then tries `to` with them on. */
  async function tryEdge(client: pg.PoolClient, paymentId: string, from: string, to: string): Promise<boolean> {
    await client.query('BEGIN');
    try {
      await client.query(`SET LOCAL session_replication_role = replica`);
      await client.query(`UPDATE payments SET state = $2 WHERE id = $1`, [paymentId, from]);
      await client.query(`SET LOCAL session_replication_role = origin`);
      await client.query(`UPDATE payments SET state = $2 WHERE id = $1`, [paymentId, to]);
      return true;
    } catch (err) {
      expect(sqlState(err)).toBe('23514');
      return false;
    } finally {
      await client.query('ROLLBACK');
    }
  }

  it('allows a state change exactly when core says the edge is legal (every pair of states)', async () => {
    const paymentId = await insertPaymentRow(t.pool, merchantId);
    const client = await t.pool.connect();
    const mismatches: string[] = [];
    try {
      for (const from of PAYMENT_STATES) {
        for (const to of PAYMENT_STATES) {
          if (from === to) continue; // not a state change: the guard does not fire
          const allowed = await tryEdge(client, paymentId, from, to);
          if (allowed !== isLegalEdge(from, to)) mismatches.push(`${from} -> ${to}: db ${allowed ? 'allows' : 'refuses'}`);
        }
      }
    } finally {
      client.release();
    }
    expect(mismatches).toEqual([]);
  });

  it('rejects a direct UPDATE to an illegal state, naming both states', async () => {
    const paymentId = await insertPaymentRow(t.pool, merchantId);
    const err: unknown = await t.pool.query(`UPDATE payments SET state = 'captured' WHERE id = $1`, [paymentId]).catch((e: unknown) => e);
    expect(sqlState(err)).toBe('23514');
    expect((err as Error).message).toMatch(/illegal payment state change from created to captured/);
    await expect(t.pool.query(`UPDATE payments SET state = 'bogus' WHERE id = $1`, [paymentId])).rejects.toThrow(/unknown payment state bogus/);
    await expect(t.pool.query(`UPDATE payments SET state = 'authorizing' WHERE id = $1`, [paymentId])).resolves.toBeDefined();
  });

  it('creates payments only in created or one edge away from it', async () => {
    await expect(insertPaymentRow(t.pool, merchantId, 'authorized')).rejects.toThrow(/cannot be created in state authorized/);
    await expect(insertPaymentRow(t.pool, merchantId, 'authorizing')).resolves.toMatch(/^pay_/);
    await expect(insertPaymentRow(t.pool, merchantId, 'failed')).resolves.toMatch(/^pay_/);
  });

  it('reinstalls the guard when it was tampered with or dropped', async () => {
    await t.pool.query(`CREATE OR REPLACE FUNCTION ${EDGE_GUARD_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`);
    await t.pool.query(`DROP TRIGGER ${EDGE_GUARD_TRIGGERS[1]} ON payments`);
    expect((await migrate(t.url)).guardInstalled).toBe(true);
    const paymentId = await insertPaymentRow(t.pool, merchantId);
    await expect(t.pool.query(`UPDATE payments SET state = 'voided' WHERE id = $1`, [paymentId])).rejects.toThrow(/illegal payment state change/);
    expect((await migrate(t.url)).guardInstalled).toBe(false);
  });

  it('keeps payment_transitions append-only', async () => {
    const paymentId = await insertPaymentRow(t.pool, merchantId);
    const ins = await t.pool.query<{ id: string }>(
      `INSERT INTO payment_transitions (payment_id, from_state, to_state, input, origin, outcome, reason, version, at)
       VALUES ($1, 'created', 'authorizing', '{}'::jsonb, 'api', 'applied', 'test', 1, now()) RETURNING id`,
      [paymentId],
    );
    const id = ins.rows[0]!.id;
    await expect(t.pool.query(`UPDATE payment_transitions SET reason = 'rewritten' WHERE id = $1`, [id])).rejects.toThrow(/append-only: UPDATE refused/);
    await expect(t.pool.query(`DELETE FROM payment_transitions WHERE id = $1`, [id])).rejects.toThrow(/append-only: DELETE refused/);
    await expect(t.pool.query(`TRUNCATE payment_transitions CASCADE`)).rejects.toThrow(/append-only: TRUNCATE refused/);
    const still = await t.pool.query(`SELECT reason FROM payment_transitions WHERE id = $1`, [id]);
    expect(still.rows).toEqual([{ reason: 'test' }]);
  });

  async function postLedger(id: string, entries: [string, 'debit' | 'credit', number, string][]): Promise<void> {
    const client = await t.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`INSERT INTO ledger_transactions (id, kind, source) VALUES ($1, 'capture', $1)`, [id]);
      for (const [account, direction, amount, currency] of entries) {
        await client.query(`INSERT INTO ledger_entries (transaction_id, account, direction, amount, currency) VALUES ($1, $2, $3, $4, $5)`, [
          id, account, direction, amount, currency,
        ]);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  it('commits a balanced ledger transaction and rejects an unbalanced one at COMMIT', async () => {
    await postLedger('ltx_balanced', [
      ['provider:stripe', 'debit', 1000, 'EUR'],
      ['merchant:m1', 'credit', 700, 'EUR'],
      ['fees', 'credit', 300, 'EUR'],
      ['provider:stripe', 'debit', 5, 'USD'],
      ['merchant:m1', 'credit', 5, 'USD'],
    ]);
    // Balanced in total amount but not per currency.
    await expect(
      postLedger('ltx_cross_currency', [
        ['provider:stripe', 'debit', 1000, 'EUR'],
        ['merchant:m1', 'credit', 1000, 'USD'],
      ]),
    ).rejects.toThrow(/unbalanced in (EUR|USD)/);
    await expect(postLedger('ltx_short', [['provider:stripe', 'debit', 1000, 'EUR'], ['merchant:m1', 'credit', 999, 'EUR']])).rejects.toThrow(
      /ltx_short is unbalanced in EUR: debits 1000 <> credits 999/,
    );
    await expect(postLedger('ltx_empty', [])).rejects.toThrow(/has no entries/);
    // An entry added later, in a transaction of its own, unbalances a committed posting: refused too.
    await expect(t.pool.query(`INSERT INTO ledger_entries (transaction_id, account, direction, amount, currency) VALUES ('ltx_balanced', 'fees', 'debit', 1, 'EUR')`)).rejects.toThrow(
      /ltx_balanced is unbalanced in EUR/,
    );
    const ids = await t.pool.query<{ id: string }>(`SELECT id FROM ledger_transactions ORDER BY id`);
    expect(ids.rows.map((r) => r.id)).toEqual(['ltx_balanced']);
    const entries = await t.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_entries`);
    expect(entries.rows[0]?.n).toBe(5);
  });

  it('keeps ledger rows immutable', async () => {
    await expect(t.pool.query(`UPDATE ledger_entries SET amount = 1`)).rejects.toThrow(/ledger_entries is append-only/);
    await expect(t.pool.query(`DELETE FROM ledger_entries`)).rejects.toThrow(/ledger_entries is append-only/);
    await expect(t.pool.query(`UPDATE ledger_transactions SET kind = 'x'`)).rejects.toThrow(/ledger_transactions is append-only/);
    await expect(t.pool.query(`DELETE FROM ledger_transactions`)).rejects.toThrow(/ledger_transactions is append-only/);
  });

  it('enforces the money CHECKs on payments', async () => {
    const paymentId = await insertPaymentRow(t.pool, merchantId);
    await expect(t.pool.query(`UPDATE payments SET amount_captured = 1 WHERE id = $1`, [paymentId])).rejects.toThrow(/payments_captured_le_authorized/);
    await expect(
      t.pool.query(`UPDATE payments SET amount_authorized = 10, amount_captured = 10, amount_refunded = 11 WHERE id = $1`, [paymentId]),
    ).rejects.toThrow(/payments_refunded_le_captured/);
    await expect(t.pool.query(`UPDATE payments SET currency = 'eur' WHERE id = $1`, [paymentId])).rejects.toThrow(/payments_currency_check/);
    await expect(t.pool.query(`UPDATE payments SET amount = -1 WHERE id = $1`, [paymentId])).rejects.toThrow(/payments_amount_check/);
  });
});
