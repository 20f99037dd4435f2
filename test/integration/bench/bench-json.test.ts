// The bench runs end to end (about 2 s per stage: K = 2 gateway processes, the sandboxes in their
// own) and its --json line carries every figure as a finite number. Speeds are not asserted: a
// shared machine makes them drift.
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
  // The bench's database and its sandbox's.
  for (const db of [name, `${name}_sandbox`]) await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(db)} WITH (FORCE)`);
  await admin.end();
});

describe('npm run bench -- --json', () => {
  it('prints one JSON object with every field a finite number', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--seconds', '2', '--json'], {
      env: { ...process.env, BENCH_DATABASE: name }, timeout: 170_000, maxBuffer: 1 << 20,
    });
    const last = stdout.trim().split('\n').at(-1) ?? '';
    const result = JSON.parse(last) as Record<string, unknown>;
    const fields = [
      'raw_tps', 'payments_per_s', 'transitions_per_s', 'commits_per_payment', 'lifecycle_ratio', 'intake_rps', 'intake_p99_ms', 'baseline_rps', 'intake_ratio', 'failfast_p99_ms',
      'provider_calls_per_payment', 'processes',
    ];
    for (const f of fields) expect(Number.isFinite(result[f]), f).toBe(true);
    const finite = (key: string, members: readonly string[]): void => {
      const o = result[key] as Record<string, unknown> | undefined;
      for (const m of members) expect(Number.isFinite(o?.[m]), `${key}.${m}`).toBe(true);
    };
    for (const k of ['direct_latency_ms', 'gateway_latency_ms', 'added_vs_direct_ms', 'added_vs_provider_time_ms']) finite(k, ['p50', 'p99']);
    finite('cpu_ms_per_payment', ['gateway', 'postgres', 'redis', 'sandbox']);
    finite('spike', ['answered_p99_ms', 'shed_pct', 'errors_5xx', 'drain_s']);
    // Counted by the sandbox: a manual-capture Stripe lifecycle is create (confirm=true) and capture,
    // one call each since issue 26 (three before: create, confirm, capture).
    expect(result['provider_calls_per_payment'] as number).toBeGreaterThanOrEqual(2);
    expect(result['provider_calls_per_payment'] as number).toBeLessThanOrEqual(2);
    expect(result['processes']).toBe(2);
    // The gateway runs out of the sandbox's process: the sandbox's CPU is its own.
    expect((result['cpu_ms_per_payment'] as Record<string, number>)['sandbox']).toBeGreaterThan(0);
    // No answer of the spike is a 5xx other than the deliberate shed.
    expect((result['spike'] as Record<string, number>)['errors_5xx']).toBe(0);
  }, 180_000);
});
