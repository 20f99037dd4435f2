// Each merchant webhook endpoint signs with a key of its own, so a delivery replayed to another
// endpoint (another merchant's, or the same merchant's) fails verification there: the merchant pins
// its endpoint's JWKS URL and no other endpoint's signature verifies against it.
//
// The keys are derived, not stored: HKDF-SHA256 of one secret with the endpoint id and the key's
// version gives the P-256 private scalar. No private key per endpoint sits in the database; every
// process with the same secret signs alike; a rotation is a version bump. The secret comes from
// SWITCHYARD_WEBHOOK_KEY_SECRET (at least 32 bytes, hex or base64); unset (local use), one is
// generated and kept in the database with a warning, as the global key is.

import { createECDH, hkdfSync, randomBytes } from 'node:crypto';
import { importJWK } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { sql } from 'drizzle-orm';
import type { Db } from '../../store/db.ts';
import { KEY_ANNOUNCE_MS } from './delivery-signature.ts';
import { SIGNING_ALG, SigningKeyError } from './signing-keys.ts';
import type { SigningKey } from './signing-keys.ts';

export const ENDPOINT_KEY_SECRET_ENV = 'SWITCHYARD_WEBHOOK_KEY_SECRET';
const MIN_SECRET_BYTES = 32;
const SALT = 'switchyard/webhook-endpoint-signing/v1';

/** `ep_….v2`: merchants see which endpoint and which version signed. */
export function endpointKid(endpointId: string, version: number): string {
  return `${endpointId}.v${version}`;
}

/**
 * The key version that signs at `now`: after a rotation the new version is only announced (in the
 * JWKS) for KEY_ANNOUNCE_MS, the previous one signing meanwhile.
 */
export function signingVersionAt(version: number, rotatedAt: Date | null, now: Date): number {
  return rotatedAt !== null && version > 1 && now.getTime() - rotatedAt.getTime() < KEY_ANNOUNCE_MS ? version - 1 : version;
}

/** Parses the secret (hex or base64); the message never carries the material. */
export function parseEndpointKeySecret(text: string): Buffer {
  const t = text.trim();
  const bytes = /^[0-9a-fA-F]+$/.test(t) && t.length % 2 === 0 ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (bytes.length < MIN_SECRET_BYTES) throw new SigningKeyError(`${ENDPOINT_KEY_SECRET_ENV} must hold at least ${MIN_SECRET_BYTES} random bytes (hex or base64)`);
  return bytes;
}

export class EndpointKeys {
  private readonly cache = new Map<string, Promise<SigningKey>>();

  constructor(private readonly secret: Buffer) {}

  /** The endpoint's key of that version (cached: deriving and importing costs a little CPU). */
  key(endpointId: string, version: number): Promise<SigningKey> {
    const kid = endpointKid(endpointId, version);
    let k = this.cache.get(kid);
    if (k === undefined) {
      k = this.derive(endpointId, version, kid);
      this.cache.set(kid, k);
      if (this.cache.size > 10_000) this.cache.delete(this.cache.keys().next().value!);
    }
    return k;
  }

  private async derive(endpointId: string, version: number, kid: string): Promise<SigningKey> {
    // A 32-byte HKDF output is a valid P-256 scalar but for a chance of about 2^-32 (zero, or not
    // below the group order); the counter then takes the next one, deterministically.
    for (let counter = 0; ; counter++) {
      const d = Buffer.from(hkdfSync('sha256', this.secret, SALT, `${endpointId}\u0000${version}\u0000${counter}`, 32));
      const ecdh = createECDH('prime256v1');
      try {
        ecdh.setPrivateKey(d);
      } catch {
        continue;
      }
      const point = ecdh.getPublicKey(); // 0x04 || x || y
      const publicJwk: JWK = { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url'), kid, alg: SIGNING_ALG, use: 'sig' };
      const privateKey = (await importJWK({ ...publicJwk, d: d.toString('base64url') }, SIGNING_ALG)) as CryptoKey;
      return { kid, privateKey, publicJwk };
    }
  }
}

async function databaseSecret(db: Db): Promise<{ secret: Buffer; created: boolean }> {
  const fresh = randomBytes(MIN_SECRET_BYTES);
  // Processes starting together agree on one secret: the first insert wins, the others read it.
  const r = await db.execute<{ secret: Buffer; created: boolean }>(sql`
    WITH ins AS (INSERT INTO webhook_key_secret (id, secret) VALUES (1, ${fresh}) ON CONFLICT (id) DO NOTHING RETURNING secret)
    SELECT secret, true AS created FROM ins UNION ALL SELECT secret, false FROM webhook_key_secret WHERE id = 1 AND NOT EXISTS (SELECT 1 FROM ins)`);
  const row = r.rows[0]!;
  return { secret: Buffer.isBuffer(row.secret) ? row.secret : Buffer.from(String(row.secret).replace(/^\\x/, ''), 'hex'), created: row.created };
}

export async function loadEndpointKeys(db: Db, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<EndpointKeys> {
  const text = env[ENDPOINT_KEY_SECRET_ENV];
  if (text !== undefined && text.trim() !== '') return new EndpointKeys(parseEndpointKeySecret(text));
  const { secret, created } = await databaseSecret(db);
  log(`webhooks: ${ENDPOINT_KEY_SECRET_ENV} is not set; deriving endpoint signing keys from ${created ? 'a newly generated' : 'the'} secret kept in the database (fine locally; set ${ENDPOINT_KEY_SECRET_ENV} in production)`);
  return new EndpointKeys(secret);
}
