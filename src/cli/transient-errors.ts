// Which start-up failures heal by themselves. A process restarted during a database or Redis blip
// (a pg_terminate, a Redis restart, a failover) should wait for it to pass; one whose credentials,
// database or config are wrong should say so at once, since waiting cannot fix it.

import { DatabaseUnreachableError, errorCode } from '../store/database-url.ts';
import { errorChain, isConnectionLoss } from '../store/connection-loss.ts';
import { RedisUnreachableError } from './preflight.ts';

/**
 * True when the failure (or anything it wraps: drizzle's "Failed query" wraps the driver's error)
 * is a connection that was refused, dropped or not ready. Anything else — bad credentials (28P01,
 * 28000), a missing database we could not create (3D000, 42501), an invalid config, a changed
 * migration — is permanent.
 */
export function isTransientStartError(err: unknown): boolean {
  if (errorChain(err).some((e) => e instanceof DatabaseUnreachableError || e instanceof RedisUnreachableError)) return true;
  return isConnectionLoss(err);
}

/** One line describing the failure: the first line of each message in the chain, deduplicated. */
export function describeStartError(err: unknown): string {
  const parts: string[] = [];
  for (const e of errorChain(err)) {
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
