// `switchyard merchants create|rotate-key`: one JSON line with the key, shown once.

import { createDatabase } from '../store/db.ts';
import { createMerchant, loadMerchant, rotateMerchantKey } from '../store/merchants.ts';
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

export async function rotateKeyCommand(url: string, merchantId: string): Promise<string> {
  return withDatabase(url, async (db) => {
    const merchant = await loadMerchant(db, merchantId);
    const apiKey = merchant === null ? null : await rotateMerchantKey(db, merchantId);
    if (merchant === null || apiKey === null) throw new CliInputError(`merchant ${merchantId} not found`);
    return JSON.stringify({ id: merchant.id, name: merchant.name, api_key: apiKey });
  });
}
