// Each integration test file gets its own database, so files run in parallel and leave nothing behind.
// `createTestDatabase('store_migrate')` -> switchyard_test_store_migrate_<random>, migrated unless told not to.
// drop() also drops <name>_sandbox, the sandbox database a gateway on this database creates on first use.

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { databaseUrlFromEnv, withDatabase } from '../../../src/store/database-url.ts';
import { createDatabase } from '../../../src/store/db.ts';
import type { Database } from '../../../src/store/db.ts';
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
  await ensureDatabase(url);
  if (options.migrate !== false) await migrate(url);
  const database = createDatabase(url, options.poolMax === undefined ? {} : { max: options.poolMax });
  return {
    ...database,
    name: dbName,
    async drop() {
      await database.close();
      await dropDatabase(url, dbName);
      await dropDatabase(url, `${dbName}_sandbox`);
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
