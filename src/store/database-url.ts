// DATABASE_URL: the gateway's own database, and its default.

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/switchyard';

export function databaseUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const url = env['DATABASE_URL'];
  return url !== undefined && url !== '' ? url : DEFAULT_DATABASE_URL;
}

// The generic helpers live in src/pg-kit (shared with the sandboxes and the vault); re-exported so
// the gateway's modules keep one import path for its database.
export { databaseName, DatabaseUnreachableError, describeConnectError, errorCode, maskDatabaseUrl, withDatabase } from '../pg-kit/database-url.ts';
