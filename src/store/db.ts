// The PostgreSQL pool and the drizzle instance over it. One per process; the composition root
// creates it and passes it down.

import { drizzle } from 'drizzle-orm/node-postgres';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import { createPool, endPool } from '../pg-kit/pool.ts';
import type { PoolOptions } from '../pg-kit/pool.ts';
import { databaseUrlFromEnv } from './database-url.ts';
import * as schema from './schema.ts';

export type Db = NodePgDatabase<typeof schema>;
/** What a repository function accepts: the database or an open transaction. */
export type DbOrTx = Db | Parameters<Parameters<Db['transaction']>[0]>[0];

export interface Database {
  readonly url: string;
  readonly pool: pg.Pool;
  readonly db: Db;
  close(): Promise<void>;
}

export type DatabaseOptions = PoolOptions;

export function createDatabase(url: string = databaseUrlFromEnv(), options: DatabaseOptions = {}): Database {
  const pool = createPool(url, options);
  const db = drizzle({ client: pool, schema });
  return { url, pool, db, close: () => endPool(pool) };
}

export { createPool, endPool };
