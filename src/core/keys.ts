// Provider idempotency keys derive from the logical operation, never from a retry counter or a
// worker restart: a retry of the same operation on the same connector reuses the key.

import { createHash } from 'node:crypto';

export type KeyedOperation = 'prepare' | 'auth' | 'resume' | 'capture' | 'void' | 'refund' | 'fence' | 'release';

/** `<paymentId>:<op>:<n>`, shortened by a stable hash when longer than the connector allows. Never truncated. */
export function providerIdempotencyKey(paymentId: string, op: KeyedOperation, n: number, maxKeyLength: number): string {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`operation number must be a positive integer, got ${n}`);
  if (!Number.isSafeInteger(maxKeyLength) || maxKeyLength < 16) throw new RangeError(`maxKeyLength must be at least 16, got ${maxKeyLength}`);
  const key = `${paymentId}:${op}:${n}`;
  if (key.length <= maxKeyLength) return key;
  // The whole logical key goes into the hash, so two operations never share a shortened key.
  const digest = createHash('sha256').update(key).digest('base64url');
  return `sy1_${digest}`.slice(0, maxKeyLength);
}

/**
 * A resend with the same key is allowed only inside the provider's retention window minus a margin.
 * The margin is at most half the window: an account configured with a retention of seconds (the
 * chaos harness's `key_expiry`) keeps a usable window instead of a negative one.
 */
export function mayResend(firstSentAt: Date | string | null, now: Date, retentionMs: number, marginMs: number): boolean {
  if (firstSentAt === null) return true; // never sent: the key was never stored at the provider
  const sent = typeof firstSentAt === 'string' ? Date.parse(firstSentAt) : firstSentAt.getTime();
  return now.getTime() - sent < retentionMs - Math.min(marginMs, retentionMs / 2);
}

/** Exponential backoff with deterministic jitter (50-100%) derived from a seed, so step() stays pure. */
export function backoffDelayMs(attempt: number, baseMs: number, capMs: number, seed: string): number {
  const exp = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  const h = createHash('sha256').update(`${seed}:${attempt}`).digest();
  const frac = h.readUInt32BE(0) / 0xffffffff;
  return Math.round(exp * (0.5 + 0.5 * frac));
}

/** A wait after a breaker refusal grows with the time the operation has waited, up to this many reset times. */
export const BREAKER_WAIT_MAX_RESETS = 4;

/**
 * The wait before a call refused by an open breaker is tried again: at least the breaker's reset time
 * (so the breaker may have closed or be half-open), growing with the time the operation has already
 * waited up to BREAKER_WAIT_MAX_RESETS reset times (and the backoff cap), with deterministic jitter
 * (100-150%) so refused calls do not all come back at once.
 */
export function breakerRetryDelayMs(resetMs: number, waitedMs: number, capMs: number, seed: string): number {
  const ceiling = Math.max(resetMs, Math.min(capMs, BREAKER_WAIT_MAX_RESETS * resetMs));
  const base = Math.min(ceiling, Math.max(resetMs, waitedMs));
  const h = createHash('sha256').update(seed).digest();
  const frac = h.readUInt32BE(0) / 0xffffffff;
  return Math.round(base * (1 + 0.5 * frac));
}
