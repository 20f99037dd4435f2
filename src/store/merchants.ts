// Merchants (tenants) and their API keys. Only a SHA-256 of the key is stored: a key is 32 random
// bytes, so a plain hash cannot be brute-forced and lets us look the merchant up by equality.

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

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

function newApiKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

function toMerchant(row: typeof merchants.$inferSelect): Merchant {
  return { id: row.id, name: row.name, createdAt: row.createdAt.toISOString() };
}

/** Returns the API key once; it cannot be read back later. */
export async function createMerchant(db: DbOrTx, input: { name: string; id?: string }): Promise<{ merchant: Merchant; apiKey: string }> {
  const apiKey = newApiKey();
  const [row] = await db
    .insert(merchants)
    .values({ id: input.id ?? newId('merchant'), name: input.name, apiKeyHash: hashApiKey(apiKey) })
    .returning();
  return { merchant: toMerchant(row!), apiKey };
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

export async function loadMerchant(db: DbOrTx, merchantId: string): Promise<Merchant | null> {
  const rows = await db.select().from(merchants).where(eq(merchants.id, merchantId));
  return rows[0] === undefined ? null : toMerchant(rows[0]);
}
