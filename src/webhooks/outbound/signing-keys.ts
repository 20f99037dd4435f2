// The keys that sign merchant deliveries. Production sets SWITCHYARD_SIGNING_JWKS (a private JWK
// set: the first key signs, every key is published) so every API and worker process signs alike.
// Unset (local use), one ES256 key is generated and kept in the database, with a warning: all
// processes on that database then share it. Key material never reaches a log line.

import { generateKeyPair, exportJWK, importJWK } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { randomBytes } from 'node:crypto';
import { asc, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../store/db.ts';
import { signingKeys } from '../../store/schema.ts';

export const SIGNING_ALG = 'ES256';
export const SIGNING_JWKS_ENV = 'SWITCHYARD_SIGNING_JWKS';

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

export class SigningKeyError extends Error {
  override readonly name = 'SigningKeyError';
}

export interface SigningKeyRing {
  readonly source: 'env' | 'database';
  /** Signs every new delivery attempt. */
  readonly active: SigningKey;
  /** Every key of the configured set (env), or the database's key at start. */
  readonly keys: readonly SigningKey[];
}

function publicPart(jwk: JWK, kid: string): JWK {
  // Only the public members, whatever else the private JWK carried.
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg: SIGNING_ALG, use: 'sig' } as JWK;
}

async function fromPrivateJwk(jwk: JWK, where: string): Promise<SigningKey> {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.d !== 'string') throw new SigningKeyError(`${where}: an ES256 private key (kty EC, crv P-256, with d) is required`);
  if (typeof jwk.kid !== 'string' || jwk.kid === '') throw new SigningKeyError(`${where}: kid is required (merchants pick the key by kid)`);
  if (jwk.alg !== undefined && jwk.alg !== SIGNING_ALG) throw new SigningKeyError(`${where}: alg must be ${SIGNING_ALG}`);
  const privateKey = (await importJWK({ ...jwk, alg: SIGNING_ALG }, SIGNING_ALG)) as CryptoKey;
  return { kid: jwk.kid, privateKey, publicJwk: publicPart(jwk, jwk.kid) };
}

/** Parses SWITCHYARD_SIGNING_JWKS; every problem names the key's index, never its material. */
export async function keysFromJwksText(text: string): Promise<SigningKey[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SigningKeyError(`${SIGNING_JWKS_ENV} is not JSON`);
  }
  const list = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list) || list.length === 0) throw new SigningKeyError(`${SIGNING_JWKS_ENV} must be a JWK set with at least one key: {"keys":[...]}`);
  const keys: SigningKey[] = [];
  for (const [i, jwk] of list.entries()) keys.push(await fromPrivateJwk(jwk as JWK, `${SIGNING_JWKS_ENV}.keys[${i}]`));
  const kids = new Set(keys.map((k) => k.kid));
  if (kids.size !== keys.length) throw new SigningKeyError(`${SIGNING_JWKS_ENV}: kids must be unique`);
  return keys;
}

/** A new ES256 key as a private JWK with a random kid (tests, `switchyard keys generate`, local use). */
export async function generatePrivateJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: `sy_${randomBytes(6).toString('hex')}`, alg: SIGNING_ALG };
}

async function databaseKey(db: Db): Promise<{ key: SigningKey; created: boolean }> {
  return db.transaction(async (tx) => {
    // One generator at a time, so processes starting together agree on one key.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('switchyard.signing_keys'))`);
    const rows = await tx.select().from(signingKeys).where(isNull(signingKeys.retiredAt)).orderBy(asc(signingKeys.createdAt)).limit(1);
    const row = rows[0];
    if (row !== undefined) return { key: await fromPrivateJwk(row.privateJwk as JWK, `signing_keys ${row.kid}`), created: false };
    const jwk = await generatePrivateJwk();
    const key = await fromPrivateJwk(jwk, 'generated key');
    await tx.insert(signingKeys).values({ kid: key.kid, privateJwk: jwk, publicJwk: key.publicJwk });
    return { key, created: true };
  });
}

export async function loadSigningKeys(db: Db, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<SigningKeyRing> {
  const text = env[SIGNING_JWKS_ENV];
  if (text !== undefined && text.trim() !== '') {
    const keys = await keysFromJwksText(text);
    return { source: 'env', active: keys[0]!, keys };
  }
  const { key, created } = await databaseKey(db);
  log(`webhooks: ${SIGNING_JWKS_ENV} is not set; signing merchant webhooks with ${created ? 'a newly generated' : 'the'} key ${key.kid} kept in the database (fine locally; set ${SIGNING_JWKS_ENV} in production)`);
  return { source: 'database', active: key, keys: [key] };
}

/** Retires the database key and makes a new one; processes sign with it after their next start. */
export async function rotateDatabaseSigningKey(db: Db, now: Date): Promise<string> {
  const jwk = await generatePrivateJwk();
  const key = await fromPrivateJwk(jwk, 'generated key');
  await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('switchyard.signing_keys'))`);
    await tx.update(signingKeys).set({ retiredAt: now }).where(isNull(signingKeys.retiredAt));
    await tx.insert(signingKeys).values({ kid: key.kid, privateJwk: jwk, publicJwk: key.publicJwk, createdAt: now });
  });
  return key.kid;
}
