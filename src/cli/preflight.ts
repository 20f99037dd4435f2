// Before starting anything: can we reach Redis and PostgreSQL? An unreachable one is reported in
// one line naming the URL (password masked) and how to start it.

import { Redis } from 'ioredis';
import { DatabaseUnreachableError, errorCode } from '../store/database-url.ts';
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

/** Creates and migrates the database; unreachable servers become one-line errors. */
export async function migrateDatabase(url: string): Promise<MigrateResult & { created: boolean }> {
  return prepareDatabase(url);
}

/** The one line to print for a failure at start, or null when it is not one we explain. */
export function startFailureLine(err: unknown): string | null {
  if (err instanceof DatabaseUnreachableError || err instanceof RedisUnreachableError) return err.message;
  return null;
}
