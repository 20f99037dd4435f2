// Without SWITCHYARD_VAULT_KEYS a development key is kept in a git-ignored file of the checkout
// (.data/vault/dev.key), so `npm start` needs no setting and every process of the checkout shares
// it. It is never written to a database. The gateway refuses it next to a live provider account.

import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseVaultKeys, VAULT_KEYS_VARIABLE, VaultKeyError } from './keys.ts';
import type { VaultKeySet, VaultKeySource } from './keys.ts';

export const DEFAULT_DEV_KEY_FILE = join(fileURLToPath(new URL('../../', import.meta.url)), '.data', 'vault', 'dev.key');

export interface LoadVaultKeysOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly devKeyFile?: string;
  readonly log?: (line: string) => void;
}

/** SWITCHYARD_VAULT_KEYS when set; else the development key file, made on first use. */
export async function loadVaultKeys(options: LoadVaultKeysOptions = {}): Promise<VaultKeySet> {
  const env = options.env ?? process.env;
  const configured = env[VAULT_KEYS_VARIABLE];
  if (configured !== undefined && configured !== '') {
    const parsed = parseVaultKeys(configured);
    if (!parsed.ok) throw new VaultKeyError(parsed.problem);
    return { keys: parsed.keys, source: { kind: 'environment' } };
  }
  const path = options.devKeyFile ?? DEFAULT_DEV_KEY_FILE;
  const line = await readOrCreateDevKey(path);
  const parsed = parseVaultKeys(line, path);
  if (!parsed.ok) throw new VaultKeyError(`${parsed.problem} (delete the file to make a new development key, or set ${VAULT_KEYS_VARIABLE})`);
  options.log?.(developmentKeyWarning(path));
  return { keys: parsed.keys, source: { kind: 'development_file', path } };
}

async function readOrCreateDevKey(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ENOENT') throw err;
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const line = `dev:${randomBytes(32).toString('base64')}`;
  // Written whole under a name of its own, then linked into place: link() fails when the file
  // exists, so of two processes starting together one key wins, and nobody reads a half-written file.
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(draft, `${line}\n`, { flag: 'wx', mode: 0o600 });
  try {
    await link(draft, path);
    return line;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'EEXIST') throw err;
    return (await readFile(path, 'utf8')).trim();
  } finally {
    await unlink(draft).catch(() => undefined);
  }
}

/** A development key must not guard real cards: refused while any connector account reaches a live provider. */
export function developmentKeyProblem(source: VaultKeySource, liveAccounts: readonly string[]): string | null {
  if (source.kind !== 'development_file' || liveAccounts.length === 0) return null;
  return `connector account${liveAccounts.length === 1 ? '' : 's'} ${liveAccounts.join(', ')} reach${liveAccounts.length === 1 ? 'es' : ''} a live provider, and the vault would use the development key in ${source.path}: set ${VAULT_KEYS_VARIABLE} (name:base64 of 32 random bytes)`;
}

export function developmentKeyWarning(path: string): string {
  return `vault: ${VAULT_KEYS_VARIABLE} is not set; using the development key in ${path} (never for live providers)`;
}
