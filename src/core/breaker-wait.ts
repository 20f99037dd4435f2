// A call refused by an open breaker (not_sent{breaker_open}) never left the process. It is no proof
// about an earlier send of the same operation (that one may have reached the provider), and it is
// no send either: it does not count against maxResends. The same call, with the same key, is tried
// again once the breaker may have closed — inside the key's retention window and the operation's
// lifetime only. Past those bounds the refusal is handled as any not_sent (counted, then failed,
// parked or fenced), so nothing waits forever.

import { breakerRetryDelayMs, mayResend } from './keys.ts';
import type { Draft } from './draft.ts';
import type { CallOutcome, NotSent } from './outcome.ts';

export function isBreakerRefusal(o: CallOutcome): o is NotSent & { readonly reason: 'breaker_open' } {
  return o.kind === 'not_sent' && o.reason === 'breaker_open';
}

export interface BreakerWait {
  readonly connector: string;
  /** Seeds the jitter (with the current time): the logical operation's id. */
  readonly seed: string;
  /** When the operation's key first left (or the operation was requested); null: never sent. */
  readonly since: string | null;
  /** The operation is not retried on a refusal at or after this instant. */
  readonly until: string;
}

/**
 * When to try again a call an open breaker refused, or null when a retry then would fall outside the
 * key's retention window (minus the margin) or the operation's lifetime.
 */
export function breakerRetryAt(d: Draft, w: BreakerWait): string | null {
  const resetMs = d.env.breakerResetMs?.[w.connector] ?? d.env.core.breakerResetMs;
  const waitedMs = w.since === null ? 0 : Math.max(0, d.now.getTime() - Date.parse(w.since));
  const at = new Date(d.now.getTime() + breakerRetryDelayMs(resetMs, waitedMs, d.env.core.backoffCapMs, `${w.seed}:breaker:${d.nowIso}`));
  // The retry itself must still be inside the window: the bound is checked at the time it goes out.
  if (!mayResend(w.since, at, d.policy(w.connector).keyRetentionMs, d.env.core.retentionMarginMs)) return null;
  if (at.getTime() >= Date.parse(w.until)) return null;
  return at.toISOString();
}

/** The end of a capture's, refund's or void's lifetime: as long as a payment may stay in flight. */
export function operationLifetimeEnd(d: Draft, requestedAt: string): string {
  return new Date(Date.parse(requestedAt) + d.env.core.maxLifetimeMs).toISOString();
}
