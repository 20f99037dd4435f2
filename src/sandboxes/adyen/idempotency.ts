// Adyen's idempotency (docs: development-resources/api-idempotency): a key remembers the first
// response and replays it; a duplicate while the first is still running gets 409 errorCode 704.
// Adyen documents no payload comparison, so a same-key request with other fields is replayed too.

import type { SandboxClock } from '../shared/clock.ts';

export interface StoredResponse {
  readonly status: number;
  readonly body: string;
}

type Entry = { readonly state: 'in_flight'; readonly firstSeenMs: number } | { readonly state: 'done'; readonly firstSeenMs: number; readonly response: StoredResponse };

export type KeyVerdict = { readonly kind: 'execute' } | { readonly kind: 'replay'; readonly response: StoredResponse } | { readonly kind: 'in_flight' };

export class AdyenIdempotencyStore {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: SandboxClock,
    private readonly ttlMs: number,
  ) {}

  begin(key: string): KeyVerdict {
    const existing = this.entries.get(key);
    if (existing !== undefined && !(existing.state === 'done' && this.clock.nowMs() - existing.firstSeenMs >= this.ttlMs)) {
      return existing.state === 'in_flight' ? { kind: 'in_flight' } : { kind: 'replay', response: existing.response };
    }
    this.entries.set(key, { state: 'in_flight', firstSeenMs: this.clock.nowMs() });
    return { kind: 'execute' };
  }

  complete(key: string, response: StoredResponse): void {
    const entry = this.entries.get(key);
    if (entry?.state === 'in_flight') this.entries.set(key, { state: 'done', firstSeenMs: entry.firstSeenMs, response });
  }

  /** A request refused by validation stores nothing: the same key may be used again. */
  release(key: string): void {
    if (this.entries.get(key)?.state === 'in_flight') this.entries.delete(key);
  }
}
