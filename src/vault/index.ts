// The embedded vault: its keys (SWITCHYARD_VAULT_KEYS or the development key file), its own
// database, the checks before it serves, and the sweep that destroys card codes after an hour.

import { loadVaultKeys } from './dev-key.ts';
import { openVaultDatabase, vaultDatabaseUrl } from './database.ts';
import type { VaultKeySet } from './keys.ts';
import { createVault } from './vault.ts';
import type { Vault, VaultParts } from './vault.ts';

export type { CardBrand, CardField, CardInput } from './card-checks.ts';
export { VaultContextMismatchError, VaultDecryptError } from './envelope.ts';
export { VAULT_KEYS_VARIABLE, VaultKeyError } from './keys.ts';
export type { VaultKeySet, VaultKeySource } from './keys.ts';
export { developmentKeyProblem } from './dev-key.ts';
export { CODE_LIFETIME_MS } from './vault.ts';
export type { PaymentMethod, RevealAccess, RevealedCard, TokenizeResult, Vault } from './vault.ts';

export interface OpenVaultOptions {
  /** The gateway's DATABASE_URL: the vault's defaults to the same server, database `<name>_vault`. */
  readonly gatewayDatabaseUrl: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly devKeyFile?: string;
  readonly now?: () => Date;
  readonly log?: (line: string) => void;
  /** How often expired card codes are destroyed (default 60 s; 0: never, the caller sweeps). */
  readonly sweepEveryMs?: number;
  readonly poolMax?: number;
}

export interface OpenedVault extends Vault {
  readonly keySet: VaultKeySet;
  readonly databaseUrl: string;
  readonly parts: VaultParts;
  close(): Promise<void>;
}

export async function openVault(o: OpenVaultOptions): Promise<OpenedVault> {
  const env = o.env ?? process.env;
  const url = vaultDatabaseUrl(o.gatewayDatabaseUrl, env);
  const keySet = await loadVaultKeys({ env, ...(o.devKeyFile === undefined ? {} : { devKeyFile: o.devKeyFile }), ...(o.log === undefined ? {} : { log: o.log }) });
  const database = await openVaultDatabase(url, { ...(o.poolMax === undefined ? {} : { poolMax: o.poolMax }), ...(o.log === undefined ? {} : { log: o.log }) });
  let vault;
  try {
    vault = await createVault(database.pool, keySet, o.now);
  } catch (err) {
    await database.close();
    throw err;
  }
  const every = o.sweepEveryMs ?? 60_000;
  const timer = every > 0 ? setInterval(() => {
    vault.sweepCodes().catch((err: unknown) => o.log?.(`vault: code sweep failed: ${(err as Error).message}`));
  }, every) : undefined;
  timer?.unref();
  return {
    ...vault,
    keySet,
    databaseUrl: url,
    async close() {
      clearInterval(timer);
      await database.close();
    },
  };
}
