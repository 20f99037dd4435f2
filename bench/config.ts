// The bench's gateway config: the shipped config/switchyard.yaml with provider queue limits lifted
// (the shipped 16 / 200 per s would cap the measurement, not the gateway).

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { withDatabase } from '../src/store/database-url.ts';
import { ensureDatabase, migrate } from '../src/store/migrate.ts';

export function benchConfig(): string {
  const shipped = readFileSync(new URL('../config/switchyard.yaml', import.meta.url), 'utf8');
  const queue = 'queue: { concurrency: 64, rate_per_s: 100000 }';
  const text = shipped
    .replace(/queue: \{ concurrency: 16, rate_per_s: 200 \}/, queue)
    .replace(/(\n\s+)merchant_account: SwitchyardSandbox/, `$1merchant_account: SwitchyardSandbox$1${queue}`);
  if (text.split(queue).length !== 3) throw new Error('config/switchyard.yaml changed shape: update bench/config.ts benchConfig()');
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const file = join(dir, 'switchyard.yaml');
  writeFileSync(file, text);
  return file;
}

/** Drops and re-creates the bench's own database, migrated; drops its sandbox's (<name>_sandbox), which the gateway re-creates on first use. */
export async function recreateDatabase(url: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(`${name}_sandbox`)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  await ensureDatabase(url);
  await migrate(url);
}
