// Retention is checked where a call is executed, not only where it is decided. The core decides a
// resend inside the provider's key-retention window, but the row may run much later: delayed, dead-
// lettered and replayed, picked up by recovery. Sent past the window, the provider may have
// forgotten the key and run the operation again (a second refund, a second charge). Such a row is
// not sent; the core is told `unknown{key_expired}` and resolves it (query, fence, review).

import type { ProviderOperation } from './inputs.ts';
import { mayResend } from './keys.ts';

/**
 * Operations whose repetition under a forgotten key moves money again. The others may go out
 * whatever the key's age: a prepare moves no money, a fence or a void cancels what is already
 * cancelled at most, and a release (a void, or a refund of the whole approved amount) cannot be
 * repeated on money that is already released. A query carries no key.
 */
const REPEATS_MONEY: ReadonlySet<ProviderOperation> = new Set(['authorize', 'capture', 'refund']);

/**
 * Why this call must not be sent with its key now, or null when it may go out. `keyFirstDueAt`:
 * when the first outbox row with this key was due, no later than the first time the provider saw it.
 */
export function keyExpiredAtExecution(
  op: ProviderOperation,
  keyFirstDueAt: Date | null,
  now: Date,
  retentionMs: number,
  marginMs: number,
): string | null {
  if (!REPEATS_MONEY.has(op) || keyFirstDueAt === null) return null;
  if (mayResend(keyFirstDueAt, now, retentionMs, marginMs)) return null;
  const ageS = Math.round((now.getTime() - keyFirstDueAt.getTime()) / 1000);
  return `${op} key first due ${ageS} s ago; the provider keeps keys ${Math.round(retentionMs / 1000)} s (margin included, it is past): not sent`;
}
