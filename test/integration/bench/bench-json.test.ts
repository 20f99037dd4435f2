// The bench runs end to end (about 2 s per stage) and its --json line carries every figure as a
// finite number. Speeds are not asserted: a shared machine makes them drift.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseUrlFromEnv, withDatabase } from '../../../src/store/database-url.ts';

const run = promisify(execFile);
const name = `switchyard_test_bench_${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  const admin = new pg.Client({ connectionString: withDatabase(databaseUrlFromEnv(), 'postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  await admin.end();
});

describe('npm run bench -- --json', () => {
  it('prints one JSON object with every field a finite number', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--seconds', '2', '--json'], {
      env: { ...process.env, BENCH_DATABASE: name }, timeout: 170_000, maxBuffer: 1 << 20,
    });
    const last = stdout.trim().split('\n').at(-1) ?? '';
    const result = JSON.parse(last) as Record<string, unknown>;
    const fields = ['raw_tps', 'payments_per_s', 'transitions_per_s', 'commits_per_payment', 'lifecycle_ratio', 'intake_rps', 'intake_p99_ms', 'baseline_rps', 'intake_ratio', 'failfast_p99_ms'];
    for (const f of fields) expect(Number.isFinite(result[f]), f).toBe(true);
    const added = result['added_latency_ms'] as Record<string, unknown>;
    expect(Number.isFinite(added['p50']) && Number.isFinite(added['p99'])).toBe(true);
  }, 180_000);
});
