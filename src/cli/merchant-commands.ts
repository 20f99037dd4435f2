// `switchyard merchants create|rotate-key|rotate-publishable-key|set-origins|allow-raw-cards`: one
// JSON line each; keys are shown once. Every change to an existing merchant is audited under the
// operator's name (SWITCHYARD_OPERATOR_TOKEN) in the transaction that makes it, never with a key.

import { createDatabase } from '../store/db.ts';
import { parseBrowserOrigins } from '../api/browser-origins.ts';
import { createMerchant, loadMerchant, loadMerchantCardSettings, rotateMerchantKey, rotatePublishableKey, setAllowedOrigins, setAllowRawCards } from '../store/merchants.ts';
import { recordAudit } from '../ops/audit.ts';
import { cliOperator } from '../ops/operators.ts';
import { CliInputError } from './cli-input-error.ts';
import { migrateDatabase } from './preflight.ts';

async function withDatabase<T>(url: string, run: (db: ReturnType<typeof createDatabase>['db']) => Promise<T>): Promise<T> {
  // Migrating first makes `merchants create` work on a fresh clone before `npm start`, and
  // turns an unreachable server into the one-line error.
  await migrateDatabase(url);
  const database = createDatabase(url, { max: 2 });
  try {
    return await run(database.db);
  } finally {
    await database.close();
  }
}

export async function createMerchantCommand(url: string, name: string): Promise<string> {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 200) throw new CliInputError('--name must be 1 to 200 characters');
  return withDatabase(url, async (db) => {
    const { merchant, apiKey, publishableKey } = await createMerchant(db, { name: trimmed });
    return JSON.stringify({ id: merchant.id, name: merchant.name, api_key: apiKey, publishable_key: publishableKey });
  });
}

/** The new key and its audit row (never the key itself) commit together. */
export async function rotateKeyCommand(url: string, merchantId: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const operator = cliOperator(env).name;
  return withDatabase(url, async (db) => {
    const merchant = await loadMerchant(db, merchantId);
    if (merchant === null) throw new CliInputError(`merchant ${merchantId} not found`);
    const apiKey = await db.transaction(async (tx) => {
      const key = await rotateMerchantKey(tx, merchantId);
      if (key !== null) await recordAudit(tx, { operator, action: 'merchant.rotate_key', target: merchantId, after: { key_rotated_at: new Date().toISOString() }, note: 'the old key stopped working' });
      return key;
    });
    if (apiKey === null) throw new CliInputError(`merchant ${merchantId} not found`);
    return JSON.stringify({ id: merchant.id, name: merchant.name, api_key: apiKey });
  });
}

/** A new publishable key; pages with the old one stop working at once. */
export async function rotatePublishableKeyCommand(url: string, merchantId: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const operator = cliOperator(env).name;
  return withDatabase(url, async (db) => {
    const key = await db.transaction(async (tx) => {
      const k = await rotatePublishableKey(tx, merchantId);
      if (k !== null) await recordAudit(tx, { operator, action: 'merchant.rotate_publishable_key', target: merchantId, after: { publishable_key_rotated_at: new Date().toISOString() }, note: 'the old publishable key stopped working' });
      return k;
    });
    if (key === null) throw new CliInputError(`merchant ${merchantId} not found`);
    return JSON.stringify({ id: merchantId, publishable_key: key });
  });
}

/** Replaces the merchant's allowed browser origins (none: `--none`). */
export async function setOriginsCommand(url: string, merchantId: string, texts: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const parsed = parseBrowserOrigins(texts);
  if (!parsed.ok) throw new CliInputError(`origin ${parsed.problem}`);
  const operator = cliOperator(env).name;
  return withDatabase(url, async (db) => {
    await db.transaction(async (tx) => {
      const before = await loadMerchantCardSettings(tx, merchantId);
      if (before === null) throw new CliInputError(`merchant ${merchantId} not found`);
      await setAllowedOrigins(tx, merchantId, parsed.origins);
      await recordAudit(tx, { operator, action: 'merchant.set_origins', target: merchantId, before: { allowed_origins: before.allowedOrigins }, after: { allowed_origins: parsed.origins } });
    });
    return JSON.stringify({ id: merchantId, allowed_origins: parsed.origins });
  });
}

/** Lets the merchant's servers send card numbers (POST /v1/payment_methods), or takes that back. */
export async function allowRawCardsCommand(url: string, merchantId: string, allow: boolean, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const operator = cliOperator(env).name;
  return withDatabase(url, async (db) => {
    await db.transaction(async (tx) => {
      const before = await loadMerchantCardSettings(tx, merchantId);
      if (before === null) throw new CliInputError(`merchant ${merchantId} not found`);
      await setAllowRawCards(tx, merchantId, allow);
      await recordAudit(tx, {
        operator, action: allow ? 'merchant.allow_raw_cards' : 'merchant.revoke_raw_cards', target: merchantId,
        before: { allow_raw_cards: before.allowRawCards }, after: { allow_raw_cards: allow },
      });
    });
    return JSON.stringify({ id: merchantId, allow_raw_cards: allow });
  });
}
