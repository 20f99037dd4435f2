// `switchyard start --role vault`: the card vault as a process of its own, so stored card data and
// its keys can live on a host of their own. It opens the embedded vault (its database, its keys
// checked against the stored records, the hourly code sweep) and serves its interface on an
// internal port behind SWITCHYARD_VAULT_TOKEN. It needs neither Redis nor the gateway's database,
// and runs no API or worker part; the gateway processes use it through SWITCHYARD_VAULT_URL.

import { stopOnTermSignals } from './stop-signals.ts';
import { maskDatabaseUrl } from '../store/database-url.ts';
import { openVault } from '../vault/index.ts';
import type { OpenedVault } from '../vault/index.ts';
import { loadVaultKeys } from '../vault/dev-key.ts';
import { VAULT_KEYS_VARIABLE, VaultKeyError } from '../vault/keys.ts';
import type { VaultKeySource } from '../vault/keys.ts';
import { createVaultApp, listenVault } from '../vault/server.ts';
import { VAULT_PREVIOUS_TOKEN_VARIABLE, VAULT_TOKEN_VARIABLE, vaultTokenProblem } from '../vault/service-token.ts';
import { retryStart } from './start-retry.ts';
import { parsePort, SettingsError, settingsFromEnv } from './settings.ts';

export const DEFAULT_VAULT_PORT = 8089;
export const VAULT_ALLOW_DEV_KEY_VARIABLE = 'SWITCHYARD_VAULT_ALLOW_DEV_KEY';

export interface VaultRoleSettings {
  /** The current token, then the previous one while a rotation is under way. */
  readonly tokens: readonly [string, ...string[]];
  readonly host: string;
  readonly port: number;
  readonly allowDevelopmentKey: boolean;
}

/** The role's own settings; a missing or weak token refuses the start, naming the variable. */
export function vaultRoleSettingsFromEnv(env: NodeJS.ProcessEnv, port?: number): VaultRoleSettings {
  const token = env[VAULT_TOKEN_VARIABLE];
  const problem = vaultTokenProblem(token, 'switchyard start --role vault');
  if (problem !== null) throw new SettingsError(problem);
  const previous = env[VAULT_PREVIOUS_TOKEN_VARIABLE];
  const previousProblem = previous === undefined || previous === '' ? null : vaultTokenProblem(previous, '', VAULT_PREVIOUS_TOKEN_VARIABLE);
  if (previousProblem !== null) throw new SettingsError(previousProblem);
  const portText = env['SWITCHYARD_VAULT_PORT'];
  const host = env['SWITCHYARD_VAULT_HOST'];
  const allow = env[VAULT_ALLOW_DEV_KEY_VARIABLE];
  if (allow !== undefined && allow !== '' && allow !== 'true' && allow !== 'false') throw new SettingsError(`${VAULT_ALLOW_DEV_KEY_VARIABLE} must be true or false`);
  return {
    tokens: previous === undefined || previous === '' ? [token!] : [token!, previous],
    host: host === undefined || host === '' ? '127.0.0.1' : host,
    port: port ?? (portText === undefined || portText === '' ? DEFAULT_VAULT_PORT : parsePort(portText, 'SWITCHYARD_VAULT_PORT')),
    allowDevelopmentKey: allow === 'true',
  };
}

/**
 * The vault process serves gateways whose connector accounts it does not see, so it cannot tell
 * whether a live provider is behind them: it runs on the development key only when told to. (A
 * gateway with a live account refuses a vault that reports the development key, at its start.)
 */
export function vaultRoleKeyProblem(source: VaultKeySource, allowDevelopmentKey: boolean): string | null {
  if (source.kind !== 'development_file' || allowDevelopmentKey) return null;
  return `switchyard start --role vault would use the development key in ${source.path}: set ${VAULT_KEYS_VARIABLE} (name:base64 of 32 random bytes), or ${VAULT_ALLOW_DEV_KEY_VARIABLE}=true for a setup without live providers`;
}

export interface RunningVault {
  readonly url: string;
  readonly vault: OpenedVault;
  stop(): Promise<void>;
}

export async function startVaultRole(o: { readonly port?: number; readonly print: (line: string) => void; readonly log: (line: string) => void; readonly env?: NodeJS.ProcessEnv }): Promise<RunningVault> {
  const env = o.env ?? process.env;
  const role = vaultRoleSettingsFromEnv(env, o.port);
  // DATABASE_URL names where `<db>_vault` lives unless VAULT_DATABASE_URL is set; nothing connects to the gateway's database.
  const { databaseUrl, startTimeoutMs } = settingsFromEnv(env);
  const keys = await loadVaultKeys({ env });
  const refused = vaultRoleKeyProblem(keys.source, role.allowDevelopmentKey);
  if (refused !== null) throw new VaultKeyError(refused);
  // Opening checks that the key set opens the stored records (a refusal names the variable) and starts the code sweep.
  const vault = await retryStart('PostgreSQL (vault)', () => openVault({ gatewayDatabaseUrl: databaseUrl, env, log: o.log }), { startedAt: Date.now(), timeoutMs: startTimeoutMs, log: o.log });
  let listener;
  try {
    const app = createVaultApp(vault, {
      tokens: role.tokens,
      keys: vault.keySet.source.kind === 'development_file' ? 'development' : 'configured',
      ping: async () => {
        await vault.parts.pool.query('SELECT 1');
      },
      log: o.log,
    });
    listener = await listenVault(app, role.host, role.port);
  } catch (err) {
    await vault.close();
    throw err;
  }
  o.print(`Switchyard vault listening on ${listener.url} (database ${maskDatabaseUrl(vault.databaseUrl)}; keys: ${vault.keySet.source.kind === 'development_file' ? 'the development key' : VAULT_KEYS_VARIABLE})`);
  let stopping: Promise<void> | null = null;
  return {
    url: listener.url,
    vault,
    stop() {
      stopping ??= (async () => {
        await listener.close();
        await vault.close();
      })();
      return stopping;
    },
  };
}

/** SIGTERM/SIGINT stop the vault once (requests in flight finish); a second signal exits at once. */
export function stopVaultOnSignals(running: RunningVault, print: (line: string) => void): void {
  stopOnTermSignals(() => running.stop(), print);
  print(`pid ${process.pid}: SIGTERM or SIGINT stops the vault gracefully`);
}
