// Operator work on the stored records: rotate (re-seal every record under the first key, in
// batches that each commit, so a stopped run resumes where it was), check (every record opens
// under its own context and matches its fingerprint and last 4), and the access log.

import type pg from 'pg';
import { openWithCodeKey, VaultContextMismatchError, VaultDecryptError } from './envelope.ts';
import { cardFingerprint } from './fingerprint.ts';
import { cardContext, decodeSealedCard, FINGERPRINT_SECRET, secretContext } from './records.ts';
import type { VaultParts } from './vault.ts';
import { inTransaction } from './vault.ts';

export interface MaintenanceOptions {
  /** Which process does the work: the access log names it. */
  readonly process: string;
  readonly batchSize?: number;
  readonly onProgress?: (line: string) => void;
}

export interface RecordProblem {
  readonly id: string;
  readonly problem: 'undecryptable' | 'context_mismatch' | 'fingerprint_mismatch' | 'last4_mismatch' | 'key_name_mismatch';
  readonly detail: string;
}

export interface RotateResult {
  readonly toKey: string;
  readonly rotated: number;
  readonly codeKeysRotated: number;
  /** Records left under an older key because they could not be opened (see vault check). */
  readonly failed: readonly RecordProblem[];
}

export interface CheckResult {
  readonly checked: number;
  readonly codesChecked: number;
  readonly problems: readonly RecordProblem[];
}

function problemOf(id: string, err: unknown): RecordProblem {
  if (err instanceof VaultContextMismatchError) return { id, problem: 'context_mismatch', detail: err.message };
  if (err instanceof VaultDecryptError) return { id, problem: 'undecryptable', detail: err.message };
  throw err;
}

async function logAccess(pool: pg.Pool | pg.PoolClient, ids: readonly string[], purpose: 'vault_check' | 'vault_rotate', fields: readonly string[], process: string, at: Date): Promise<void> {
  if (ids.length === 0) return;
  await pool.query(
    `INSERT INTO access_log (payment_method_id, purpose, attempt_id, process, fields, at)
     SELECT id, $2, NULL, $3, $4, $5 FROM unnest($1::text[]) AS id`,
    [ids, purpose, process, fields, at],
  );
}

export async function rotateVault(parts: VaultParts, o: MaintenanceOptions): Promise<RotateResult> {
  const { pool, envelope, now } = parts;
  const target = envelope.encryptingKeyName;
  const batch = o.batchSize ?? 200;
  const progress = o.onProgress ?? (() => undefined);

  const secrets = await pool.query<{ name: string; ciphertext: Buffer }>('SELECT name, ciphertext FROM vault_secrets WHERE key_name <> $1', [target]);
  for (const s of secrets.rows) {
    const opened = await envelope.open(s.ciphertext, secretContext(s.name));
    const sealed = await envelope.seal(opened.plaintext, secretContext(s.name));
    opened.plaintext.fill(0);
    await pool.query('UPDATE vault_secrets SET key_name = $2, ciphertext = $3 WHERE name = $1', [s.name, sealed.keyName, sealed.ciphertext]);
  }

  const total = Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM payment_methods WHERE key_name <> $1', [target])).rows[0]?.n ?? 0);
  progress(`rotating ${total} card record(s) to key "${target}"`);
  const failed: RecordProblem[] = [];
  let rotated = 0;
  let after = '';
  for (;;) {
    const rows = await pool.query<{ id: string; merchant_id: string; key_name: string; pan_ciphertext: Buffer }>(
      'SELECT id, merchant_id, key_name, pan_ciphertext FROM payment_methods WHERE key_name <> $1 AND id > $2 ORDER BY id LIMIT $3', [target, after, batch],
    );
    if (rows.rows.length === 0) break;
    const done: string[] = [];
    await inTransaction(pool, async (client) => {
      for (const r of rows.rows) {
        const context = cardContext(r.id, r.merchant_id, 'pan');
        let opened;
        try {
          opened = await envelope.open(r.pan_ciphertext, context);
        } catch (err) {
          failed.push(problemOf(r.id, err));
          continue;
        }
        const sealed = await envelope.seal(opened.plaintext, context);
        opened.plaintext.fill(0);
        // Guarded by the old key name: a record re-sealed meanwhile by another run is left as it is.
        const u = await client.query('UPDATE payment_methods SET key_name = $2, pan_ciphertext = $3 WHERE id = $1 AND key_name = $4', [r.id, sealed.keyName, sealed.ciphertext, r.key_name]);
        if ((u.rowCount ?? 0) > 0) done.push(r.id);
      }
      await logAccess(client, done, 'vault_rotate', ['pan'], o.process, now());
    });
    rotated += done.length;
    after = rows.rows[rows.rows.length - 1]!.id;
    progress(`rotated ${rotated}/${total}${failed.length === 0 ? '' : ` (${failed.length} could not be opened)`}`);
  }

  // Code keys live an hour at most, but one sealed under a key about to be removed would be lost early.
  const codeKeys = await pool.query<{ payment_method_id: string; merchant_id: string; key_name: string; wrapped_key: Buffer }>(
    'SELECT k.payment_method_id, p.merchant_id, k.key_name, k.wrapped_key FROM card_code_keys k JOIN payment_methods p ON p.id = k.payment_method_id WHERE k.key_name <> $1', [target],
  );
  let codeKeysRotated = 0;
  for (const k of codeKeys.rows) {
    const context = cardContext(k.payment_method_id, k.merchant_id, 'cvc_key');
    let opened;
    try {
      opened = await envelope.open(k.wrapped_key, context);
    } catch (err) {
      failed.push(problemOf(k.payment_method_id, err));
      continue;
    }
    const sealed = await envelope.seal(opened.plaintext, context);
    opened.plaintext.fill(0);
    const u = await pool.query('UPDATE card_code_keys SET key_name = $2, wrapped_key = $3 WHERE payment_method_id = $1 AND key_name = $4', [k.payment_method_id, sealed.keyName, sealed.ciphertext, k.key_name]);
    codeKeysRotated += u.rowCount ?? 0;
  }
  return { toKey: target, rotated, codeKeysRotated, failed };
}

export async function checkVault(parts: VaultParts, o: MaintenanceOptions): Promise<CheckResult> {
  const { pool, envelope, fingerprintKey, now } = parts;
  const batch = o.batchSize ?? 200;
  const progress = o.onProgress ?? (() => undefined);
  const problems: RecordProblem[] = [];

  // The fingerprint key opened when the vault did; its row must still carry its own context.
  const secret = (await pool.query<{ ciphertext: Buffer }>('SELECT ciphertext FROM vault_secrets WHERE name = $1', [FINGERPRINT_SECRET])).rows[0];
  if (secret !== undefined) {
    try {
      (await envelope.open(secret.ciphertext, secretContext(FINGERPRINT_SECRET))).plaintext.fill(0);
    } catch (err) {
      problems.push(problemOf(`vault_secret:${FINGERPRINT_SECRET}`, err));
    }
  }

  const total = Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM payment_methods')).rows[0]?.n ?? 0);
  let checked = 0;
  let after = '';
  for (;;) {
    const rows = await pool.query<{ id: string; merchant_id: string; key_name: string; last4: string; fingerprint: string; pan_ciphertext: Buffer }>(
      'SELECT id, merchant_id, key_name, last4, fingerprint, pan_ciphertext FROM payment_methods WHERE id > $1 ORDER BY id LIMIT $2', [after, batch],
    );
    if (rows.rows.length === 0) break;
    await logAccess(pool, rows.rows.map((r) => r.id), 'vault_check', ['pan'], o.process, now());
    for (const r of rows.rows) {
      let opened;
      try {
        opened = await envelope.open(r.pan_ciphertext, cardContext(r.id, r.merchant_id, 'pan'));
      } catch (err) {
        problems.push(problemOf(r.id, err));
        continue;
      }
      const card = decodeSealedCard(opened.plaintext);
      opened.plaintext.fill(0);
      if (opened.keyName !== r.key_name) problems.push({ id: r.id, problem: 'key_name_mismatch', detail: `sealed under key "${opened.keyName}", the row says "${r.key_name}"` });
      if (cardFingerprint(fingerprintKey, r.merchant_id, card.number) !== r.fingerprint) problems.push({ id: r.id, problem: 'fingerprint_mismatch', detail: 'the stored fingerprint is not the number\'s' });
      if (card.number.slice(-4) !== r.last4) problems.push({ id: r.id, problem: 'last4_mismatch', detail: 'the stored last 4 are not the number\'s' });
    }
    checked += rows.rows.length;
    after = rows.rows[rows.rows.length - 1]!.id;
    progress(`checked ${checked}/${total}`);
  }

  // Codes only show they still open under their own keys and contexts; the code is not compared with anything.
  const codes = await pool.query<{ id: string; merchant_id: string; wrapped_key: Buffer; ciphertext: Buffer }>(
    `SELECT p.id, p.merchant_id, k.wrapped_key, c.ciphertext FROM card_code_keys k JOIN card_codes c USING (payment_method_id) JOIN payment_methods p ON p.id = k.payment_method_id`,
  );
  await logAccess(pool, codes.rows.map((r) => r.id), 'vault_check', ['cvc'], o.process, now());
  for (const c of codes.rows) {
    try {
      const key = await envelope.open(c.wrapped_key, cardContext(c.id, c.merchant_id, 'cvc_key'));
      try {
        (await openWithCodeKey(key.plaintext, c.ciphertext, cardContext(c.id, c.merchant_id, 'cvc'))).fill(0);
      } finally {
        key.plaintext.fill(0);
      }
    } catch (err) {
      problems.push(problemOf(c.id, err));
    }
  }
  return { checked, codesChecked: codes.rows.length, problems };
}

export interface AccessLogEntry {
  readonly id: number;
  readonly paymentMethodId: string;
  readonly purpose: string;
  readonly attemptId: string | null;
  readonly process: string;
  readonly fields: readonly string[];
  readonly at: Date;
}

export async function listAccessLog(pool: pg.Pool, filter: { readonly paymentMethodId?: string; readonly since?: Date; readonly limit: number }): Promise<AccessLogEntry[]> {
  const r = await pool.query<{ id: string; payment_method_id: string; purpose: string; attempt_id: string | null; process: string; fields: string[]; at: Date }>(
    `SELECT id, payment_method_id, purpose, attempt_id, process, fields, at FROM access_log
      WHERE ($1::text IS NULL OR payment_method_id = $1) AND ($2::timestamptz IS NULL OR at >= $2)
      ORDER BY id DESC LIMIT $3`,
    [filter.paymentMethodId ?? null, filter.since ?? null, filter.limit],
  );
  return r.rows.map((row) => ({ id: Number(row.id), paymentMethodId: row.payment_method_id, purpose: row.purpose, attemptId: row.attempt_id, process: row.process, fields: row.fields, at: row.at }));
}
