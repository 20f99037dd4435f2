// The database for one CLI command: opened, checked (an unreachable server becomes its one-line
// error rather than a failed query), handed over, closed. Loaded lazily, so commands that need no
// database do not load the driver.

import type { Database, Db } from '../store/db.ts';

export async function withDatabase<T>(url: string, run: (database: Database) => Promise<T>): Promise<T> {
  const { createDatabase } = await import('../store/db.ts');
  const { describeConnectError } = await import('../store/database-url.ts');
  const database = createDatabase(url, { max: 2 });
  try {
    await database.pool.query('SELECT 1').catch((err: unknown) => {
      throw describeConnectError(url, err);
    });
    return await run(database);
  } finally {
    await database.close();
  }
}

/** The same, for commands that only need the query builder. */
export function withDb<T>(url: string, run: (db: Db) => Promise<T>): Promise<T> {
  return withDatabase(url, (database) => run(database.db));
}
