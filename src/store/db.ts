// The PostgreSQL pool and the drizzle instance over it. One per process; the composition root
// creates it and passes it down.

import { drizzle } from 'drizzle-orm/node-postgres';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
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

export interface DatabaseOptions {
  readonly max?: number;
  /**
   * How long a caller waits for a pooled connection (default 10 s), and how long one statement may
   * run (default 30 s). Without them, in role `all` an API request waiting behind busy workers could
   * wait for ever, outlive its idempotency lease, and have its answer thrown away (issue 19).
   */
  readonly acquireTimeoutMs?: number;
  readonly statementTimeoutMs?: number;
  /** Connection-level errors (a backend terminated while idle); the pool drops that client itself. */
  readonly onConnectionError?: (err: Error) => void;
}

export function createPool(url: string, options: DatabaseOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url, max: options.max ?? 10,
    connectionTimeoutMillis: options.acquireTimeoutMs ?? 10_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
  });
  // A terminated backend (failover, pg_terminate_backend) makes its client emit 'error'; the
  // query in flight rejects on its own, and an unheard 'error' event would crash the process.
  const onError = options.onConnectionError ?? (() => undefined);
  pool.on('error', onError);
  pool.on('connect', (client) => {
    client.on('error', onError);
  });
  return pool;
}

export function createDatabase(url: string = databaseUrlFromEnv(), options: DatabaseOptions = {}): Database {
  const pool = createPool(url, options);
  const db = drizzle({ client: pool, schema });
  return { url, pool, db, close: () => endPool(pool) };
}

/**
 * Ends the pool, bounded: after connections were terminated under it (a failover, an admin
 * kill) pg's end() can wait forever on a dead client, and a shutdown must not hang.
 */
export async function endPool(pool: pg.Pool, timeoutMs = 5_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bounded = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  await Promise.race([pool.end().catch(() => undefined), bounded]);
  clearTimeout(timer);
}
