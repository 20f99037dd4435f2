// What a gateway process checks about the vault before it serves, in two steps: the keys (before
// it listens: a development key is refused next to a live provider account), then the stored
// records (after the database is reachable: the key set must open them). A vault database that does
// not exist yet holds nothing to check, and is not created here: the process that first stores a
// card creates it. A process using a vault process (SWITCHYARD_VAULT_URL) checks neither: the vault does.

import { databaseExists } from '../pg-kit/index.ts';
import { openVaultDatabase, vaultDatabaseUrl } from './database.ts';
import { developmentKeyProblem, loadVaultKeys } from './dev-key.ts';
import { createVaultClient } from './client.ts';
import type { VaultClientSettings } from './client.ts';
import { VAULT_KEYS_VARIABLE, VaultKeyError } from './keys.ts';
import type { VaultKeySet } from './keys.ts';

export interface VaultStartOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly devKeyFile?: string;
  readonly log?: (line: string) => void;
}

export async function vaultKeysForStart(liveAccounts: readonly string[], o: VaultStartOptions = {}): Promise<VaultKeySet> {
  const keySet = await loadVaultKeys({ ...(o.env === undefined ? {} : { env: o.env }), ...(o.devKeyFile === undefined ? {} : { devKeyFile: o.devKeyFile }), ...(o.log === undefined ? {} : { log: o.log }) });
  const problem = developmentKeyProblem(keySet.source, liveAccounts);
  if (problem !== null) throw new VaultKeyError(problem);
  return keySet;
}

/** Refuses (VaultKeyError, naming the variable) a key set that cannot open the stored records. */
export async function checkVaultRecordsForStart(gatewayDatabaseUrl: string, keySet: VaultKeySet, o: VaultStartOptions = {}): Promise<'checked' | 'no_vault_database'> {
  const url = vaultDatabaseUrl(gatewayDatabaseUrl, o.env ?? process.env);
  if (!(await databaseExists(url))) return 'no_vault_database';
  const database = await openVaultDatabase(url, { poolMax: 1, ...(o.log === undefined ? {} : { log: o.log }) });
  try {
    // Loaded here: the encryption SDK costs a few hundred ms to load, and only a process with stored cards needs it now.
    const { createVault } = await import('./vault.ts');
    await createVault(database.pool, keySet);
  } finally {
    await database.close();
  }
  return 'checked';
}

/**
 * With SWITCHYARD_VAULT_URL the keys and records are the vault process's to check (it does at its
 * own start); this process asks it which keys it runs on when a live provider is configured here,
 * and refuses a vault on the development key, as it would refuse its own. Unreachable: thrown as
 * VaultUnavailableError, which a start waits out.
 */
export async function checkRemoteVaultForStart(settings: VaultClientSettings, liveAccounts: readonly string[]): Promise<'checked' | 'not_needed'> {
  if (liveAccounts.length === 0) return 'not_needed';
  const health = await createVaultClient(settings).health();
  if (health.keys === 'development') {
    throw new VaultKeyError(`connector account${liveAccounts.length === 1 ? '' : 's'} ${liveAccounts.join(', ')} reach${liveAccounts.length === 1 ? 'es' : ''} a live provider, and the vault at ${settings.url} runs on its development key: set ${VAULT_KEYS_VARIABLE} on the vault's host`);
  }
  return 'checked';
}
