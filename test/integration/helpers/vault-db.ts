// A vault on a database of its own (random name), for tests that drive the vault directly: opened
// with the given keys and clock, dropped afterwards.

import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { databaseUrlFromEnv, withDatabase } from '../../../src/store/database-url.ts';
import { openVaultDatabase } from '../../../src/vault/database.ts';
import type { VaultKey, VaultKeySet } from '../../../src/vault/keys.ts';
import { createVault } from '../../../src/vault/vault.ts';
import type { Vault, VaultParts } from '../../../src/vault/vault.ts';
import { dropDatabase } from './db.ts';

export interface TestVaultDatabase {
  readonly name: string;
  readonly url: string;
  readonly pool: pg.Pool;
  /** A vault over this database with these keys (checked against the records, as at start). */
  vault(keys: readonly [VaultKey, ...VaultKey[]], now?: () => Date): Promise<Vault & { readonly parts: VaultParts }>;
  drop(): Promise<void>;
}

export function vaultKey(name: string): VaultKey {
  return { name, bytes: new Uint8Array(randomBytes(32)) };
}

export function keySet(...keys: [VaultKey, ...VaultKey[]]): VaultKeySet {
  return { keys, source: { kind: 'environment' } };
}

export async function createVaultTestDatabase(name: string): Promise<TestVaultDatabase> {
  const safe = name.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 30);
  const dbName = `switchyard_test_${safe}_${randomBytes(4).toString('hex')}_vault`;
  const url = withDatabase(databaseUrlFromEnv(), dbName);
  const database = await openVaultDatabase(url, { poolMax: 4 });
  return {
    name: dbName,
    url,
    pool: database.pool,
    vault: (keys, now) => createVault(database.pool, { keys, source: { kind: 'environment' } }, now),
    async drop() {
      await database.close();
      await dropDatabase(url, dbName);
    },
  };
}
