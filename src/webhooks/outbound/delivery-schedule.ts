// When a failed delivery is tried again: exponential backoff with jitter, for a window of three
// days from the delivery's creation; past the window the delivery is dead (visible, redeliverable
// by hand). Pure, so the schedule is a table test.

export interface DeliverySchedule {
  /** Delay after the first failure, before jitter. */
  readonly baseMs: number;
  /** No single wait is longer than this. */
  readonly capMs: number;
  /** Nothing is retried after createdAt + windowMs. */
  readonly windowMs: number;
}

export const DEFAULT_DELIVERY_SCHEDULE: DeliverySchedule = {
  baseMs: 10_000,
  capMs: 6 * 3600_000,
  windowMs: 3 * 24 * 3600_000,
};

/** The wait after `failures` failed attempts (1 = the first failure): base·2^(n-1), capped, then jittered into [½, 1]. */
export function retryDelayMs(failures: number, schedule: DeliverySchedule, random: () => number): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 40);
  const full = Math.min(schedule.capMs, schedule.baseMs * 2 ** exponent);
  // Jitter spreads retries of many deliveries that failed together (an endpoint coming back up).
  return Math.round(full * (0.5 + 0.5 * random()));
}

/** The next attempt, or null when it would fall outside the window: the delivery is dead. */
export function nextDeliveryAttempt(createdAt: Date, failures: number, now: Date, schedule: DeliverySchedule, random: () => number): Date | null {
  const at = new Date(now.getTime() + retryDelayMs(failures, schedule, random));
  return at.getTime() > createdAt.getTime() + schedule.windowMs ? null : at;
}
