// The vault on its own PostgreSQL database: what tokenize stores (nothing in the clear), what a bad
// card leaves (nothing), reveal for one purpose with its access-log row, a ciphertext copied into
// another row refused, the card code destroyed at the first response or after an hour, and a key
// set that cannot open the stored records refused at start.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VaultContextMismatchError } from '../../../src/vault/envelope.ts';
import { VaultKeyError } from '../../../src/vault/keys.ts';
import type { VaultKey } from '../../../src/vault/keys.ts';
import { CODE_LIFETIME_MS } from '../../../src/vault/vault.ts';
import type { Vault } from '../../../src/vault/vault.ts';
import { createVaultTestDatabase, vaultKey } from '../helpers/vault-db.ts';
import type { TestVaultDatabase } from '../helpers/vault-db.ts';

const VISA = '4242424242424242';
const card = { number: VISA, exp_month: 12, exp_year: 2031, cvc: '737', holder_name: 'Ada Lovelace' };
const access = { purpose: 'provider_call', attemptId: 'att_1', process: 'worker@test:1' } as const;

/** Every byte of every vault table, as text, hex and escape form: where a number in the clear would show. */
async function dump(t: TestVaultDatabase): Promise<string> {
  const tables = ['payment_methods', 'card_codes', 'card_code_keys', 'access_log', 'vault_secrets'];
  const parts = await Promise.all(tables.map((name) => t.pool.query(`SELECT t::text AS row FROM ${name} t`)));
  return parts.flatMap((r) => r.rows.map((row: { row: string }) => row.row)).join('\n');
}

describe('vault', () => {
  let t: TestVaultDatabase;
  let key: VaultKey;
  let clock = new Date('2026-05-15T12:00:00Z');
  let vault: Vault;

  beforeAll(async () => {
    t = await createVaultTestDatabase('vault');
    key = vaultKey('k1');
    vault = await t.vault([key], () => clock);
  });
  afterAll(async () => {
    await t.drop();
  });

  it('tokenizes: a pmd_ id, brand, last 4, expiry, fingerprint; the number and code stored only sealed', async () => {
    const r = await vault.tokenize('mer_a', card);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.paymentMethod).toMatchObject({ merchantId: 'mer_a', brand: 'visa', last4: '4242', expMonth: 12, expYear: 2031 });
    expect(r.paymentMethod.id).toMatch(/^pmd_[0-9a-z]{26}$/);
    expect(r.paymentMethod.fingerprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const everything = await dump(t);
    const hex = (s: string): string => Buffer.from(s).toString('hex');
    for (const secret of [VISA, hex(VISA), 'Ada Lovelace', hex('Ada Lovelace'), '"737"', hex('737')]) expect(everything).not.toContain(secret);
    expect(await vault.describe('mer_a', r.paymentMethod.id)).toEqual(r.paymentMethod);
  });

  it('refuses a bad card naming the field, and stores nothing', async () => {
    const before = await t.pool.query<{ n: number }>('SELECT (SELECT count(*) FROM payment_methods) + (SELECT count(*) FROM card_codes) + (SELECT count(*) FROM card_code_keys) AS n');
    expect(await vault.tokenize('mer_a', { ...card, number: '4242424242424241' })).toMatchObject({ ok: false, field: 'card.number' });
    expect(await vault.tokenize('mer_a', { ...card, exp_year: 2025 })).toMatchObject({ ok: false, field: 'card.exp_year' });
    expect(await vault.tokenize('mer_a', { ...card, cvc: '73' })).toMatchObject({ ok: false, field: 'card.cvc' });
    const after = await t.pool.query<{ n: number }>('SELECT (SELECT count(*) FROM payment_methods) + (SELECT count(*) FROM card_codes) + (SELECT count(*) FROM card_code_keys) AS n');
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });

  it("describes a payment method only to its merchant; fingerprints match per merchant and differ across merchants", async () => {
    const a1 = await vault.tokenize('mer_a', card);
    const a2 = await vault.tokenize('mer_a', { ...card, cvc: '123' });
    const b = await vault.tokenize('mer_b', card);
    if (!a1.ok || !a2.ok || !b.ok) throw new Error('tokenize failed');
    expect(await vault.describe('mer_b', a1.paymentMethod.id)).toBeNull();
    expect(await vault.describe('mer_a', 'pmd_0000000000nonexistent0000')).toBeNull();
    expect(a2.paymentMethod.fingerprint).toBe(a1.paymentMethod.fingerprint);
    expect(b.paymentMethod.fingerprint).not.toBe(a1.paymentMethod.fingerprint);
  });

  it('reveals the card for an attempt and records who asked, before anything is decrypted', async () => {
    const r = await vault.tokenize('mer_a', card);
    if (!r.ok) throw new Error('tokenize failed');
    const revealed = await vault.reveal(r.paymentMethod.id, access);
    expect(revealed).toEqual({ id: r.paymentMethod.id, merchantId: 'mer_a', brand: 'visa', number: VISA, expMonth: 12, expYear: 2031, holderName: 'Ada Lovelace', cvc: '737', firstRevealHadCode: null });
    const log = await t.pool.query('SELECT payment_method_id, purpose, attempt_id, process, fields, at FROM access_log WHERE payment_method_id = $1', [r.paymentMethod.id]);
    expect(log.rows).toEqual([{ payment_method_id: r.paymentMethod.id, purpose: 'provider_call', attempt_id: 'att_1', process: 'worker@test:1', fields: ['pan', 'cvc'], at: clock }]);
    await expect(vault.reveal(r.paymentMethod.id, { ...access, attemptId: '' })).rejects.toThrow(/an attempt id/);
    expect(await vault.reveal('pmd_0000000000nonexistent0000', access)).toBeNull();
  });

  it('keeps the access log append-only', async () => {
    await expect(t.pool.query(`UPDATE access_log SET process = 'someone else'`)).rejects.toThrow(/append-only: UPDATE refused/);
    await expect(t.pool.query('DELETE FROM access_log')).rejects.toThrow(/append-only: DELETE refused/);
    await expect(t.pool.query('TRUNCATE access_log')).rejects.toThrow(/append-only: TRUNCATE refused/);
  });

  it("refuses a reveal when one record's ciphertext was copied into another row", async () => {
    const a = await vault.tokenize('mer_a', card);
    const b = await vault.tokenize('mer_a', { ...card, number: '5555555555554444' });
    if (!a.ok || !b.ok) throw new Error('tokenize failed');
    await t.pool.query('UPDATE payment_methods SET pan_ciphertext = (SELECT pan_ciphertext FROM payment_methods WHERE id = $1) WHERE id = $2', [a.paymentMethod.id, b.paymentMethod.id]);
    await expect(vault.reveal(b.paymentMethod.id, access)).rejects.toThrow(VaultContextMismatchError);
    await expect(vault.reveal(b.paymentMethod.id, access)).rejects.toThrow(new RegExp(`belongs to field=pan merchant=mer_a payment_method=${a.paymentMethod.id}`));
    // The same for the code: b's code key row given a's wrapped key.
    const c = await vault.tokenize('mer_a', card);
    if (!c.ok) throw new Error('tokenize failed');
    await t.pool.query('UPDATE card_code_keys SET wrapped_key = (SELECT wrapped_key FROM card_code_keys WHERE payment_method_id = $1) WHERE payment_method_id = $2', [a.paymentMethod.id, c.paymentMethod.id]);
    await expect(vault.reveal(c.paymentMethod.id, access)).rejects.toThrow(VaultContextMismatchError);
  });

  it('forgets the code at the first authorization response: its key row and ciphertext are deleted', async () => {
    const r = await vault.tokenize('mer_a', card);
    if (!r.ok) throw new Error('tokenize failed');
    expect(await vault.forgetCode(r.paymentMethod.id)).toBe(true);
    const rows = await t.pool.query('SELECT (SELECT count(*) FROM card_codes WHERE payment_method_id = $1)::int AS codes, (SELECT count(*) FROM card_code_keys WHERE payment_method_id = $1)::int AS keys', [r.paymentMethod.id]);
    expect(rows.rows[0]).toEqual({ codes: 0, keys: 0 });
    expect((await vault.reveal(r.paymentMethod.id, access))?.cvc).toBeNull();
    expect(await vault.forgetCode(r.paymentMethod.id)).toBe(false);
    const log = await t.pool.query('SELECT fields FROM access_log WHERE payment_method_id = $1', [r.paymentMethod.id]);
    expect(log.rows).toEqual([{ fields: ['pan'] }]);
  });

  it('answers, per attempt and request key, whether the first reveal carried the code: a resend carries exactly what the first send did', async () => {
    const r = await vault.tokenize('mer_a', card);
    if (!r.ok) throw new Error('tokenize failed');
    const id = r.paymentMethod.id;
    const send = { ...access, attemptId: 'att_resend', requestKey: 'key_1' };
    expect(await vault.reveal(id, send)).toMatchObject({ cvc: '737', firstRevealHadCode: null });
    expect(await vault.reveal(id, send)).toMatchObject({ cvc: '737', firstRevealHadCode: true });
    await vault.forgetCode(id);
    // The code the first send carried is gone: the caller must not resend that request.
    expect(await vault.reveal(id, send)).toMatchObject({ cvc: null, firstRevealHadCode: true });
    // Another request (a failover's attempt) starts without the code.
    expect(await vault.reveal(id, { ...send, attemptId: 'att_next', requestKey: 'key_2' })).toMatchObject({ cvc: null, firstRevealHadCode: null });
    expect(await vault.reveal(id, { ...send, attemptId: 'att_next', requestKey: 'key_2' })).toMatchObject({ cvc: null, firstRevealHadCode: false });
  });

  it('resends a request first sent without the code without it, even while the code is still kept', async () => {
    const r = await vault.tokenize('mer_a', card);
    if (!r.ok) throw new Error('tokenize failed');
    const id = r.paymentMethod.id;
    // A first reveal that found no code (the UNLOGGED key table emptied by a crash, say), then the code is back under test.
    const key = await t.pool.query('SELECT * FROM card_code_keys WHERE payment_method_id = $1', [id]);
    await t.pool.query('DELETE FROM card_code_keys WHERE payment_method_id = $1', [id]);
    const send = { ...access, attemptId: 'att_nocode', requestKey: 'key_3' };
    expect(await vault.reveal(id, send)).toMatchObject({ cvc: null, firstRevealHadCode: null });
    const k = key.rows[0] as { key_name: string; wrapped_key: Buffer; expires_at: Date };
    await t.pool.query('INSERT INTO card_code_keys (payment_method_id, key_name, wrapped_key, expires_at) VALUES ($1, $2, $3, $4)', [id, k.key_name, k.wrapped_key, k.expires_at]);
    expect(await vault.reveal(id, access)).toMatchObject({ cvc: '737' });
    expect(await vault.reveal(id, send)).toMatchObject({ cvc: null, firstRevealHadCode: false });
    const log = await t.pool.query('SELECT fields, request_key FROM access_log WHERE payment_method_id = $1 ORDER BY id', [id]);
    expect(log.rows).toEqual([{ fields: ['pan'], request_key: 'key_3' }, { fields: ['pan', 'cvc'], request_key: null }, { fields: ['pan'], request_key: 'key_3' }]);
  });

  it('keeps the code key out of the WAL: its table is unlogged', async () => {
    const r = await t.pool.query("SELECT relname, relpersistence FROM pg_class WHERE relname IN ('card_code_keys', 'card_codes') ORDER BY relname");
    expect(r.rows).toEqual([{ relname: 'card_code_keys', relpersistence: 'u' }, { relname: 'card_codes', relpersistence: 'p' }]);
  });

  it('destroys codes an hour after tokenization, and never reveals one past that even before the sweep', async () => {
    // Later than every code tokenized so far: the sweep here clears them, so only this one is left to count.
    const before = clock;
    const start = new Date(clock.getTime() + 2 * CODE_LIFETIME_MS);
    clock = start;
    await vault.sweepCodes();
    const r = await vault.tokenize('mer_a', card);
    if (!r.ok) throw new Error('tokenize failed');
    clock = new Date(start.getTime() + CODE_LIFETIME_MS - 1000);
    expect(await vault.sweepCodes()).toBe(0);
    expect((await vault.reveal(r.paymentMethod.id, access))?.cvc).toBe('737');
    clock = new Date(start.getTime() + CODE_LIFETIME_MS);
    expect((await vault.reveal(r.paymentMethod.id, access))?.cvc).toBeNull();
    expect(await vault.sweepCodes()).toBe(1);
    const rows = await t.pool.query('SELECT (SELECT count(*) FROM card_codes WHERE payment_method_id = $1)::int AS codes, (SELECT count(*) FROM card_code_keys WHERE payment_method_id = $1)::int AS keys', [r.paymentMethod.id]);
    expect(rows.rows[0]).toEqual({ codes: 0, keys: 0 });
    // The card itself stays.
    expect((await vault.reveal(r.paymentMethod.id, access))?.number).toBe(VISA);
    clock = before;
  });

  it('opens with a key set that still holds the sealing key (swapped records left for vault check), and refuses one that cannot decrypt the records, naming the variable', async () => {
    const next = vaultKey('k2');
    const rotatedSet = await t.vault([next, key], () => clock);
    const r = await rotatedSet.tokenize('mer_a', card);
    if (!r.ok) throw new Error('tokenize failed');
    expect((await t.pool.query<{ key_name: string }>('SELECT key_name FROM payment_methods WHERE id = $1', [r.paymentMethod.id])).rows[0]?.key_name).toBe('k2');

    await expect(t.vault([next], () => clock)).rejects.toThrow(VaultKeyError);
    await expect(t.vault([next], () => clock)).rejects.toThrow(/SWITCHYARD_VAULT_KEYS cannot decrypt the vault's records/);
    // The right names with other bytes: refused too.
    await expect(t.vault([vaultKey('k2'), vaultKey('k1')], () => clock)).rejects.toThrow(/SWITCHYARD_VAULT_KEYS cannot decrypt the vault's records/);
  });
});
