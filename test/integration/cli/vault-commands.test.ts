// switchyard vault check | rotate | access-log through the launcher, on a vault database of its own.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import type { CliResult } from '../helpers/cli.ts';
import { createVaultTestDatabase } from '../helpers/vault-db.ts';
import type { TestVaultDatabase } from '../helpers/vault-db.ts';
import type { VaultKey } from '../../../src/vault/keys.ts';

const entry = (k: VaultKey): string => `${k.name}:${Buffer.from(k.bytes).toString('base64')}`;

describe('switchyard vault', () => {
  let t: TestVaultDatabase;
  const k1: VaultKey = { name: 'k1', bytes: new Uint8Array(randomBytes(32)) };
  const k2: VaultKey = { name: 'k2', bytes: new Uint8Array(randomBytes(32)) };
  const ids: string[] = [];

  beforeAll(async () => {
    t = await createVaultTestDatabase('cli_vault');
    const vault = await t.vault([k1]);
    for (const number of ['4242424242424242', '5555555555554444', '4000056655665556']) {
      const r = await vault.tokenize('mer_cli', { number, exp_month: 1, exp_year: 2040, cvc: '123' });
      if (!r.ok) throw new Error(r.field);
      ids.push(r.paymentMethod.id);
    }
    await vault.reveal(ids[0]!, { purpose: 'provider_call', attemptId: 'att_cli', process: 'worker@test:7' });
  });
  afterAll(async () => {
    await t.drop();
  });

  // DATABASE_URL names a gateway database that does not exist: the vault commands never touch it.
  const cli = (args: string[], keys: string): Promise<CliResult> => runCli(['vault', ...args], {
    DATABASE_URL: t.url.replace(/_vault$/, ''), VAULT_DATABASE_URL: t.url, SWITCHYARD_VAULT_KEYS: keys,
  });

  it('check passes on a healthy vault, and fails naming a swapped record', async () => {
    const ok = await cli(['check'], entry(k1));
    expect([ok.code, ok.stdout.trim()]).toEqual([0, 'vault ok: 3 card record(s) and 3 card code(s) open under their own context and match their fingerprints']);
    expect(ok.stderr).toContain('checked 3/3');

    await t.pool.query('UPDATE payment_methods SET pan_ciphertext = (SELECT pan_ciphertext FROM payment_methods WHERE id = $1) WHERE id = $2', [ids[0], ids[2]]);
    const bad = await cli(['check', '--json'], entry(k1));
    expect(bad.code).toBe(1);
    const body = JSON.parse(bad.stdout) as { ok: boolean; problems: { id: string; problem: string }[] };
    expect(body.ok).toBe(false);
    expect(body.problems.map((p) => [p.id, p.problem])).toEqual([[ids[2], 'context_mismatch']]);
    expect(bad.stderr).toContain(`${ids[2]!}\tcontext_mismatch\t`);
  });

  it('rotate re-seals under the first key and reports the swapped record it left; a key set without the old key is refused', async () => {
    const rotated = await cli(['rotate', '--batch-size', '1'], `${entry(k2)},${entry(k1)}`);
    expect(rotated.code).toBe(1);
    expect(rotated.stdout.trim()).toBe('rotated 2 card record(s) and 3 code key(s) to key "k2"');
    expect(rotated.stderr).toContain('rotating 3 card record(s) to key "k2"');
    expect(rotated.stderr).toContain(`1 record(s) could not be opened and stay under their old key (run switchyard vault check):\n${ids[2]!}\tcontext_mismatch`);

    // The swapped record is still under k1: a set without k1 cannot open it, and start says so.
    const refused = await cli(['check'], entry(k2));
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(/^SWITCHYARD_VAULT_KEYS cannot decrypt the vault's records: records are sealed under key "k1", which it does not hold/);
    const badKeys = await cli(['check'], 'k2:short');
    expect([badKeys.code, badKeys.stderr.trim()]).toEqual([1, 'SWITCHYARD_VAULT_KEYS entry 1 ("k2"): the key must be the base64 of exactly 32 random bytes (openssl rand -base64 32)']);
  });

  it('access-log lists every decrypt, newest first, filtered by payment method', async () => {
    const r = await cli(['access-log', '--payment-method', ids[0]!, '--json'], `${entry(k2)},${entry(k1)}`);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as { access_log: { payment_method: string; purpose: string; attempt_id: string | null; process: string; fields: string[] }[] };
    expect(body.access_log.map((e) => e.purpose)).toEqual(['vault_rotate', 'vault_check', 'vault_check', 'vault_check', 'vault_check', 'provider_call']);
    expect(body.access_log.at(-1)).toMatchObject({ payment_method: ids[0], attempt_id: 'att_cli', process: 'worker@test:7', fields: ['pan', 'cvc'] });
    expect(body.access_log[0]!.process).toMatch(/^cli:vault-rotate@.+:\d+$/);
    const text = await cli(['access-log', '--limit', '2'], `${entry(k2)},${entry(k1)}`);
    expect(text.stdout.split('\n')[0]).toBe('2 vault access(es), newest first');
    const bad = await cli(['access-log', '--since', 'soon'], entry(k1));
    expect([bad.code, bad.stderr.trim()]).toEqual([1, '--since "soon" is not a duration such as 90m, 24h or 7d']);
  });
});
