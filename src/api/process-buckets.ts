// Token buckets in process memory, for the customer's authentication pages only (per attempt and
// per client address, src/api/authentication-routes.ts): each API process allows the configured
// rate. The merchant API's limits are shared by every process, in Redis (src/api/rate-limit.ts).

export interface RateLimit {
  readonly perSecond: number;
  readonly burst: number;
}

/** Buckets one limiter keeps by default: keys from the network (client addresses) must not grow memory without bound. */
export const DEFAULT_MAX_BUCKETS = 50_000;

export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limit: RateLimit,
    private readonly clock: () => number = () => Date.now(),
    private readonly maxBuckets = DEFAULT_MAX_BUCKETS,
  ) {}

  /** 0 when allowed; otherwise seconds until a token is free. */
  take(key: string): number {
    const now = this.clock();
    if (!this.buckets.has(key) && this.buckets.size >= this.maxBuckets) this.makeRoom(now);
    const b = this.buckets.get(key) ?? { tokens: this.limit.burst, at: now };
    b.tokens = Math.min(this.limit.burst, b.tokens + ((now - b.at) / 1000) * this.limit.perSecond);
    b.at = now;
    // Re-inserted: the map's order is then least recently used first (makeRoom drops from the front).
    this.buckets.delete(key);
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.limit.perSecond));
  }

  /** What take() would answer, without taking: 0 while a token is left. */
  peek(key: string): number {
    const b = this.buckets.get(key);
    if (b === undefined) return 0;
    const tokens = Math.min(this.limit.burst, b.tokens + ((this.clock() - b.at) / 1000) * this.limit.perSecond);
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.limit.perSecond));
  }

  get size(): number {
    return this.buckets.size;
  }

  /** A full bucket is the same as none: drop those; if every bucket is in use, the oldest go. */
  private makeRoom(now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.limit.perSecond >= this.limit.burst) this.buckets.delete(key);
    }
    for (const key of this.buckets.keys()) {
      if (this.buckets.size < this.maxBuckets) break;
      this.buckets.delete(key);
    }
  }
}
