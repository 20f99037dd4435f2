// Merchants (tenants). Their keys are rows of api_keys (src/store/api-keys.ts): the secret keys
// (sk_sy_…) for the merchant's servers, the publishable keys (pk_sy_…) for its customers' browsers.

import { eq, sql } from 'drizzle-orm';
import { isKeyActive, keyPrefix } from '../core/api-keys.ts';
import type { KeyMode } from '../core/api-keys.ts';
import { newId } from '../core/ids.ts';
import { authenticateKey, issueKey, listKeys, lockMerchantKeys, rollKey } from './api-keys.ts';
import type { KeyIdentity } from './api-keys.ts';
import type { DbOrTx } from './db.ts';
import { merchants } from './schema.ts';

export { hashApiKey } from './api-keys.ts';

export interface Merchant {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
  /** The pinned API version (switchyard merchants set-version); null: the latest. */
  readonly apiVersion: string | null;
}

/** Publishable keys open only POST /v1/tokens and the hosted card form (src/api/token-routes.ts). */
export const PUBLISHABLE_KEY_PREFIX = keyPrefix('publishable');

function toMerchant(row: typeof merchants.$inferSelect): Merchant {
  return { id: row.id, name: row.name, createdAt: row.createdAt.toISOString(), apiVersion: row.apiVersion };
}

/**
 * A merchant with a full secret key and a publishable key of one mode (default test: the keys of a
 * new merchant reach the sandboxes, and a live key is asked for by name). Returns the keys once;
 * they cannot be read back later.
 */
export async function createMerchant(db: DbOrTx, input: { name: string; id?: string; mode?: KeyMode; now?: Date }): Promise<{ merchant: Merchant; apiKey: string; publishableKey: string; keyIds: { secret: string; publishable: string } }> {
  const now = input.now ?? new Date();
  const mode = input.mode ?? 'test';
  return db.transaction(async (tx) => {
    const [row] = await tx.insert(merchants).values({ id: input.id ?? newId('merchant'), name: input.name, createdAt: now }).returning();
    const secret = await issueKey(tx, { merchantId: row!.id, kind: 'secret', role: 'full', mode, name: 'secret key', expiresAt: null, now });
    const publishable = await issueKey(tx, { merchantId: row!.id, kind: 'publishable', role: null, mode, name: 'publishable key', expiresAt: null, now });
    return { merchant: toMerchant(row!), apiKey: secret.secret!, publishableKey: publishable.secret!, keyIds: { secret: secret.key.id, publishable: publishable.key.id } };
  });
}

/** The merchant a secret key opens (any role); null for anything else. */
export async function authenticateMerchant(db: DbOrTx, apiKey: string, now: Date = new Date()): Promise<Merchant | null> {
  const found = await authenticateKey(db, apiKey, 'secret', now);
  return found === null ? null : toMerchant(found.merchant);
}

/** The merchant and key a secret key opens, for the API's authentication (src/api/auth.ts). */
export async function authenticateSecretKey(db: DbOrTx, apiKey: string, now: Date): Promise<{ merchant: Merchant; key: KeyIdentity } | null> {
  const found = await authenticateKey(db, apiKey, 'secret', now);
  return found === null ? null : { merchant: toMerchant(found.merchant), key: found.key };
}

export class AmbiguousKeyError extends Error {
  override readonly name = 'AmbiguousKeyError';
}

/**
 * Rolls the merchant's one working key of a kind with no grace (the old one stops at once): what
 * `merchants rotate-key` and `rotate-publishable-key` always did. With several such keys it refuses,
 * naming them (roll one by id). With no publishable key it issues one. Null when the merchant does
 * not exist. The caller's transaction (if any) holds the merchant's lock until it ends.
 */
export async function replaceOnlyKey(db: DbOrTx, merchantId: string, kind: 'secret' | 'publishable', now: Date = new Date()): Promise<{ secret: string; keyId: string; replaced: string | null } | null> {
  return db.transaction(async (tx) => {
    if (!(await lockMerchantKeys(tx, merchantId))) return null;
    const working = await listKeys(tx, merchantId, now);
    const candidates = working.filter((k) => k.kind === kind && (kind === 'publishable' || k.role === 'full') && isKeyActive(k, now));
    if (candidates.length > 1) throw new AmbiguousKeyError(`merchant ${merchantId} has ${candidates.length} working ${kind === 'secret' ? 'full secret' : 'publishable'} keys (${candidates.map((k) => k.id).join(', ')}): roll one by id (switchyard merchants keys roll KEY_ID)`);
    const only = candidates[0];
    if (only === undefined) {
      if (kind === 'secret') throw new AmbiguousKeyError(`merchant ${merchantId} has no working full secret key: create one (switchyard merchants keys create)`);
      // The secret keys' mode when they are all test keys; live otherwise (as a legacy key's roll).
      const mode: KeyMode = working.some((k) => k.kind === 'secret') && working.every((k) => k.kind !== 'secret' || k.mode === 'test') ? 'test' : 'live';
      const issued = await issueKey(tx, { merchantId, kind, role: null, mode, name: 'publishable key', expiresAt: null, now });
      return { secret: issued.secret!, keyId: issued.key.id, replaced: null };
    }
    // A legacy key (mode any) becomes a live key: it may have served live traffic, and a test key in its place would stop that.
    const rolled = await rollKey(tx, only, { expiresInS: 0, now, mode: only.mode === 'any' ? 'live' : only.mode });
    return { secret: rolled.secret!, keyId: rolled.key.id, replaced: only.id };
  });
}

/** Replaces the key; the old one stops working at once. Null when the merchant does not exist. */
export async function rotateMerchantKey(db: DbOrTx, merchantId: string): Promise<string | null> {
  return (await replaceOnlyKey(db, merchantId, 'secret'))?.secret ?? null;
}

/** What the customer's browser may do for a merchant: the origins it may call from or frame the form in, and whether its servers may send card numbers. */
export interface MerchantCardSettings extends Merchant {
  readonly allowedOrigins: readonly string[];
  readonly allowRawCards: boolean;
}

function toCardSettings(row: typeof merchants.$inferSelect): MerchantCardSettings {
  return { ...toMerchant(row), allowedOrigins: row.allowedOrigins, allowRawCards: row.allowRawCards };
}

/** The merchant a publishable key belongs to, and the key; a secret key (or anything else) is null here. */
export async function authenticatePublishableKey(db: DbOrTx, key: string, now: Date = new Date()): Promise<(MerchantCardSettings & { readonly key: KeyIdentity }) | null> {
  const found = await authenticateKey(db, key, 'publishable', now);
  return found === null ? null : { ...toCardSettings(found.merchant), key: found.key };
}

/** Replaces the publishable key (pages that embed the old one stop working at once). Null when the merchant does not exist. */
export async function rotatePublishableKey(db: DbOrTx, merchantId: string): Promise<string | null> {
  return (await replaceOnlyKey(db, merchantId, 'publishable'))?.secret ?? null;
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

export async function setApiVersion(db: DbOrTx, merchantId: string, version: string | null): Promise<boolean> {
  const rows = await db.update(merchants).set({ apiVersion: version }).where(eq(merchants.id, merchantId)).returning({ id: merchants.id });
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
