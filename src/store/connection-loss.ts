// Which failures mean "PostgreSQL or Redis went away, or is not taking connections right now":
// what waiting heals. Shared by start-up (src/cli/transient-errors.ts: wait it out) and by the
// outbox jobs (src/jobs/job-failure.ts: a job that failed for this reason is run again once the
// server is back, never dead-lettered for an outage).

import { errorCode } from './database-url.ts';

/** Socket-level codes (Node) and PostgreSQL SQLSTATEs that mean "the server went away or is not ready yet". */
const CONNECTION_LOSS_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND',
  // 57P01 admin_shutdown is what pg_terminate_backend sends; 57P02 crash_shutdown; 57P03 cannot_connect_now (starting up).
  '57P01', '57P02', '57P03',
  // 53300 too_many_connections, 40001/40P01 a serialization failure or deadlock with another starting process.
  '53300', '40001', '40P01',
]);

/** node-postgres and ioredis report a dropped connection in words, without a code. */
const CONNECTION_LOSS_MESSAGES = [
  /connection terminated/i,
  /client has encountered a connection error/i,
  /timeout exceeded when trying to connect/i,
  /connection is closed/i,
  /stream isn't writeable/i,
  /max retries per request/i,
  /not queryable/i, // a node-postgres client used after its connection died
  // ALTER DATABASE … ALLOW_CONNECTIONS false (maintenance, an outage drill): SQLSTATE 55000, a class shared with unrelated errors.
  /is not currently accepting connections/i,
  /^LOADING\b/, // Redis loading its dataset after a restart
  /^READONLY\b/, // a replica being promoted
];

/** The error and what it wraps (drizzle's "Failed query" wraps the driver's error), outermost first. */
export function errorChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && out.length < 8; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

/** True when the failure, or anything it wraps, is a connection refused, dropped or not ready. */
export function isConnectionLoss(err: unknown): boolean {
  for (const e of errorChain(err)) {
    // An error that says so itself: the vault client's when the vault process is down (src/vault/vault-unavailable.ts).
    if ((e as { connectionLoss?: unknown } | null)?.connectionLoss === true) return true;
    const code = errorCode(e);
    if (code !== undefined && (CONNECTION_LOSS_CODES.has(code) || code.startsWith('08'))) return true;
    const message = e instanceof Error ? e.message : '';
    if (CONNECTION_LOSS_MESSAGES.some((m) => m.test(message))) return true;
  }
  return false;
}
