// Start-up against dependencies that may be blipping: a transient failure (src/cli/transient-errors.ts)
// is retried with capped exponential backoff and jitter until a deadline, one log line per retry;
// a permanent one is thrown at once. Jitter keeps a fleet restarted together from retrying in step.

import { DatabaseUnreachableError } from '../store/database-url.ts';
import { DatabaseRefusedError, RedisUnreachableError } from './preflight.ts';
import { describeStartError, isTransientStartError } from './transient-errors.ts';

export class StartGaveUpError extends Error {
  override readonly name = 'StartGaveUpError';
}

export interface RetryOptions {
  /** When start-up began (Date.now()); several steps share one deadline. */
  readonly startedAt: number;
  /** How long after startedAt to keep retrying transient failures. */
  readonly timeoutMs: number;
  readonly log: (line: string) => void;
  readonly firstDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly random?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

/** Half the backoff fixed, half random ("equal jitter"): spread out, but never a busy loop. */
export function backoffMs(attempt: number, first: number, max: number, random: () => number): number {
  const base = Math.min(max, first * 2 ** Math.min(attempt - 1, 30));
  return Math.round(base / 2 + random() * (base / 2));
}

export async function retryStart<T>(what: string, run: () => Promise<T>, o: RetryOptions): Promise<T> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = o.startedAt + o.timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!isTransientStartError(err)) throw err;
      const left = deadline - now();
      if (left <= 0) {
        const waited = Math.round((now() - o.startedAt) / 1000);
        throw new StartGaveUpError(`${describeStartError(err)} (still failing after ${waited} s and ${attempt} attempts; SWITCHYARD_START_TIMEOUT sets how long to wait)`, { cause: err });
      }
      const delay = Math.min(left, backoffMs(attempt, o.firstDelayMs ?? 250, o.maxDelayMs ?? 5_000, o.random ?? Math.random));
      o.log(`start: ${what} not available, retry ${attempt} in ${(delay / 1000).toFixed(1)} s (${Math.ceil(left / 1000)} s left): ${describeStartError(err)}`);
      await sleep(delay);
    }
  }
}

/** The one line to print for a failure at start, or null when it is not one we explain. */
export function startFailureLine(err: unknown): string | null {
  if (err instanceof DatabaseUnreachableError || err instanceof RedisUnreachableError || err instanceof DatabaseRefusedError || err instanceof StartGaveUpError) return err.message;
  return null;
}
