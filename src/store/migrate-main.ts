// `tsx src/store/migrate-main.ts`: creates the database in DATABASE_URL if missing and migrates it.
// The CLI's `migrate` command and `npm start` should call prepareDatabase() the same way.

import { pathToFileURL } from 'node:url';
import { databaseUrlFromEnv, maskDatabaseUrl } from './database-url.ts';
import { ensureDatabase, migrate } from './migrate.ts';
import type { MigrateResult } from './migrate.ts';

export async function prepareDatabase(url: string = databaseUrlFromEnv()): Promise<MigrateResult & { created: boolean }> {
  const created = await ensureDatabase(url);
  return { created, ...(await migrate(url)) };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const url = databaseUrlFromEnv();
  prepareDatabase(url).then(
    (r) => {
      const what = r.applied.length === 0 ? 'up to date' : `applied ${r.applied.join(', ')}`;
      console.log(`${maskDatabaseUrl(url)}: ${r.created ? 'created, ' : ''}${what}${r.guardInstalled ? ' (legal-edge guard installed)' : ''}`);
    },
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exitCode = 1;
    },
  );
}
