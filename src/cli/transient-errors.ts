// Which start-up failures heal by themselves. A process restarted during a database or Redis blip
// (a pg_terminate, a Redis restart, a failover) should wait for it to pass; one whose credentials,
// database or config are wrong should say so at once, since waiting cannot fix it.

import { DatabaseUnreachableError, errorCode } from '../store/database-url.ts';
import { RedisUnreachableError } from './preflight.ts';

/** Socket-level codes (Node) and PostgreSQL SQLSTATEs that mean "the server went away or is not ready yet". */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND',
  // 57P01 admin_shutdown is what pg_terminate_backend sends; 57P02 crash_shutdown; 57P03 cannot_connect_now (starting up).
  '57P01', '57P02', '57P03',
  // 53300 too_many_connections, 40001/40P01 a serialization failure or deadlock with another starting process.
  '53300', '40001', '40P01',
]);

/** node-postgres and ioredis report a dropped connection in words, without a code. */
const TRANSIENT_MESSAGES = [
  /connection terminated/i,
  /client has encountered a connection error/i,
  /timeout exceeded when trying to connect/i,
  /connection is closed/i,
  /stream isn't writeable/i,
  /max retries per request/i,
  /^LOADING\b/, // Redis loading its dataset after a restart
  /^READONLY\b/, // a replica being promoted
];

function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && out.length < 8; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

/**
 * True when the failure (or anything it wraps: drizzle's "Failed query" wraps the driver's error)
 * is a connection that was refused, dropped or not ready. Anything else — bad credentials (28P01,
 * 28000), a missing database we could not create (3D000, 42501), an invalid config, a changed
 * migration — is permanent.
 */
export function isTransientStartError(err: unknown): boolean {
  for (const e of chain(err)) {
    if (e instanceof DatabaseUnreachableError || e instanceof RedisUnreachableError) return true;
    const code = errorCode(e);
    if (code !== undefined && (TRANSIENT_CODES.has(code) || code.startsWith('08'))) return true;
    const message = e instanceof Error ? e.message : '';
    if (TRANSIENT_MESSAGES.some((m) => m.test(message))) return true;
  }
  return false;
}

/** One line describing the failure: the first line of each message in the chain, deduplicated. */
export function describeStartError(err: unknown): string {
  const parts: string[] = [];
  for (const e of chain(err)) {
    // These already are the one line (URL masked, how to fix it); what they wrap adds nothing.
    if (e instanceof DatabaseUnreachableError || e instanceof RedisUnreachableError) {
      parts.push(e.message);
      break;
    }
    const first = (e instanceof Error ? e.message : String(e)).split('\n')[0]!.trim();
    const code = errorCode(e);
    const text = code !== undefined && !first.includes(code) ? `${first} (${code})` : first;
    if (text !== '' && !parts.includes(text)) parts.push(text);
  }
  return parts.join(': ');
}
