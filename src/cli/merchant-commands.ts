// `switchyard merchants create|rotate-key`: one JSON line with the key, shown once.

import { createDatabase } from '../store/db.ts';
import { createMerchant, loadMerchant, rotateMerchantKey } from '../store/merchants.ts';
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
    const { merchant, apiKey } = await createMerchant(db, { name: trimmed });
    return JSON.stringify({ id: merchant.id, name: merchant.name, api_key: apiKey });
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
