// The vault's own PostgreSQL database: never the gateway's, so a reader of the gateway's tables
// (or its backups) holds no card data. Created and migrated on first use, from src/pg-kit.

import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { createPool, databaseName, endPool, ensureDatabase, maskDatabaseUrl, runMigrations, sameDatabase, withDatabase } from '../pg-kit/index.ts';

export const VAULT_MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
export const VAULT_DATABASE_VARIABLE = 'VAULT_DATABASE_URL';

export class VaultDatabaseError extends Error {
  override readonly name = 'VaultDatabaseError';
}

/**
 * VAULT_DATABASE_URL, else the gateway's URL with `_vault` appended to the database name
 * (switchyard -> switchyard_vault). Refuses a URL that names the gateway's own database.
 */
export function vaultDatabaseUrl(gatewayUrl: string, env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env[VAULT_DATABASE_VARIABLE];
  const url = explicit !== undefined && explicit !== '' ? explicit : withDatabase(gatewayUrl, `${databaseName(gatewayUrl)}_vault`);
  if (sameDatabase(url, gatewayUrl)) {
    throw new VaultDatabaseError(`${VAULT_DATABASE_VARIABLE} ${maskDatabaseUrl(url)} names the gateway's own database: the vault needs a database of its own`);
  }
  return url;
}

export interface VaultDatabase {
  readonly url: string;
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

/** Creates the database when missing, applies the vault's migrations, opens the pool. */
export async function openVaultDatabase(url: string, options: { readonly poolMax?: number; readonly log?: (line: string) => void } = {}): Promise<VaultDatabase> {
  await ensureDatabase(url);
  await runMigrations(url, { dir: VAULT_MIGRATIONS_DIR });
  const log = options.log ?? (() => undefined);
  const pool = createPool(url, { max: options.poolMax ?? 5, onConnectionError: (e) => log(`vault postgres: ${e.message}`) });
  return { url, pool, close: () => endPool(pool) };
}
