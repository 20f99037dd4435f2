// The migration runner: empty database, second run, five processes at once, a failing file, and
// the connection error message.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnreachableError, withDatabase } from '../../../src/store/database-url.ts';
import { ensureDatabase, migrate, readMigrations } from '../../../src/store/migrate.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

async function tables(t: TestDatabase): Promise<string[]> {
  const r = await t.pool.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
  );
  return r.rows.map((row) => row.name);
}

describe('migrate', () => {
  let empty: TestDatabase;
  let concurrent: TestDatabase;
  let failing: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    [empty, concurrent, failing] = await Promise.all([
      createTestDatabase('migrate_empty', { migrate: false }),
      createTestDatabase('migrate_concurrent', { migrate: false }),
      createTestDatabase('migrate_failing', { migrate: false }),
    ]);
    dir = await mkdtemp(join(tmpdir(), 'switchyard-migrations-'));
  });
  afterAll(async () => {
    await Promise.all([empty.drop(), concurrent.drop(), failing.drop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('applies every migration and the edge guard on an empty database, and nothing the second time', async () => {
    const files = (await readMigrations()).map((m) => m.version);
    const first = await migrate(empty.url);
    expect(first.applied).toEqual(files);
    expect(first.guardInstalled).toBe(true);
    expect(await tables(empty)).toEqual(expect.arrayContaining(['payments', 'payment_transitions', 'outbox', 'ledger_entries']));

    const second = await migrate(empty.url);
    expect(second).toEqual({ applied: [], guardInstalled: false });
    const recorded = await empty.pool.query('SELECT version FROM schema_migrations ORDER BY version');
    expect(recorded.rows.map((r: { version: string }) => r.version)).toEqual(files);
  });

  it('lets five processes migrate at once: each migration applied exactly once', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => migrate(concurrent.url)));
    const applied = results.flatMap((r) => r.applied);
    expect(applied.sort()).toEqual((await readMigrations()).map((m) => m.version).sort());
    expect(results.filter((r) => r.guardInstalled)).toHaveLength(1);
    const count = await concurrent.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
    expect(count.rows[0]?.n).toBe(applied.length);
  });

  it('leaves the database as it was when a migration fails, keeping the ones before it', async () => {
    await writeFile(join(dir, '0001_good.sql'), 'CREATE TABLE good (id int PRIMARY KEY);');
    await writeFile(
      join(dir, '0002_bad.sql'),
      'CREATE TABLE half_done (id int); INSERT INTO good VALUES (1); SELECT no_such_function();',
    );
    await expect(migrate(failing.url, { dir })).rejects.toThrow(/migration 0002_bad failed/);
    expect(await tables(failing)).toEqual(['good', 'schema_migrations']);
    const rows = await failing.pool.query('SELECT * FROM good');
    expect(rows.rowCount).toBe(0);
    const recorded = await failing.pool.query<{ version: string }>('SELECT version FROM schema_migrations');
    expect(recorded.rows.map((r) => r.version)).toEqual(['0001_good']);
  });

  it('refuses an applied migration whose file changed', async () => {
    await writeFile(join(dir, '0001_good.sql'), 'CREATE TABLE good (id int PRIMARY KEY, extra int);');
    await rm(join(dir, '0002_bad.sql'));
    await expect(migrate(failing.url, { dir })).rejects.toThrow(/0001_good was changed after it was applied/);
  });

  it('names the URL, with the password masked, when PostgreSQL is unreachable', async () => {
    const url = 'postgres://postgres:s3cret@127.0.0.1:1/switchyard';
    const err: unknown = await migrate(url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnreachableError);
    expect((err as Error).message).toContain('cannot reach PostgreSQL at postgres://postgres:***@127.0.0.1:1/switchyard (ECONNREFUSED)');
    expect((err as Error).message).not.toContain('s3cret');
    const viaAdmin: unknown = await ensureDatabase(url).catch((e: unknown) => e);
    expect((viaAdmin as Error).message).toContain('at postgres://postgres:***@127.0.0.1:1/switchyard (ECONNREFUSED)');
  });

  it('creates the database only when missing, and tolerates concurrent creators', async () => {
    expect(await ensureDatabase(empty.url)).toBe(false);
    const url = withDatabase(empty.url, `${empty.name}_fresh`);
    try {
      const created = await Promise.all([ensureDatabase(url), ensureDatabase(url), ensureDatabase(url)]);
      expect(created.filter(Boolean)).toHaveLength(1);
      expect(await ensureDatabase(url)).toBe(false);
    } finally {
      const admin = new pg.Client({ connectionString: withDatabase(empty.url, 'postgres') });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(`${empty.name}_fresh`)} WITH (FORCE)`);
      await admin.end();
    }
  });
});
