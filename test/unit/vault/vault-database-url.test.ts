// Where the vault keeps its records: the gateway's database name + _vault by default, or
// VAULT_DATABASE_URL, and never the gateway's own database.

import { describe, expect, it } from 'vitest';
import { VaultDatabaseError, vaultDatabaseUrl } from '../../../src/vault/database.ts';

const gateway = 'postgres://postgres@127.0.0.1:5432/switchyard';

describe('vaultDatabaseUrl', () => {
  it('defaults to the gateway database name with _vault, same server and credentials', () => {
    expect(vaultDatabaseUrl(gateway, {})).toBe('postgres://postgres@127.0.0.1:5432/switchyard_vault');
    expect(vaultDatabaseUrl(gateway, { VAULT_DATABASE_URL: '' })).toBe('postgres://postgres@127.0.0.1:5432/switchyard_vault');
  });

  it('takes VAULT_DATABASE_URL, on another host too', () => {
    expect(vaultDatabaseUrl(gateway, { VAULT_DATABASE_URL: 'postgres://vault:pw@10.0.0.9/cards' })).toBe('postgres://vault:pw@10.0.0.9/cards');
  });

  it("refuses the gateway's own database, masking the password", () => {
    expect(() => vaultDatabaseUrl(gateway, { VAULT_DATABASE_URL: 'postgres://u:secret@127.0.0.1/switchyard' })).toThrow(VaultDatabaseError);
    expect(() => vaultDatabaseUrl(gateway, { VAULT_DATABASE_URL: 'postgres://u:secret@127.0.0.1/switchyard' })).toThrow(/VAULT_DATABASE_URL postgres:\/\/u:\*\*\*@127\.0\.0\.1\/switchyard names the gateway's own database/);
  });
});
