// The vault's narrow interface: tokenize a card, describe a payment method, reveal a card for one
// named purpose (an attempt's provider call, recorded in the access log first), forget its code.
// Nothing outside src/vault decrypts.

import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { newId } from '../core/ids.ts';
import { checkCard } from './card-checks.ts';
import type { CardBrand, CardField, CardInput } from './card-checks.ts';
import { createEnvelope, openWithCodeKey, sealWithCodeKey } from './envelope.ts';
import type { Envelope } from './envelope.ts';
import { cardFingerprint, requestDigest } from './fingerprint.ts';
import type { VaultKeySet } from './keys.ts';
import { cardContext, decodeSealedCard, encodeSealedCard } from './records.ts';
import type { PaymentMethodRow } from './records.ts';
import { assertKeySetOpensRecords, loadFingerprintKey } from './start-checks.ts';

/** How long a card code is kept when no authorization response arrives (PCI DSS 3.3.1.2). */
export const CODE_LIFETIME_MS = 60 * 60 * 1000;

export interface PaymentMethod {
  readonly id: string;
  readonly merchantId: string;
  readonly brand: CardBrand;
  readonly last4: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly fingerprint: string;
  readonly createdAt: Date;
}

export type TokenizeResult = { readonly ok: true; readonly paymentMethod: PaymentMethod } | { readonly ok: false; readonly field: CardField; readonly reason: string };

export interface RevealAccess {
  readonly purpose: 'provider_call';
  readonly attemptId: string;
  /** Which process asked (role@host:pid): the access log names it. */
  readonly process: string;
  /**
   * The provider request the card is for (its idempotency key). Given, the answer says whether the
   * first reveal for this attempt and key carried the code: a same-key resend must carry exactly
   * the card fields of its first send (a provider refuses or misreads another request under the key).
   */
  readonly requestKey?: string;
}

export interface RevealedCard {
  readonly id: string;
  readonly merchantId: string;
  readonly brand: CardBrand;
  readonly number: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly holderName: string | null;
  /** Null once the code was forgotten (first authorization response) or an hour has passed. */
  readonly cvc: string | null;
  /**
   * With access.requestKey: whether the first reveal for this attempt and key carried the code
   * (null: this is the first). A caller resending that request without the code it first carried
   * must not send it (the card fields would differ under the same key).
   */
  readonly firstRevealHadCode: boolean | null;
}

export interface Vault {
  tokenize(merchantId: string, card: CardInput): Promise<TokenizeResult>;
  describe(merchantId: string, id: string): Promise<PaymentMethod | null>;
  reveal(id: string, access: RevealAccess): Promise<RevealedCard | null>;
  /** Destroys the code (its key row and its ciphertext). True when there was one. */
  forgetCode(id: string): Promise<boolean>;
  /** Destroys every code older than CODE_LIFETIME_MS; returns how many. */
  sweepCodes(): Promise<number>;
  /** An HMAC of a card-bearing request's text under a vault key (per merchant): what its idempotency record keeps instead of the text. */
  requestDigest(merchantId: string, text: string): Promise<string>;
}

export interface VaultParts {
  readonly pool: pg.Pool;
  readonly envelope: Envelope;
  readonly fingerprintKey: Uint8Array;
  readonly now: () => Date;
}

/** Checks the key set against the records (refusing a set that cannot open them), then serves. */
export async function createVault(pool: pg.Pool, keySet: VaultKeySet, now: () => Date = () => new Date()): Promise<Vault & { readonly parts: VaultParts }> {
  const envelope = createEnvelope(keySet.keys);
  const fingerprintKey = await loadFingerprintKey(pool, envelope, keySet.source);
  await assertKeySetOpensRecords(pool, envelope, keySet.source);
  const parts: VaultParts = { pool, envelope, fingerprintKey, now };
  return { parts, ...vaultOver(parts) };
}

function vaultOver({ pool, envelope, fingerprintKey, now }: VaultParts): Vault {
  return {
    async tokenize(merchantId, input) {
      if (typeof merchantId !== 'string' || merchantId === '') throw new TypeError('tokenize needs the merchant id');
      const at = now();
      const checked = checkCard(input, at);
      if (!checked.ok) return { ok: false, field: checked.field, reason: checked.reason };
      const card = checked.card;
      const id = newId('paymentMethod', at.getTime());
      const fingerprint = cardFingerprint(fingerprintKey, merchantId, card.number);
      const pan = await envelope.seal(encodeSealedCard({ number: card.number, holder_name: card.holderName }), cardContext(id, merchantId, 'pan'));
      let code: { wrappedKey: Buffer; keyName: string; ciphertext: Buffer } | null = null;
      if (card.cvc !== null) {
        const codeKey = new Uint8Array(randomBytes(32));
        try {
          const wrapped = await envelope.seal(codeKey, cardContext(id, merchantId, 'cvc_key'));
          code = { wrappedKey: wrapped.ciphertext, keyName: wrapped.keyName, ciphertext: await sealWithCodeKey(codeKey, card.cvc, cardContext(id, merchantId, 'cvc')) };
        } finally {
          codeKey.fill(0);
        }
      }
      const expiresAt = new Date(at.getTime() + CODE_LIFETIME_MS);
      await inTransaction(pool, async (client) => {
        await client.query(
          `INSERT INTO payment_methods (id, merchant_id, brand, last4, exp_month, exp_year, fingerprint, key_name, pan_ciphertext, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [id, merchantId, card.brand, card.last4, card.expMonth, card.expYear, fingerprint, pan.keyName, pan.ciphertext, at],
        );
        if (code !== null) {
          await client.query('INSERT INTO card_codes (payment_method_id, ciphertext, expires_at) VALUES ($1, $2, $3)', [id, code.ciphertext, expiresAt]);
          await client.query('INSERT INTO card_code_keys (payment_method_id, key_name, wrapped_key, expires_at) VALUES ($1, $2, $3, $4)', [id, code.keyName, code.wrappedKey, expiresAt]);
        }
      });
      return {
        ok: true,
        paymentMethod: { id, merchantId, brand: card.brand, last4: card.last4, expMonth: card.expMonth, expYear: card.expYear, fingerprint, createdAt: at },
      };
    },

    async describe(merchantId, id) {
      const r = await pool.query<PaymentMethodRow>('SELECT * FROM payment_methods WHERE id = $1 AND merchant_id = $2', [id, merchantId]);
      const row = r.rows[0];
      return row === undefined ? null : toPaymentMethod(row);
    },

    async reveal(id, access) {
      if (access.purpose !== 'provider_call' || typeof access.attemptId !== 'string' || access.attemptId === '' || typeof access.process !== 'string' || access.process === '') {
        throw new TypeError('reveal needs the purpose provider_call, an attempt id and the process asking');
      }
      const at = now();
      const r = await pool.query<PaymentMethodRow & { wrapped_key: Buffer | null; code_ciphertext: Buffer | null }>(
        `SELECT p.*, k.wrapped_key, c.ciphertext AS code_ciphertext
           FROM payment_methods p
           LEFT JOIN card_code_keys k ON k.payment_method_id = p.id AND k.expires_at > $2
           LEFT JOIN card_codes c ON c.payment_method_id = p.id AND c.expires_at > $2
          WHERE p.id = $1`,
        [id, at],
      );
      const row = r.rows[0];
      if (row === undefined) return null;
      const requestKey = access.requestKey ?? null;
      let firstRevealHadCode: boolean | null = null;
      if (requestKey !== null) {
        const first = await pool.query<{ fields: string[] }>(
          'SELECT fields FROM access_log WHERE payment_method_id = $1 AND attempt_id = $2 AND request_key = $3 ORDER BY id LIMIT 1',
          [id, access.attemptId, requestKey],
        );
        firstRevealHadCode = first.rows[0] === undefined ? null : first.rows[0].fields.includes('cvc');
      }
      // A request first sent without the code is resent without it, even if the code is still here.
      const withCode = row.wrapped_key !== null && row.code_ciphertext !== null && firstRevealHadCode !== false;
      // Recorded before anything is decrypted: no reveal without its log row.
      await pool.query('INSERT INTO access_log (payment_method_id, purpose, attempt_id, process, fields, at, request_key) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        id, access.purpose, access.attemptId, access.process, withCode ? ['pan', 'cvc'] : ['pan'], at, requestKey,
      ]);
      const opened = await envelope.open(row.pan_ciphertext, cardContext(row.id, row.merchant_id, 'pan'));
      const card = decodeSealedCard(opened.plaintext);
      opened.plaintext.fill(0);
      let cvc: string | null = null;
      if (withCode) {
        const codeKey = await envelope.open(row.wrapped_key!, cardContext(row.id, row.merchant_id, 'cvc_key'));
        try {
          const plain = await openWithCodeKey(codeKey.plaintext, row.code_ciphertext!, cardContext(row.id, row.merchant_id, 'cvc'));
          cvc = plain.toString('utf8');
          plain.fill(0);
        } finally {
          codeKey.plaintext.fill(0);
        }
      }
      return { id: row.id, merchantId: row.merchant_id, brand: row.brand as CardBrand, number: card.number, expMonth: row.exp_month, expYear: row.exp_year, holderName: card.holder_name, cvc, firstRevealHadCode };
    },

    async forgetCode(id) {
      let found = false;
      await inTransaction(pool, async (client) => {
        const keys = await client.query('DELETE FROM card_code_keys WHERE payment_method_id = $1', [id]);
        const codes = await client.query('DELETE FROM card_codes WHERE payment_method_id = $1', [id]);
        found = (keys.rowCount ?? 0) + (codes.rowCount ?? 0) > 0;
      });
      return found;
    },

    async sweepCodes() {
      const at = now();
      let swept = 0;
      await inTransaction(pool, async (client) => {
        await client.query('DELETE FROM card_code_keys WHERE expires_at <= $1', [at]);
        swept = (await client.query('DELETE FROM card_codes WHERE expires_at <= $1', [at])).rowCount ?? 0;
      });
      return swept;
    },

    requestDigest(merchantId, text) {
      if (typeof merchantId !== 'string' || merchantId === '') throw new TypeError('requestDigest needs the merchant id');
      return Promise.resolve(requestDigest(fingerprintKey, merchantId, text));
    },
  };
}

export function toPaymentMethod(row: PaymentMethodRow): PaymentMethod {
  return {
    id: row.id, merchantId: row.merchant_id, brand: row.brand as CardBrand, last4: row.last4,
    expMonth: row.exp_month, expYear: row.exp_year, fingerprint: row.fingerprint, createdAt: row.created_at,
  };
}

export async function inTransaction(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
