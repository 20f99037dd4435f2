// pg-kit: generic PostgreSQL helpers (URL, pool, create database, migration runner) for every room
// that keeps a database of its own. It knows nothing of the gateway, the sandboxes or the vault.

export { databaseName, DatabaseUnreachableError, describeConnectError, errorCode, maskDatabaseUrl, sameDatabase, withDatabase } from './database-url.ts';
export { databaseExists, ensureDatabase, inTransaction, MigrationError, readMigrations, runMigrations } from './migrate.ts';
export type { Migration, RunMigrationsOptions } from './migrate.ts';
export { createPool, endPool } from './pool.ts';
export type { PoolOptions } from './pool.ts';
