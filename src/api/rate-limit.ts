// Per-merchant token bucket, in process memory: enough to stop one merchant from starving the
// others on one API process. Several API processes each allow the configured rate.

import type { NextFunction, Request, Response } from 'express';
import { merchantIdOf } from './http.ts';
import { ApiProblem } from './problems.ts';

export interface RateLimit {
  readonly perSecond: number;
  readonly burst: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limit: RateLimit,
    private readonly clock: () => number = () => Date.now(),
  ) {}

  /** 0 when allowed; otherwise seconds until a token is free. */
  take(key: string): number {
    const now = this.clock();
    const b = this.buckets.get(key) ?? { tokens: this.limit.burst, at: now };
    b.tokens = Math.min(this.limit.burst, b.tokens + ((now - b.at) / 1000) * this.limit.perSecond);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.limit.perSecond));
  }
}

export function rateLimitByMerchant(limit: RateLimit) {
  const buckets = new TokenBuckets(limit);
  return (_req: Request, res: Response, next: NextFunction): void => {
    const wait = buckets.take(merchantIdOf(res));
    if (wait > 0) throw new ApiProblem('rate_limited', `more than ${limit.perSecond} requests per second; retry in ${wait} s`, undefined, wait);
    next();
  };
}
