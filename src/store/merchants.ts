// Merchants (tenants) and their API keys: the secret key (sk_sy_…) for the merchant's servers, the
// publishable key (pk_sy_…) for its customers' browsers. Only a SHA-256 of a key is stored: a key is
// 32 random bytes, so a plain hash cannot be brute-forced and lets us look the merchant up by equality.

import { createHash, randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { newId } from '../core/ids.ts';
import type { DbOrTx } from './db.ts';
import { preparedQuery } from './prepared.ts';
import { merchants } from './schema.ts';

export interface Merchant {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
}

// Merchant API keys look like secret keys everywhere (sk_…); "sy" tells them apart from a provider's.
const KEY_PREFIX = 'sk_sy_';
/** Publishable keys open only POST /v1/tokens and the hosted card form (src/api/token-routes.ts). */
export const PUBLISHABLE_KEY_PREFIX = 'pk_sy_';

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

function newApiKey(prefix: string = KEY_PREFIX): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

function toMerchant(row: typeof merchants.$inferSelect): Merchant {
  return { id: row.id, name: row.name, createdAt: row.createdAt.toISOString() };
}

/** Returns the API key and the publishable key once; they cannot be read back later. */
export async function createMerchant(db: DbOrTx, input: { name: string; id?: string }): Promise<{ merchant: Merchant; apiKey: string; publishableKey: string }> {
  const apiKey = newApiKey();
  const publishableKey = newApiKey(PUBLISHABLE_KEY_PREFIX);
  const [row] = await db
    .insert(merchants)
    .values({ id: input.id ?? newId('merchant'), name: input.name, apiKeyHash: hashApiKey(apiKey), publishableKeyHash: hashApiKey(publishableKey) })
    .returning();
  return { merchant: toMerchant(row!), apiKey, publishableKey };
}

/** Every API request runs this: a prepared statement (src/store/prepared.ts). */
const merchantByKeyHash = preparedQuery<(typeof merchants.$inferSelect)[], { hash: string }>('sy_merchant_by_key_hash', (db) =>
  db.select().from(merchants).where(eq(merchants.apiKeyHash, sql.placeholder('hash'))));

export async function authenticateMerchant(db: DbOrTx, apiKey: string): Promise<Merchant | null> {
  if (!apiKey.startsWith(KEY_PREFIX)) return null;
  const rows = await merchantByKeyHash(db, { hash: hashApiKey(apiKey) });
  return rows[0] === undefined ? null : toMerchant(rows[0]);
}

/** Replaces the key; the old one stops working at once. Null when the merchant does not exist. */
export async function rotateMerchantKey(db: DbOrTx, merchantId: string): Promise<string | null> {
  const apiKey = newApiKey();
  const rows = await db
    .update(merchants)
    .set({ apiKeyHash: hashApiKey(apiKey), keyRotatedAt: new Date() })
    .where(eq(merchants.id, merchantId))
    .returning({ id: merchants.id });
  return rows.length === 0 ? null : apiKey;
}

/** What the customer's browser may do for a merchant: the origins it may call from or frame the form in, and whether its servers may send card numbers. */
export interface MerchantCardSettings extends Merchant {
  readonly allowedOrigins: readonly string[];
  readonly allowRawCards: boolean;
}

function toCardSettings(row: typeof merchants.$inferSelect): MerchantCardSettings {
  return { ...toMerchant(row), allowedOrigins: row.allowedOrigins, allowRawCards: row.allowRawCards };
}

const merchantByPublishableHash = preparedQuery<(typeof merchants.$inferSelect)[], { hash: string }>('sy_merchant_by_publishable_hash', (db) =>
  db.select().from(merchants).where(eq(merchants.publishableKeyHash, sql.placeholder('hash'))));

/** The merchant a publishable key belongs to; a secret key (or anything else) is null here. */
export async function authenticatePublishableKey(db: DbOrTx, key: string): Promise<MerchantCardSettings | null> {
  if (!key.startsWith(PUBLISHABLE_KEY_PREFIX)) return null;
  const rows = await merchantByPublishableHash(db, { hash: hashApiKey(key) });
  return rows[0] === undefined ? null : toCardSettings(rows[0]);
}

/** Replaces the publishable key (pages that embed the old one stop working at once). Null when the merchant does not exist. */
export async function rotatePublishableKey(db: DbOrTx, merchantId: string): Promise<string | null> {
  const key = newApiKey(PUBLISHABLE_KEY_PREFIX);
  const rows = await db
    .update(merchants)
    .set({ publishableKeyHash: hashApiKey(key), publishableKeyRotatedAt: new Date() })
    .where(eq(merchants.id, merchantId))
    .returning({ id: merchants.id });
  return rows.length === 0 ? null : key;
}

export async function loadMerchantCardSettings(db: DbOrTx, merchantId: string): Promise<MerchantCardSettings | null> {
  const rows = await db.select().from(merchants).where(eq(merchants.id, merchantId));
  return rows[0] === undefined ? null : toCardSettings(rows[0]);
}

/** Replaces the allowed browser origins (already normalized: src/api/browser-origins.ts). False when the merchant does not exist. */
export async function setAllowedOrigins(db: DbOrTx, merchantId: string, origins: readonly string[]): Promise<boolean> {
  const rows = await db.update(merchants).set({ allowedOrigins: [...origins] }).where(eq(merchants.id, merchantId)).returning({ id: merchants.id });
  return rows.length > 0;
}

export async function setAllowRawCards(db: DbOrTx, merchantId: string, allow: boolean): Promise<boolean> {
  const rows = await db.update(merchants).set({ allowRawCards: allow }).where(eq(merchants.id, merchantId)).returning({ id: merchants.id });
  return rows.length > 0;
}

/** Whether any merchant allows this origin: what a CORS preflight can know (it carries no key). */
export async function isAnyMerchantOrigin(db: DbOrTx, origin: string): Promise<boolean> {
  const r = await db.execute<{ ok: boolean }>(sql`SELECT EXISTS (SELECT 1 FROM merchants WHERE ${origin} = ANY (allowed_origins)) AS ok`);
  return r.rows[0]?.ok === true;
}

export async function loadMerchant(db: DbOrTx, merchantId: string): Promise<Merchant | null> {
  const rows = await db.select().from(merchants).where(eq(merchants.id, merchantId));
  return rows[0] === undefined ? null : toMerchant(rows[0]);
}
