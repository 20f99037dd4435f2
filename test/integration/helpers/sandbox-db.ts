// Sandboxes started directly by a test get a sandbox database of their own (random name), dropped
// when the sandbox closes, so test files share no provider state and leave no database behind.

import { randomBytes } from 'node:crypto';
import { openSandboxDatabase } from '../../../src/sandboxes/shared/database.ts';
import type { SandboxDatabase } from '../../../src/sandboxes/shared/database.ts';
import { databaseUrlFromEnv, withDatabase } from '../../../src/store/database-url.ts';
import { dropDatabase } from './db.ts';

export interface TestSandboxDatabase extends SandboxDatabase {
  readonly name: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

export async function createSandboxTestDatabase(name: string): Promise<TestSandboxDatabase> {
  const safe = name.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 30);
  const dbName = `switchyard_test_${safe}_${randomBytes(4).toString('hex')}_sandbox`;
  const url = withDatabase(databaseUrlFromEnv(), dbName);
  const database = await openSandboxDatabase(url);
  return {
    ...database,
    name: dbName,
    async drop() {
      await database.close();
      await dropDatabase(url, dbName);
    },
  };
}

/** Starts a sandbox on a database of its own; closing the sandbox drops the database. */
export async function withOwnSandboxDatabase<T extends { close(): Promise<void> }>(name: string, start: (database: SandboxDatabase) => Promise<T>): Promise<T> {
  const database = await createSandboxTestDatabase(name);
  let sandbox: T;
  try {
    sandbox = await start(database);
  } catch (err) {
    await database.drop();
    throw err;
  }
  const close = sandbox.close.bind(sandbox);
  return Object.assign(sandbox, {
    close: async () => {
      await close();
      await database.drop();
    },
  });
}
