// Reads every row of every table of a sandbox database as text, so a test can assert that a card
// number (or code) is stored nowhere: not in the provider's objects, idempotency keys and stored
// answers, webhook events and deliveries, nor any table added later.

import type { SandboxDatabase } from '../../../src/sandboxes/shared/database.ts';

export async function sandboxDatabaseText(database: SandboxDatabase): Promise<string> {
  const { rows: tables } = await database.pool.query<{ name: string }>(
    "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'",
  );
  const parts: string[] = [];
  for (const { name } of tables) {
    const { rows } = await database.pool.query<{ row: string }>(`SELECT t::text AS row FROM ${name} t`);
    parts.push(`-- ${name}: ${rows.length} rows`, ...rows.map((r) => r.row));
  }
  return parts.join('\n');
}
