// `switchyard merchants create|rotate-key|rotate-publishable-key|set-origins|allow-raw-cards`: one
// JSON line each; keys are shown once. Every change to an existing merchant is audited under the
// operator's name (SWITCHYARD_OPERATOR_TOKEN) in the transaction that makes it, never with a key.
// The keys a new merchant gets are audited too: under the operator when SWITCHYARD_OPERATOR_TOKEN is
// set, otherwise as `unidentified` (creating a merchant needed no operator before issue 47, and a
// fresh checkout has none). `merchants keys …` is src/cli/key-commands.ts.

import { createDatabase } from '../store/db.ts';
import type { DbOrTx } from '../store/db.ts';
import { parseBrowserOrigins } from '../api/browser-origins.ts';
import { KEY_MODES } from '../core/api-keys.ts';
import type { KeyMode } from '../core/api-keys.ts';
import { findKey } from '../store/api-keys.ts';
import { AmbiguousKeyError, createMerchant, loadMerchant, loadMerchantCardSettings, replaceOnlyKey, setAllowedOrigins, setAllowRawCards, setApiVersion } from '../store/merchants.ts';
import { recordAudit } from '../ops/audit.ts';
import { keyAuditSummary } from '../app/key-actions.ts';
import { cliOperator, OPERATOR_TOKEN_ENV } from '../ops/operators.ts';
import { CliInputError } from './cli-input-error.ts';
import { API_VERSIONS, isApiVersion, LATEST_API_VERSION } from '../resources/api-version.ts';
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

async function auditNewKey(tx: DbOrTx, operator: string, keyId: string, note: string): Promise<void> {
  const key = (await findKey(tx, keyId))!;
  await recordAudit(tx, { operator, action: 'api_key.create', target: key.id, after: keyAuditSummary(key), note });
}

export function parseMode(text: string | undefined, option = '--mode'): KeyMode {
  if (text === undefined) return 'test';
  if (!(KEY_MODES as readonly string[]).includes(text)) throw new CliInputError(`${option} "${text}" is not a mode: test or live`);
  return text as KeyMode;
}

export async function createMerchantCommand(url: string, name: string, modeText?: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 200) throw new CliInputError('--name must be 1 to 200 characters');
  const mode = parseMode(modeText);
  // A token given must be an operator's; none given is the unidentified developer of a fresh checkout.
  const given = env[OPERATOR_TOKEN_ENV];
  const operator = given === undefined || given === '' ? 'unidentified' : cliOperator(env).name;
  return withDatabase(url, async (db) => {
    const { merchant, apiKey, publishableKey } = await db.transaction(async (tx) => {
      const created = await createMerchant(tx, { name: trimmed, mode });
      await recordAudit(tx, { operator, action: 'merchant.create', target: created.merchant.id, after: { name: created.merchant.name, mode } });
      await auditNewKey(tx, operator, created.keyIds.secret, 'switchyard merchants create');
      await auditNewKey(tx, operator, created.keyIds.publishable, 'switchyard merchants create');
      return created;
    });
    return JSON.stringify({ id: merchant.id, name: merchant.name, api_key: apiKey, publishable_key: publishableKey });
  });
}

/**
 * Rolls the merchant's one working key of a kind with no grace. The new key and its audit row
 * (never the key itself) commit together; the row keeps the action and target these commands always
 * had (merchant.rotate_key on the merchant) and names the old and new key ids.
 */
async function replaceKey(db: DbOrTx, merchantId: string, kind: 'secret' | 'publishable', operator: string): Promise<string> {
  try {
    return await db.transaction(async (tx) => {
      const r = await replaceOnlyKey(tx, merchantId, kind);
      if (r === null) throw new CliInputError(`merchant ${merchantId} not found`);
      const at = new Date().toISOString();
      await recordAudit(tx, kind === 'secret'
        ? { operator, action: 'merchant.rotate_key', target: merchantId, before: { key_id: r.replaced }, after: { key_id: r.keyId, key_rotated_at: at }, note: 'the old key stopped working' }
        : { operator, action: 'merchant.rotate_publishable_key', target: merchantId, before: { key_id: r.replaced }, after: { key_id: r.keyId, publishable_key_rotated_at: at }, note: r.replaced === null ? 'the merchant had no publishable key' : 'the old publishable key stopped working' });
      return r.secret;
    });
  } catch (err) {
    if (err instanceof AmbiguousKeyError) throw new CliInputError(err.message);
    throw err;
  }
}

/** The merchant's one full secret key, rolled; the old one stops working at once. */
export async function rotateKeyCommand(url: string, merchantId: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const operator = cliOperator(env).name;
  return withDatabase(url, async (db) => {
    const merchant = await loadMerchant(db, merchantId);
    if (merchant === null) throw new CliInputError(`merchant ${merchantId} not found`);
    const apiKey = await replaceKey(db, merchantId, 'secret', operator);
    return JSON.stringify({ id: merchant.id, name: merchant.name, api_key: apiKey });
  });
}

/** A new publishable key; pages with the old one stop working at once. */
export async function rotatePublishableKeyCommand(url: string, merchantId: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const operator = cliOperator(env).name;
  return withDatabase(url, async (db) => {
    const key = await replaceKey(db, merchantId, 'publishable', operator);
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

/** Pins the merchant to an API version (`--latest`: unpinned, always the latest). */
export async function setVersionCommand(url: string, merchantId: string, version: string | null, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (version !== null && !isApiVersion(version)) throw new CliInputError(`${JSON.stringify(version)} is not an API version; known: ${API_VERSIONS.join(', ')}`);
  const operator = cliOperator(env).name;
  return withDatabase(url, async (db) => {
    await db.transaction(async (tx) => {
      const before = await loadMerchant(tx, merchantId);
      if (before === null) throw new CliInputError(`merchant ${merchantId} not found`);
      await setApiVersion(tx, merchantId, version);
      await recordAudit(tx, { operator, action: 'merchant.set_version', target: merchantId, before: { api_version: before.apiVersion }, after: { api_version: version } });
    });
    return JSON.stringify({ id: merchantId, api_version: version ?? LATEST_API_VERSION, pinned: version !== null });
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
