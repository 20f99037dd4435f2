// Stripe's server-side idempotency: a key remembers the parameters and the answer of the first request
// that began executing with it, for keyTtlMs on the sandbox clock (Stripe prunes after 24 h).

import type { SandboxClock } from '../shared/clock.ts';

export interface StoredReply {
  readonly status: number;
  /** The exact bytes first sent; replays send them again. */
  readonly body: string;
  readonly requestId: string;
}

type Entry =
  | { readonly state: 'in_flight'; readonly fingerprint: string; readonly firstSeenMs: number }
  | { readonly state: 'done'; readonly fingerprint: string; readonly firstSeenMs: number; readonly reply: StoredReply };

export type IdempotencyVerdict =
  | { readonly kind: 'execute' }
  | { readonly kind: 'replay'; readonly reply: StoredReply }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'in_flight' };

export class IdempotencyStore {
  private readonly entries = new Map<string, Entry>();
  private writesSincePrune = 0;

  constructor(
    private readonly clock: SandboxClock,
    private readonly ttlMs: number,
  ) {}

  /** Decides what a request with this key does; on `execute` the key is held until complete() or release(). */
  begin(key: string, fingerprint: string): IdempotencyVerdict {
    const existing = this.entries.get(key);
    if (existing !== undefined && !this.expired(existing)) {
      if (existing.state === 'in_flight') return { kind: 'in_flight' };
      return existing.fingerprint === fingerprint ? { kind: 'replay', reply: existing.reply } : { kind: 'mismatch' };
    }
    this.entries.set(key, { state: 'in_flight', fingerprint, firstSeenMs: this.clock.nowMs() });
    if (++this.writesSincePrune >= 1000) this.prune();
    return { kind: 'execute' };
  }

  complete(key: string, reply: StoredReply): void {
    const entry = this.entries.get(key);
    if (entry?.state !== 'in_flight') return;
    this.entries.set(key, { state: 'done', fingerprint: entry.fingerprint, firstSeenMs: entry.firstSeenMs, reply });
  }

  /** Forgets a key whose request failed validation: Stripe saves nothing then, so a retry executes. */
  release(key: string): void {
    if (this.entries.get(key)?.state === 'in_flight') this.entries.delete(key);
  }

  private expired(entry: Entry): boolean {
    // An in-flight key never expires under its own request.
    return entry.state === 'done' && this.clock.nowMs() - entry.firstSeenMs >= this.ttlMs;
  }

  private prune(): void {
    this.writesSincePrune = 0;
    for (const [key, entry] of this.entries) if (this.expired(entry)) this.entries.delete(key);
  }
}
