// A pg pool with the timeouts and error handling every room's database needs, and a bounded end.

import pg from 'pg';

export interface PoolOptions {
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

export function createPool(url: string, options: PoolOptions = {}): pg.Pool {
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
