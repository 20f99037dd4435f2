// Rotation re-seals every record under the first key, in committed batches, so a stopped run
// resumes; the check proves every record opens under its own context and matches its fingerprint,
// and reports a swapped ciphertext; every decrypt is in the access log.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkVault, listAccessLog, rotateVault } from '../../../src/vault/maintenance.ts';
import type { VaultKey } from '../../../src/vault/keys.ts';
import { createVaultTestDatabase, vaultKey } from '../helpers/vault-db.ts';
import type { TestVaultDatabase } from '../helpers/vault-db.ts';

const clock = (): Date => new Date('2026-05-15T12:00:00Z');
const NUMBERS = ['4242424242424242', '5555555555554444', '378282246310005', '6011111111111117', '3566002020360505'];
const card = (number: string) => ({ number, exp_month: 12, exp_year: 2031, ...(number.startsWith('37') ? { cvc: '1234' } : { cvc: '737' }) });

describe('vault rotate and check', () => {
  let t: TestVaultDatabase;
  let k1: VaultKey;
  let k2: VaultKey;
  const ids: string[] = [];

  beforeAll(async () => {
    t = await createVaultTestDatabase('vault_maint');
    k1 = vaultKey('k1');
    k2 = vaultKey('k2');
    const vault = await t.vault([k1], clock);
    for (const n of NUMBERS) {
      const r = await vault.tokenize('mer_a', card(n));
      if (!r.ok) throw new Error(`tokenize ${r.field}`);
      ids.push(r.paymentMethod.id);
    }
  });
  afterAll(async () => {
    await t.drop();
  });

  const keyNames = async (): Promise<Record<string, number>> => {
    const r = await t.pool.query<{ key_name: string; n: number }>(
      `SELECT key_name, count(*)::int AS n FROM (SELECT key_name FROM payment_methods UNION ALL SELECT key_name FROM card_code_keys UNION ALL SELECT key_name FROM vault_secrets) k GROUP BY key_name`,
    );
    return Object.fromEntries(r.rows.map((row) => [row.key_name, row.n]));
  };

  it('checks a healthy vault: every record opens and matches', async () => {
    const vault = await t.vault([k1], clock);
    const r = await checkVault(vault.parts, { process: 'test:check' });
    expect(r).toEqual({ checked: 5, codesChecked: 5, problems: [] });
  });

  it('rotates in committed batches: a stopped run leaves a consistent mix, the next run finishes, the old key can go', async () => {
    const vault = await t.vault([k2, k1], clock);
    const lines: string[] = [];
    let batches = 0;
    // Stopped after the first batch of two: the progress callback throws, as a killed process would stop.
    await expect(rotateVault(vault.parts, { process: 'test:rotate', batchSize: 2, onProgress: (l) => {
      lines.push(l);
      if (l.startsWith('rotated') && ++batches === 1) throw new Error('stopped');
    } })).rejects.toThrow('stopped');
    expect(lines).toEqual(['rotating 5 card record(s) to key "k2"', 'rotated 2/5']);
    expect(await keyNames()).toEqual({ k1: 3 + 5, k2: 2 + 1 });
    // Here the fingerprint key opens under k2, and a k1 with other bytes is caught on the records themselves.
    await expect(t.vault([k2, vaultKey('k1')], clock)).rejects.toThrow(/SWITCHYARD_VAULT_KEYS cannot decrypt the vault's records: key "k1" does not open pmd_\w+ .*the key's bytes differ/);

    const progress: string[] = [];
    const r = await rotateVault(vault.parts, { process: 'test:rotate', batchSize: 2, onProgress: (l) => progress.push(l) });
    expect(r).toEqual({ toKey: 'k2', rotated: 3, codeKeysRotated: 5, failed: [] });
    expect(progress).toEqual(['rotating 3 card record(s) to key "k2"', 'rotated 2/3', 'rotated 3/3']);
    expect(await keyNames()).toEqual({ k2: 11 });

    // The old key removed: everything still opens, card and code.
    const onlyNew = await t.vault([k2], clock);
    expect(await checkVault(onlyNew.parts, { process: 'test:check' })).toEqual({ checked: 5, codesChecked: 5, problems: [] });
    const revealed = await onlyNew.reveal(ids[2]!, { purpose: 'provider_call', attemptId: 'att_r', process: 'test' });
    expect(revealed).toMatchObject({ number: NUMBERS[2], cvc: '1234' });
    // A run with nothing left to do is a no-op.
    expect(await rotateVault(onlyNew.parts, { process: 'test:rotate' })).toEqual({ toKey: 'k2', rotated: 0, codeKeysRotated: 0, failed: [] });
  });

  it('reports a ciphertext copied into another row, and a fingerprint that is not the number\'s', async () => {
    const vault = await t.vault([k2], clock);
    await t.pool.query('UPDATE payment_methods SET pan_ciphertext = (SELECT pan_ciphertext FROM payment_methods WHERE id = $1) WHERE id = $2', [ids[0], ids[1]]);
    await t.pool.query(`UPDATE payment_methods SET fingerprint = 'x' || substr(fingerprint, 2) WHERE id = $1`, [ids[3]]);
    const r = await checkVault(vault.parts, { process: 'test:check' });
    expect(r.problems).toEqual([
      { id: ids[1], problem: 'context_mismatch', detail: expect.stringContaining(`belongs to field=pan merchant=mer_a payment_method=${ids[0]!}`) as unknown },
      { id: ids[3], problem: 'fingerprint_mismatch', detail: "the stored fingerprint is not the number's" },
    ].sort((a, b) => a.id!.localeCompare(b.id!)));
    // Rotation leaves the swapped record alone and says so.
    const k3 = vaultKey('k3');
    const rotated = await rotateVault((await t.vault([k3, k2], clock)).parts, { process: 'test:rotate' });
    expect(rotated.failed.map((f) => [f.id, f.problem])).toEqual([[ids[1], 'context_mismatch']]);
    expect(rotated.rotated).toBe(4);
  });

  it('records every decrypt of maintenance and reveals in the access log, newest first', async () => {
    const all = await listAccessLog(t.pool, { limit: 1000 });
    expect(all[0]!.id).toBeGreaterThan(all[all.length - 1]!.id);
    const mine = await listAccessLog(t.pool, { paymentMethodId: ids[2]!, limit: 1000 });
    expect(new Set(mine.map((e) => e.purpose))).toEqual(new Set(['vault_check', 'vault_rotate', 'provider_call']));
    expect(mine.find((e) => e.purpose === 'provider_call')).toMatchObject({ attemptId: 'att_r', process: 'test', fields: ['pan', 'cvc'] });
    expect(mine.filter((e) => e.purpose === 'vault_rotate').every((e) => e.attemptId === null && e.process === 'test:rotate')).toBe(true);
  });
});
