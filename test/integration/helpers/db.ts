// Each integration test file gets its own database, so files run in parallel and leave nothing behind.
// `createTestDatabase('store_migrate')` -> switchyard_test_store_migrate_<random>, migrated unless told not to.
// drop() also drops <name>_sandbox and <name>_vault, the sandbox and vault databases a gateway on this database creates on first use.
//
// A migrated database is a copy of a template (CREATE DATABASE … TEMPLATE, a file copy inside
// PostgreSQL) migrated once per machine and schema: running the migrations for every file cost
// about a second of the database server's CPU each time, on a 2-core machine shared by the whole
// suite. The template's name carries a hash of what migrate() installs (the migration files and the
// generated edge guard), so a changed migration or edge table gets a template of its own.

import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { databaseUrlFromEnv, withDatabase } from '../../../src/store/database-url.ts';
import { createDatabase } from '../../../src/store/db.ts';
import type { Database } from '../../../src/store/db.ts';
import { renderEdgeGuardSql } from '../../../src/store/edge-trigger.ts';
import { ensureDatabase, migrate } from '../../../src/store/migrate.ts';

export interface TestDatabase extends Database {
  readonly name: string;
  /** Closes the pool and drops the database (terminating stray connections first). */
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** Default true: apply migrations/ and the edge guard. */
  readonly migrate?: boolean;
  readonly poolMax?: number;
}

export async function createTestDatabase(name: string, options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const safe = name.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 30);
  const dbName = `switchyard_test_${safe}_${randomBytes(4).toString('hex')}`;
  const url = withDatabase(databaseUrlFromEnv(), dbName);
  if (options.migrate === false) await ensureDatabase(url);
  else await createFromTemplate(url, dbName, await migratedTemplate());
  const database = createDatabase(url, options.poolMax === undefined ? {} : { max: options.poolMax });
  return {
    ...database,
    name: dbName,
    async drop() {
      await database.close();
      await dropDatabase(url, dbName);
      await dropDatabase(url, `${dbName}_sandbox`);
      await dropDatabase(url, `${dbName}_vault`);
    },
  };
}

export async function dropDatabase(url: string, dbName: string): Promise<void> {
  const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(dbName)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

const MIGRATIONS_DIR = join(import.meta.dirname, '..', '..', '..', 'migrations');

/** What migrate() installs, hashed: the migration files in order, and the edge guard. */
function schemaHash(): string {
  const h = createHash('sha256');
  for (const f of readdirSync(MIGRATIONS_DIR).sort()) h.update(f).update(readFileSync(join(MIGRATIONS_DIR, f)));
  return h.update(renderEdgeGuardSql()).digest('hex').slice(0, 16);
}

let template: Promise<string> | null = null;

/**
 * The name of a migrated template database for this schema, made when missing. Made under its
 * own name plus a random part and renamed when complete, so a half-made template (a worker killed
 * mid-migration) is never copied; two workers making it at once both finish, one rename wins.
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `switchyard_test_template_${schemaHash()}`;
    const admin = new pg.Client({ connectionString: withDatabase(databaseUrlFromEnv(), 'postgres') });
    await admin.connect();
    try {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount !== 0) return name;
      const building = `${name}_${randomBytes(4).toString('hex')}`;
      const url = withDatabase(databaseUrlFromEnv(), building);
      await ensureDatabase(url);
      await migrate(url);
      try {
        await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(building)} RENAME TO ${pg.escapeIdentifier(name)}`);
      } catch (err) {
        // Another worker's rename got there first (42P04: the name exists): use theirs.
        await dropDatabase(url, building);
        if ((err as { code?: unknown }).code !== '42P04') throw err;
      }
      return name;
    } finally {
      await admin.end();
    }
  })();
  return template;
}

async function createFromTemplate(url: string, dbName: string, templateName: string): Promise<void> {
  const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await admin.connect();
  try {
    // The copy needs the template to itself for a moment: another worker copying it at the same
    // instant is refused with 55006 ("being accessed by other users"), so try again shortly.
    for (let tryNo = 1; ; tryNo++) {
      try {
        await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(dbName)} TEMPLATE ${pg.escapeIdentifier(templateName)}`);
        return;
      } catch (err) {
        if ((err as { code?: unknown }).code !== '55006' || tryNo >= 50) throw err;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  } finally {
    await admin.end();
  }
}
