// Stage 1, the raw limit R: plain `pg` clients committing a payment-transition-shaped
// transaction (guarded UPDATE of one row + INSERT of a log row + INSERT of an outbox row), in
// the same round trips the gateway uses, at the gateway's pool size, against the bench database.

import pg from 'pg';
import { closedLoop } from './lib.ts';

const SETUP = `
CREATE TABLE IF NOT EXISTS bench_raw_payments (id text PRIMARY KEY, state text NOT NULL, version integer NOT NULL, updated_at timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS bench_raw_transitions (id bigserial PRIMARY KEY, payment_id text NOT NULL REFERENCES bench_raw_payments (id), from_state text NOT NULL, to_state text NOT NULL, input jsonb NOT NULL, version integer NOT NULL, at timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS bench_raw_outbox (id bigserial PRIMARY KEY, payment_id text REFERENCES bench_raw_payments (id), transition_id bigint REFERENCES bench_raw_transitions (id), kind text NOT NULL, payload jsonb NOT NULL, run_at timestamptz NOT NULL, status text NOT NULL DEFAULT 'pending');
TRUNCATE bench_raw_outbox, bench_raw_transitions, bench_raw_payments;
`;

export interface RawResult {
  readonly tps: number;
  readonly commits: number;
  readonly errors: number;
}

export async function rawLimit(databaseUrl: string, concurrency: number, seconds: number): Promise<RawResult> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: concurrency });
  try {
    await pool.query(SETUP);
    const rowsPerWorker = 64;
    const versions: number[][] = [];
    for (let w = 0; w < concurrency; w++) {
      versions.push(new Array<number>(rowsPerWorker).fill(0));
      await pool.query(
        `INSERT INTO bench_raw_payments (id, state, version, updated_at) SELECT 'p_' || $1::int || '_' || g, 'authorized', 0, now() FROM generate_series(0, $2::int - 1) g`,
        [w, rowsPerWorker],
      );
    }
    const clients = await Promise.all(Array.from({ length: concurrency }, () => pool.connect()));
    const input = JSON.stringify({ type: 'capture_requested', amount: 1000, captureId: 'cap_bench' });
    const payload = JSON.stringify({ op: 'capture', amount: 1000, currency: 'EUR', providerKey: 'cap_bench_key' });
    let n = 0;
    const stats = await closedLoop(concurrency, seconds, async (w) => {
      const client = clients[w]!;
      const mine = versions[w]!;
      const row = n++ % rowsPerWorker;
      const id = `p_${w}_${row}`;
      const version = mine[row]!;
      const started = performance.now();
      await client.query('BEGIN');
      try {
        const updated = await client.query('UPDATE bench_raw_payments SET state = $2, version = version + 1, updated_at = now() WHERE id = $1 AND version = $3 RETURNING version', [id, 'capturing', version]);
        if (updated.rowCount !== 1) throw new Error(`guard failed on ${id}`);
        const t = await client.query<{ id: string }>(
          'INSERT INTO bench_raw_transitions (payment_id, from_state, to_state, input, version, at) VALUES ($1, $2, $3, $4, $5, now()) RETURNING id',
          [id, 'authorized', 'capturing', input, version + 1],
        );
        await client.query('INSERT INTO bench_raw_outbox (payment_id, transition_id, kind, payload, run_at) VALUES ($1, $2, $3, $4, now())', [id, t.rows[0]!.id, 'provider_call', payload]);
        await client.query('COMMIT');
        mine[row] = version + 1;
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
      return performance.now() - started;
    });
    for (const c of clients) c.release();
    return { tps: stats.ok / stats.seconds, commits: stats.ok, errors: stats.errors };
  } finally {
    await pool.end();
  }
}
