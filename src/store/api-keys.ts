// Merchant API keys in api_keys (migration 0022). Only the SHA-256 of a whole key string is kept: a
// key carries 32 random bytes, so a plain hash cannot be brute-forced. A key with its id in it is
// looked up by that id and its hash compared in constant time (node:crypto timingSafeEqual); a legacy
// key (no id in it) by its hash, as before. The secret itself is returned once, by issueKey.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { and, asc, eq, sql } from 'drizzle-orm';
import { composeKey, isKeyActive, parseKey, rolledExpiry } from '../core/api-keys.ts';
import type { KeyKind, KeyMode, KeyRole, StoredKeyMode } from '../core/api-keys.ts';
import { newId } from '../core/ids.ts';
import type { DbOrTx } from './db.ts';
import { preparedQuery } from './prepared.ts';
import { apiKeys, merchants } from './schema.ts';

export interface ApiKey {
  readonly id: string;
  readonly merchantId: string;
  readonly kind: KeyKind;
  readonly role: KeyRole | null;
  readonly mode: StoredKeyMode;
  readonly name: string;
  readonly legacy: boolean;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly replacedBy: string | null;
}

/** The key a request was authenticated with: what routes and logs may know of it (never its secret). */
export interface KeyIdentity {
  readonly id: string;
  readonly kind: KeyKind;
  readonly role: KeyRole | null;
  readonly mode: StoredKeyMode;
  readonly legacy: boolean;
}

type KeyRow = typeof apiKeys.$inferSelect;
type MerchantRow = typeof merchants.$inferSelect;

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function toApiKey(row: KeyRow): ApiKey {
  return {
    id: row.id, merchantId: row.merchantId, kind: row.kind as KeyKind, role: row.role as KeyRole | null, mode: row.mode as StoredKeyMode,
    name: row.name, legacy: row.legacy, createdAt: row.createdAt, expiresAt: row.expiresAt, revokedAt: row.revokedAt, replacedBy: row.replacedBy,
  };
}

export interface IssueKey {
  readonly merchantId: string;
  readonly kind: KeyKind;
  readonly role: KeyRole | null;
  readonly mode: KeyMode;
  readonly name: string;
  readonly expiresAt: Date | null;
  readonly now: Date;
  /** Fixed by the caller when a retry must find the same key (an idempotent request); new otherwise. */
  readonly id?: string;
}

/**
 * A new key and its secret (the only time it exists outside the caller). When a key with the given
 * id exists already (a retried request whose first run committed), that key and no secret.
 */
export async function issueKey(db: DbOrTx, k: IssueKey): Promise<{ key: ApiKey; secret: string | null }> {
  const id = k.id ?? newId('key', k.now.getTime());
  const secret = composeKey(k.kind, k.mode, id, randomBytes(32).toString('base64url'));
  const rows = await db.insert(apiKeys).values({
    id, merchantId: k.merchantId, kind: k.kind, role: k.role, mode: k.mode, name: k.name, hash: hashApiKey(secret),
    legacy: false, createdAt: k.now, expiresAt: k.expiresAt,
  }).onConflictDoNothing({ target: apiKeys.id }).returning();
  if (rows[0] !== undefined) return { key: toApiKey(rows[0]), secret };
  const existing = await loadKey(db, k.merchantId, id);
  if (existing === null) throw new Error(`key ${id} exists for another merchant`);
  return { key: existing, secret: null };
}

export async function loadKey(db: DbOrTx, merchantId: string, id: string): Promise<ApiKey | null> {
  const rows = await db.select().from(apiKeys).where(and(eq(apiKeys.id, id), eq(apiKeys.merchantId, merchantId)));
  return rows[0] === undefined ? null : toApiKey(rows[0]);
}

/** A key by id alone (operators name keys by id). */
export async function findKey(db: DbOrTx, id: string): Promise<ApiKey | null> {
  const rows = await db.select().from(apiKeys).where(eq(apiKeys.id, id));
  return rows[0] === undefined ? null : toApiKey(rows[0]);
}

/** Oldest first. `all`: revoked and expired keys too. */
export async function listKeys(db: DbOrTx, merchantId: string, now: Date, o: { all?: boolean } = {}): Promise<ApiKey[]> {
  const rows = await db.select().from(apiKeys).where(eq(apiKeys.merchantId, merchantId)).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  return rows.map(toApiKey).filter((k) => o.all === true || isKeyActive(k, now));
}

/**
 * Takes the merchant's row lock: key changes of one merchant run one at a time, so two deletions
 * cannot each see the other's key as the one that stays. False when there is no such merchant.
 */
export async function lockMerchantKeys(tx: DbOrTx, merchantId: string): Promise<boolean> {
  const r = await tx.execute(sql`SELECT 1 FROM merchants WHERE id = ${merchantId} FOR UPDATE`);
  return r.rows.length > 0;
}

export async function revokeKey(tx: DbOrTx, id: string, now: Date): Promise<ApiKey | null> {
  const rows = await tx.update(apiKeys).set({ revokedAt: now }).where(and(eq(apiKeys.id, id), sql`${apiKeys.revokedAt} IS NULL`)).returning();
  return rows[0] === undefined ? null : toApiKey(rows[0]);
}

/** The old key of a roll: it works until `expiresAt` and names the key that replaces it. */
export async function markRolled(tx: DbOrTx, id: string, expiresAt: Date, replacedBy: string): Promise<ApiKey> {
  const rows = await tx.update(apiKeys).set({ expiresAt, replacedBy }).where(eq(apiKeys.id, id)).returning();
  return toApiKey(rows[0]!);
}

/**
 * Rolls `old`: a new key with its kind, role, name and expiry (and its mode, or `mode` for a legacy
 * key, which has none of its own), and the old one working for `expiresInS` more seconds at most.
 * The caller holds the merchant's lock and has checked the old key may be rolled (see src/app/key-actions.ts).
 */
export async function rollKey(tx: DbOrTx, old: ApiKey, o: { expiresInS: number; now: Date; mode: KeyMode; id?: string }): Promise<{ key: ApiKey; secret: string | null; old: ApiKey }> {
  const issued = await issueKey(tx, {
    merchantId: old.merchantId, kind: old.kind, role: old.role, mode: o.mode, name: old.name, expiresAt: old.expiresAt, now: o.now, ...(o.id === undefined ? {} : { id: o.id }),
  });
  const rolled = await markRolled(tx, old.id, rolledExpiry(old.expiresAt, o.now, o.expiresInS), issued.key.id);
  return { ...issued, old: rolled };
}

type AuthRow = { key: KeyRow; merchant: MerchantRow };

// Every API request runs one of these: prepared statements (src/store/prepared.ts).
const keyById = preparedQuery<AuthRow[], { id: string }>('sy_api_key_by_id', (db) =>
  db.select({ key: apiKeys, merchant: merchants }).from(apiKeys).innerJoin(merchants, eq(merchants.id, apiKeys.merchantId)).where(eq(apiKeys.id, sql.placeholder('id'))));
const legacyKeyByHash = preparedQuery<AuthRow[], { hash: string }>('sy_api_key_by_legacy_hash', (db) =>
  db.select({ key: apiKeys, merchant: merchants }).from(apiKeys).innerJoin(merchants, eq(merchants.id, apiKeys.merchantId))
    .where(and(eq(apiKeys.hash, sql.placeholder('hash')), eq(apiKeys.legacy, true))));

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The key (of this kind) a presented string is, with its merchant's row; null for anything else:
 * malformed, unknown, the wrong kind, another key's id with this secret, expired or revoked.
 */
export async function authenticateKey(db: DbOrTx, presented: string, kind: KeyKind, now: Date): Promise<{ key: KeyIdentity; merchant: MerchantRow } | null> {
  const parsed = parseKey(presented);
  if (parsed === null || parsed.kind !== kind) return null;
  const hash = hashApiKey(presented);
  let found: AuthRow | undefined;
  if (parsed.form === 'current') {
    found = (await keyById(db, { id: parsed.id }))[0];
    if (found === undefined || found.key.legacy || found.key.mode !== parsed.mode || !sameHash(found.key.hash, hash)) return null;
  } else {
    found = (await legacyKeyByHash(db, { hash }))[0];
    if (found === undefined) return null;
  }
  const key = toApiKey(found.key);
  if (key.kind !== kind || !isKeyActive(key, now)) return null;
  return { key: { id: key.id, kind: key.kind, role: key.role, mode: key.mode, legacy: key.legacy }, merchant: found.merchant };
}
