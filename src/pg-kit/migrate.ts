// A migration runner for any room's database: applies <dir>/NNNN_name.sql in order, each in its
// own transaction, under a session advisory lock so processes starting together take turns.
// Applied files are tracked (with a checksum) in schema_migrations. A room may run one more step
// under the same lock (the gateway installs its generated edge guard there).

import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import pg from 'pg';
import { databaseName, describeConnectError, maskDatabaseUrl, withDatabase } from './database-url.ts';

/** Arbitrary but fixed. Advisory locks are per database: processes migrating the same database take turns. */
const MIGRATION_LOCK_KEY = 7_420_511_001;

const MIGRATION_FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;

export interface Migration {
  readonly version: string; // file name without .sql, e.g. 0001_init
  readonly sql: string;
  readonly checksum: string;
}

export interface RunMigrationsOptions {
  readonly dir: string;
  /** Runs after the files, under the same lock, on the same connection. */
  readonly afterMigrations?: (client: pg.Client) => Promise<void>;
}

export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

export async function readMigrations(dir: string): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.sql')).sort();
  const seen = new Set<string>();
  const out: Migration[] = [];
  for (const name of names) {
    const m = MIGRATION_FILE.exec(name);
    if (m === null) throw new MigrationError(`migration file ${name} must be named NNNN_lower_snake.sql`);
    if (seen.has(m[1]!)) throw new MigrationError(`two migrations share the number ${m[1]!}`);
    seen.add(m[1]!);
    const sql = await readFile(`${dir.replace(/\/?$/, '/')}${name}`, 'utf8');
    out.push({ version: name.slice(0, -4), sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  return out;
}

/** `reportAs`: the URL the operator configured, named in the error even when we connect elsewhere. */
async function connect(url: string, reportAs: string = url): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  // A backend that dies while we wait on the lock must surface as a rejected query, not crash the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw describeConnectError(reportAs, err);
  }
  return client;
}

export async function inTransaction(client: pg.Client, work: () => Promise<void>): Promise<void> {
  await client.query('BEGIN');
  try {
    await work();
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Applies pending migrations from `dir`, then `afterMigrations`. Running it again applies nothing. */
export async function runMigrations(databaseUrl: string, options: RunMigrationsOptions): Promise<{ applied: string[] }> {
  const migrations = await readMigrations(options.dir);
  const client = await connect(databaseUrl);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const done = new Map<string, string>();
      const rows = await client.query<{ version: string; checksum: string }>('SELECT version, checksum FROM schema_migrations');
      for (const r of rows.rows) done.set(r.version, r.checksum);

      const applied: string[] = [];
      for (const m of migrations) {
        const recorded = done.get(m.version);
        if (recorded !== undefined) {
          // An applied file that changed would make databases disagree silently: add a new migration instead.
          if (recorded !== m.checksum) throw new MigrationError(`migration ${m.version} was changed after it was applied to ${maskDatabaseUrl(databaseUrl)}`);
          continue;
        }
        await inTransaction(client, async () => {
          try {
            await client.query(m.sql);
          } catch (err) {
            throw new MigrationError(`migration ${m.version} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
          }
          await client.query('INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)', [m.version, m.checksum]);
        });
        applied.push(m.version);
      }
      await options.afterMigrations?.(client);
      return { applied };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } catch (err) {
    throw describeConnectError(databaseUrl, err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Whether the database named in the URL exists (asks the server's `postgres` database). */
export async function databaseExists(databaseUrl: string): Promise<boolean> {
  const admin = await connect(withDatabase(databaseUrl, 'postgres'), databaseUrl);
  try {
    return (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName(databaseUrl)])).rowCount !== 0;
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** Creates the database named in the URL when it does not exist (connects to `postgres` to do so). */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const name = databaseName(databaseUrl);
  const admin = await connect(withDatabase(databaseUrl, 'postgres'), databaseUrl);
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount !== 0) return false;
    try {
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      return true;
    } catch (err) {
      // Another process created it between our check and our CREATE: that is what we wanted.
      if ((err as { code?: unknown }).code === '42P04') return false;
      // CREATE DATABASE races on pg_database's unique index too.
      if ((err as { code?: unknown }).code === '23505') return false;
      throw err;
    }
  } finally {
    await admin.end().catch(() => undefined);
  }
}
