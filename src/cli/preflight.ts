// Before starting anything: can we reach Redis and PostgreSQL? An unreachable one is reported in
// one line naming the URL (password masked) and how to start it; so is one that refuses us.

import { Redis } from 'ioredis';
import { errorCode, maskDatabaseUrl } from '../store/database-url.ts';
import { prepareDatabase } from '../store/migrate-main.ts';
import type { MigrateResult } from '../store/migrate.ts';

export class RedisUnreachableError extends Error {
  override readonly name = 'RedisUnreachableError';
}

export function maskRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable REDIS_URL>';
  }
}

export async function checkRedis(url: string, timeoutMs = 3000): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  // The socket error carries the code (ECONNREFUSED); connect() itself only says the connection closed.
  let socketError: unknown;
  redis.on('error', (e: unknown) => {
    socketError ??= e;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    const code = errorCode(socketError) ?? errorCode(err) ?? (err as Error).message;
    throw new RedisUnreachableError(`cannot reach Redis at ${maskRedisUrl(url)} (${code}): start it with 'redis-server --daemonize yes' or set REDIS_URL`, { cause: err });
  } finally {
    redis.disconnect();
  }
}

/** A server that answers but will not let us in, or has no database we may create: waiting cannot fix it. */
export class DatabaseRefusedError extends Error {
  override readonly name = 'DatabaseRefusedError';
}

// 28000 invalid_authorization (no such role), 28P01 invalid_password, 3D000 no such database,
// 42501 insufficient_privilege (e.g. may not CREATE DATABASE).
const REFUSED_CODES = new Set(['28000', '28P01', '3D000', '42501']);

/** Creates and migrates the database; unreachable servers and refused credentials become one-line errors. */
export async function migrateDatabase(url: string): Promise<MigrateResult & { created: boolean }> {
  try {
    return await prepareDatabase(url);
  } catch (err) {
    const code = errorCode(err);
    if (code === undefined || !REFUSED_CODES.has(code)) throw err;
    throw new DatabaseRefusedError(`PostgreSQL at ${maskDatabaseUrl(url)} refused us: ${(err as Error).message} (${code}): check the user, password and database name in DATABASE_URL`, { cause: err });
  }
}
