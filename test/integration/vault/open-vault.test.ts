// The embedded vault as a gateway process opens it: `<db>_vault` beside the gateway's database,
// the development key file when SWITCHYARD_VAULT_KEYS is unset, and a refusal naming the variable
// when the key at hand cannot open what is stored.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrlFromEnv, withDatabase } from '../../../src/store/database-url.ts';
import { openVault, VaultKeyError } from '../../../src/vault/index.ts';
import { checkVaultRecordsForStart } from '../../../src/vault/gateway-start.ts';
import { parseVaultKeys } from '../../../src/vault/keys.ts';
import { dropDatabase } from '../helpers/db.ts';

describe('openVault', () => {
  const gatewayDb = `switchyard_test_open_vault_${randomBytes(4).toString('hex')}`;
  const gatewayUrl = withDatabase(databaseUrlFromEnv(), gatewayDb);
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-open-vault-'));
  });
  afterAll(async () => {
    await dropDatabase(gatewayUrl, `${gatewayDb}_vault`);
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps its records in <db>_vault with the development key, and refuses another key for them', async () => {
    const devKeyFile = join(dir, 'dev.key');
    const lines: string[] = [];
    const vault = await openVault({ gatewayDatabaseUrl: gatewayUrl, env: {}, devKeyFile, log: (l) => lines.push(l), sweepEveryMs: 0 });
    try {
      expect(vault.databaseUrl).toBe(withDatabase(gatewayUrl, `${gatewayDb}_vault`));
      expect(vault.keySet.source).toEqual({ kind: 'development_file', path: devKeyFile });
      expect(lines.some((l) => l.includes('SWITCHYARD_VAULT_KEYS is not set'))).toBe(true);
      expect((await vault.tokenize('mer_a', { number: '4242424242424242', exp_month: 1, exp_year: 2040 })).ok).toBe(true);
    } finally {
      await vault.close();
    }
    // The gateway's own database was not touched: the vault never writes there.
    const admin = new pg.Client({ connectionString: withDatabase(gatewayUrl, 'postgres') });
    await admin.connect();
    const found = await admin.query('SELECT datname FROM pg_database WHERE datname = $1', [gatewayDb]);
    await admin.end();
    expect(found.rowCount).toBe(0);

    const other = `other:${randomBytes(32).toString('base64')}`;
    const refused = openVault({ gatewayDatabaseUrl: gatewayUrl, env: { SWITCHYARD_VAULT_KEYS: other }, sweepEveryMs: 0 });
    await expect(refused).rejects.toThrow(VaultKeyError);
    await expect(openVault({ gatewayDatabaseUrl: gatewayUrl, env: { SWITCHYARD_VAULT_KEYS: other }, sweepEveryMs: 0 })).rejects.toThrow(/SWITCHYARD_VAULT_KEYS cannot decrypt the vault's records/);
    // A new development key file (the old one lost) is refused, naming the file and the variable.
    await expect(openVault({ gatewayDatabaseUrl: gatewayUrl, env: {}, devKeyFile: join(dir, 'new.key'), sweepEveryMs: 0 })).rejects.toThrow(/the development key in .*new\.key \(SWITCHYARD_VAULT_KEYS is not set\) cannot decrypt/);
  });

  it('at gateway start: checks the stored records against the key set, and creates no vault database when there is none', async () => {
    const keys = (value: string) => {
      const p = parseVaultKeys(value);
      if (!p.ok) throw new Error(p.problem);
      return { keys: p.keys, source: { kind: 'environment' } } as const;
    };
    const other = keys(`other:${randomBytes(32).toString('base64')}`);
    await expect(checkVaultRecordsForStart(gatewayUrl, other, { env: {} })).rejects.toThrow(/SWITCHYARD_VAULT_KEYS cannot decrypt the vault's records: .*sealed under key "dev"/);
    const { readFile } = await import('node:fs/promises');
    const dev = keys((await readFile(join(dir, 'dev.key'), 'utf8')).trim());
    expect(await checkVaultRecordsForStart(gatewayUrl, dev, { env: {} })).toBe('checked');

    const fresh = withDatabase(databaseUrlFromEnv(), `switchyard_test_no_vault_${randomBytes(4).toString('hex')}`);
    expect(await checkVaultRecordsForStart(fresh, other, { env: {} })).toBe('no_vault_database');
    const admin = new pg.Client({ connectionString: withDatabase(fresh, 'postgres') });
    await admin.connect();
    const created = await admin.query("SELECT datname FROM pg_database WHERE datname LIKE 'switchyard_test_no_vault_%'");
    await admin.end();
    expect(created.rowCount).toBe(0);
  });
});
