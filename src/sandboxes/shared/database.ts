// The sandbox's own PostgreSQL database and pool. It is never the gateway's database: the provider
// and the gateway are separate failure domains, so terminating the gateway's backends or dropping
// its database leaves the provider's state alone. Created and migrated on first use.

import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPool, databaseName, endPool, ensureDatabase, maskDatabaseUrl, runMigrations, sameDatabase, withDatabase } from '../../pg-kit/index.ts';

export const SANDBOX_MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** Channel the write path notifies (payload: the account) when it stored webhook events. */
export const EVENTS_CHANNEL = 'sandbox_events';

export class SandboxDatabaseError extends Error {
  override readonly name = 'SandboxDatabaseError';
}

/**
 * SANDBOX_DATABASE_URL, else the gateway's URL with `_sandbox` appended to the database name
 * (switchyard -> switchyard_sandbox). Refuses a URL that names the gateway's own database.
 */
export function sandboxDatabaseUrl(gatewayUrl: string, env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['SANDBOX_DATABASE_URL'];
  const url = explicit !== undefined && explicit !== '' ? explicit : withDatabase(gatewayUrl, `${databaseName(gatewayUrl)}_sandbox`);
  if (sameDatabase(url, gatewayUrl)) {
    throw new SandboxDatabaseError(`SANDBOX_DATABASE_URL ${maskDatabaseUrl(url)} names the gateway's own database: the sandbox needs a database of its own`);
  }
  return url;
}

export interface SandboxDatabase {
  readonly url: string;
  readonly pool: pg.Pool;
  /** Calls `onEvents` whenever another (or this) process stored webhook events for `account`. */
  onEvents(account: string, onEvents: () => void): () => void;
  close(): Promise<void>;
}

export interface SandboxDatabaseOptions {
  readonly poolMax?: number;
  readonly log?: (line: string) => void;
}

/** Creates the database when missing, applies the sandbox migrations, opens the pool. */
export async function openSandboxDatabase(url: string, options: SandboxDatabaseOptions = {}): Promise<SandboxDatabase> {
  await ensureDatabase(url);
  await runMigrations(url, { dir: SANDBOX_MIGRATIONS_DIR });
  const log = options.log ?? (() => undefined);
  const pool = createPool(url, { max: options.poolMax ?? 10, onConnectionError: (e) => log(`sandbox postgres: ${e.message}`) });
  const listeners = new Map<string, Set<() => void>>();
  let listenClient: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  // One LISTEN connection per process wakes the dispatchers; they also poll, so a lost
  // connection only slows deliveries down until it is back.
  const listen = async (): Promise<void> => {
    if (closed || listenClient !== null || listeners.size === 0) return;
    const client = new pg.Client({ connectionString: url });
    listenClient = client;
    const reconnect = (): void => {
      if (listenClient === client) listenClient = null;
      client.end().catch(() => undefined);
      if (!closed) {
        clearTimeout(retry);
        retry = setTimeout(() => void listen(), 1_000);
        retry.unref();
      }
    };
    client.on('error', reconnect);
    client.on('notification', (n) => {
      for (const cb of listeners.get(n.payload ?? '') ?? []) cb();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch {
      reconnect();
    }
  };

  return {
    url,
    pool,
    onEvents(account, cb) {
      let set = listeners.get(account);
      if (set === undefined) listeners.set(account, (set = new Set()));
      set.add(cb);
      void listen();
      return () => {
        set.delete(cb);
      };
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const client = listenClient;
      listenClient = null;
      await client?.end().catch(() => undefined);
      await endPool(pool);
    },
  };
}
