// The CLI through its launcher (bin/switchyard.js), as `npx switchyard` runs it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateMerchant, authenticatePublishableKey } from '../../../src/store/merchants.ts';
import { OPERATOR_ENV, runCli } from '../helpers/cli.ts';
import type { CliResult } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('api_cli');
});
afterAll(async () => db?.drop());

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { DATABASE_URL: db.url, ...OPERATOR_ENV.alice, ...env });
}

describe('switchyard CLI', () => {
  it('merchants create prints one JSON line with a working key; rotate-key replaces it', async () => {
    const created = await cli(['merchants', 'create', '--name', 'CLI shop']);
    expect(created.code).toBe(0);
    expect(created.stdout.trim().split('\n')).toHaveLength(1);
    const m = JSON.parse(created.stdout) as { id: string; name: string; api_key: string; publishable_key: string };
    expect(Object.keys(m)).toEqual(['id', 'name', 'api_key', 'publishable_key']);
    expect(m).toMatchObject({ id: expect.stringMatching(/^mer_/) as unknown, name: 'CLI shop', publishable_key: expect.stringMatching(/^pk_sy_test_key_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/) as unknown });
    expect(m.api_key).toMatch(/^sk_sy_test_key_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/);
    expect((await authenticateMerchant(db.db, m.api_key))?.id).toBe(m.id);
    // Each key opens only its own door.
    expect((await authenticatePublishableKey(db.db, m.publishable_key))?.id).toBe(m.id);
    expect(await authenticateMerchant(db.db, m.publishable_key)).toBeNull();
    expect(await authenticatePublishableKey(db.db, m.api_key)).toBeNull();

    const rotated = await cli(['merchants', 'rotate-key', m.id]);
    const r = JSON.parse(rotated.stdout) as { id: string; api_key: string };
    expect(r.id).toBe(m.id);
    expect(await authenticateMerchant(db.db, m.api_key)).toBeNull();
    expect((await authenticateMerchant(db.db, r.api_key))?.id).toBe(m.id);

    const missing = await cli(['merchants', 'rotate-key', 'mer_nope']);
    expect([missing.code, missing.stderr.trim()]).toEqual([1, 'merchant mer_nope not found']);
    // Audited under the operator's token, never with the key; without a token nothing rotates.
    const audit = await db.pool.query<{ operator: string; action: string; target: string; row: string }>(`SELECT operator, action, target, row_to_json(a)::text AS row FROM operator_audit a`);
    expect(audit.rows.map((a) => [a.operator, a.action, a.target])).toEqual([
      ['alice', 'merchant.create', m.id], ['alice', 'api_key.create', m.api_key.slice(11, 41)], ['alice', 'api_key.create', m.publishable_key.slice(11, 41)],
      ['alice', 'merchant.rotate_key', m.id],
    ]);
    for (const a of audit.rows) for (const key of [m.api_key, m.publishable_key, r.api_key]) expect(a.row).not.toContain(key.slice(-43));
    const anonymous = await cli(['merchants', 'rotate-key', m.id], { SWITCHYARD_OPERATOR_TOKEN: '' });
    expect([anonymous.code, anonymous.stderr.trim()]).toEqual([1, 'this command is recorded in the audit trail under your operator name: set SWITCHYARD_OPERATOR_TOKEN to your operator token']);
    expect((await authenticateMerchant(db.db, r.api_key))?.id).toBe(m.id);
  });

  it('routes validate and explain', async () => {
    const ok = await cli(['routes', 'validate', 'config/switchyard.yaml']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/valid — routing snapshot rs_/);
    expect((await cli(['routes', 'validate', '/does/not/exist.yaml'])).code).toBe(1);
    const explained = await cli(['routes', 'explain', '--amount', '150000', '--currency', 'EUR', '--json']);
    expect(JSON.parse(explained.stdout)).toMatchObject({ rule: 'eur-large', candidates: ['adyen_eu', 'stripe_eu'], skipped: [] });
    const bad = await cli(['routes', 'explain', '--amount', '-5', '--currency', 'EUR']);
    expect([bad.code, bad.stderr.trim()]).toEqual([1, '--amount: amount "-5" is not an integer number of minor units']);
  });

  it('an unreachable Postgres or Redis is one line naming the URL and how to start it', async () => {
    const pg = await cli(['migrate'], { DATABASE_URL: 'postgres://me:hunter2@127.0.0.1:1/x' });
    expect(pg.code).toBe(1);
    expect(pg.stderr.trim()).toBe("cannot reach PostgreSQL at postgres://me:***@127.0.0.1:1/x (ECONNREFUSED): start it with 'pg_ctlcluster --skip-systemctl-redirect <version> main start' or set DATABASE_URL");
    // start waits out an unreachable Redis (a blip heals) for SWITCHYARD_START_TIMEOUT, then gives up in one line.
    const redis = await cli(['start', '--port', '0'], { REDIS_URL: 'redis://127.0.0.1:1', SWITCHYARD_START_TIMEOUT: '1s' });
    expect(redis.code).toBe(1);
    const lines = redis.stderr.trim().split('\n');
    expect(lines[lines.length - 1]).toMatch(/^cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\): start it with 'redis-server --daemonize yes' or set REDIS_URL \(still failing after 1 s and \d+ attempts; SWITCHYARD_START_TIMEOUT sets how long to wait\)$/);
    expect(lines.length).toBeGreaterThan(1);
    for (const l of lines.slice(0, -1)) expect((JSON.parse(l) as { msg: string }).msg).toMatch(/^start: Redis not available, retry \d+ in /);
  });
});
