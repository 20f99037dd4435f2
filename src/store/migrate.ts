// The gateway's migrations: migrations/NNNN_name.sql through pg-kit's runner, then, under the same
// lock, the legal-edge guard generated from core.

import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { inTransaction, readMigrations as readMigrationFiles, runMigrations } from '../pg-kit/migrate.ts';
import type { Migration } from '../pg-kit/migrate.ts';
import { INSTALLED_GUARD_SQL, isGuardCurrent, renderEdgeGuardSql } from './edge-trigger.ts';

export { ensureDatabase, MigrationError } from '../pg-kit/migrate.ts';
export type { Migration } from '../pg-kit/migrate.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

export interface MigrateResult {
  readonly applied: readonly string[];
  readonly guardInstalled: boolean;
}

export interface MigrateOptions {
  readonly dir?: string;
}

export function readMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  return readMigrationFiles(dir);
}

/** Applies pending migrations, then the generated edge guard. Running it again is a no-op. */
export async function migrate(databaseUrl: string, options: MigrateOptions = {}): Promise<MigrateResult> {
  let guardInstalled = false;
  const { applied } = await runMigrations(databaseUrl, {
    dir: options.dir ?? MIGRATIONS_DIR,
    afterMigrations: async (client) => {
      guardInstalled = await installEdgeGuard(client);
    },
  });
  return { applied, guardInstalled };
}

/** Installs the guard only when missing or stale: replacing it locks payments, so a routine start must not. */
async function installEdgeGuard(client: pg.Client): Promise<boolean> {
  const hasPayments = await client.query<{ ok: boolean }>(`SELECT to_regclass('payments') IS NOT NULL AS ok`);
  if (hasPayments.rows[0]?.ok !== true) return false;
  const current = await client.query<{ comment: string | null; triggers: number }>(INSTALLED_GUARD_SQL);
  if (isGuardCurrent(current.rows[0])) return false;
  await inTransaction(client, async () => {
    await client.query(renderEdgeGuardSql());
  });
  return true;
}
