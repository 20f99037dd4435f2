// What the vault checks before it serves: the configured key set opens the records already stored
// (one per wrapping key, and the fingerprint key), and a development key is not used next to a live
// provider. A refusal names the variable to fix.

import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { VaultContextMismatchError } from './envelope.ts';
import type { Envelope } from './envelope.ts';
import { VAULT_KEYS_VARIABLE, VaultKeyError } from './keys.ts';
import type { VaultKeySource } from './keys.ts';
import { cardContext, FINGERPRINT_SECRET, secretContext } from './records.ts';

function keySetName(source: VaultKeySource): string {
  return source.kind === 'environment' ? VAULT_KEYS_VARIABLE : `the development key in ${source.path} (${VAULT_KEYS_VARIABLE} is not set)`;
}

/** The fingerprint key: made and sealed on the vault's first start, opened on every later one. */
export async function loadFingerprintKey(pool: pg.Pool, envelope: Envelope, source: VaultKeySource): Promise<Uint8Array> {
  const existing = await pool.query<{ ciphertext: Buffer }>('SELECT ciphertext FROM vault_secrets WHERE name = $1', [FINGERPRINT_SECRET]);
  if (existing.rows[0] === undefined) {
    const sealed = await envelope.seal(randomBytes(32), secretContext(FINGERPRINT_SECRET));
    // Two processes starting together: one insert wins and both read it back.
    await pool.query('INSERT INTO vault_secrets (name, key_name, ciphertext) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [FINGERPRINT_SECRET, sealed.keyName, sealed.ciphertext]);
  }
  const row = (await pool.query<{ ciphertext: Buffer; key_name: string }>('SELECT ciphertext, key_name FROM vault_secrets WHERE name = $1', [FINGERPRINT_SECRET])).rows[0]!;
  try {
    return new Uint8Array((await envelope.open(row.ciphertext, secretContext(FINGERPRINT_SECRET))).plaintext);
  } catch (err) {
    throw new VaultKeyError(`${keySetName(source)} cannot decrypt the vault's records: its fingerprint key is sealed under key "${row.key_name}" (${(err as Error).message}); set ${VAULT_KEYS_VARIABLE} to a key set that holds that key`, { cause: err });
  }
}

/** For every vault key that wraps stored cards or codes: the key is configured and opens one of them. */
export async function assertKeySetOpensRecords(pool: pg.Pool, envelope: Envelope, source: VaultKeySource): Promise<void> {
  // One record per wrapping key, found through the (key_name, id) index: a start must not scan every card.
  const samples = await pool.query<{ key_name: string; id: string; merchant_id: string; ciphertext: Buffer; field: 'pan' | 'cvc_key' }>(
    `WITH RECURSIVE names AS (
       (SELECT key_name FROM payment_methods ORDER BY key_name LIMIT 1)
       UNION ALL
       SELECT (SELECT p.key_name FROM payment_methods p WHERE p.key_name > names.key_name ORDER BY p.key_name LIMIT 1) FROM names WHERE names.key_name IS NOT NULL
     )
     SELECT s.key_name, s.id, s.merchant_id, s.pan_ciphertext AS ciphertext, 'pan' AS field
       FROM names, LATERAL (SELECT * FROM payment_methods p WHERE p.key_name = names.key_name ORDER BY p.id DESC LIMIT 1) s
      WHERE names.key_name IS NOT NULL
     UNION ALL
     SELECT DISTINCT ON (k.key_name) k.key_name, p.id, p.merchant_id, k.wrapped_key, 'cvc_key'
       FROM card_code_keys k JOIN payment_methods p ON p.id = k.payment_method_id`,
  );
  const missing = [...new Set(samples.rows.map((r) => r.key_name).filter((n) => !envelope.keyNames.includes(n)))];
  if (missing.length > 0) {
    throw new VaultKeyError(`${keySetName(source)} cannot decrypt the vault's records: records are sealed under key${missing.length === 1 ? '' : 's'} ${missing.map((n) => `"${n}"`).join(', ')}, which it does not hold; add ${missing.length === 1 ? 'it' : 'them'} to ${VAULT_KEYS_VARIABLE} (after the encrypting key) and run switchyard vault rotate`);
  }
  for (const r of samples.rows) {
    try {
      (await envelope.open(r.ciphertext, cardContext(r.id, r.merchant_id, r.field))).plaintext.fill(0);
    } catch (err) {
      // It decrypted, so the key is right; the swapped record is `vault check`'s to report.
      if (err instanceof VaultContextMismatchError) continue;
      throw new VaultKeyError(`${keySetName(source)} cannot decrypt the vault's records: key "${r.key_name}" does not open ${r.id} (${(err as Error).message}); the key's bytes differ from the ones that sealed it`, { cause: err });
    }
  }
}
