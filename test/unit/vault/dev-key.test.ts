// Without SWITCHYARD_VAULT_KEYS: a development key in a local file, made once, shared by the
// checkout's processes, and refused next to a live provider account.

import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { developmentKeyProblem, loadVaultKeys } from '../../../src/vault/dev-key.ts';
import { VaultKeyError } from '../../../src/vault/keys.ts';

describe('loadVaultKeys', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-vault-key-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('makes a development key file (owner-only) once, warns, and every later load reads the same key', async () => {
    const file = join(dir, 'vault', 'dev.key');
    const lines: string[] = [];
    const first = await loadVaultKeys({ env: {}, devKeyFile: file, log: (l) => lines.push(l) });
    expect(first.source).toEqual({ kind: 'development_file', path: file });
    expect(first.keys[0].name).toBe('dev');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(lines.join('\n')).toMatch(/SWITCHYARD_VAULT_KEYS is not set; using the development key in .*dev\.key \(never for live providers\)/);
    const again = await loadVaultKeys({ env: {}, devKeyFile: file });
    expect(Buffer.from(again.keys[0].bytes)).toEqual(Buffer.from(first.keys[0].bytes));
  });

  it('gives processes starting together one key', async () => {
    const file = join(dir, 'dev.key');
    const sets = await Promise.all(Array.from({ length: 8 }, () => loadVaultKeys({ env: {}, devKeyFile: file })));
    const distinct = new Set(sets.map((s) => Buffer.from(s.keys[0].bytes).toString('hex')));
    expect(distinct.size).toBe(1);
    expect((await readFile(file, 'utf8')).trim()).toMatch(/^dev:[A-Za-z0-9+/]{43}=$/);
  });

  it('takes SWITCHYARD_VAULT_KEYS when set, and makes no file', async () => {
    const file = join(dir, 'dev.key');
    const set = await loadVaultKeys({ env: { SWITCHYARD_VAULT_KEYS: `main:${randomBytes(32).toString('base64')}` }, devKeyFile: file });
    expect(set.source).toEqual({ kind: 'environment' });
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
    await expect(loadVaultKeys({ env: { SWITCHYARD_VAULT_KEYS: 'main:short' } })).rejects.toThrow(VaultKeyError);
  });

  it('refuses a damaged development key file, saying what to do', async () => {
    const file = join(dir, 'dev.key');
    await writeFile(file, 'dev:nope\n');
    await expect(loadVaultKeys({ env: {}, devKeyFile: file })).rejects.toThrow(/delete the file to make a new development key, or set SWITCHYARD_VAULT_KEYS/);
  });
});

describe('developmentKeyProblem', () => {
  it('refuses the development key while any account reaches a live provider, naming the variable', () => {
    const dev = { kind: 'development_file', path: '/x/.data/vault/dev.key' } as const;
    expect(developmentKeyProblem(dev, [])).toBeNull();
    expect(developmentKeyProblem({ kind: 'environment' }, ['stripe_live'])).toBeNull();
    expect(developmentKeyProblem(dev, ['stripe_live'])).toMatch(/connector account stripe_live reaches a live provider.*set SWITCHYARD_VAULT_KEYS/);
  });
});
