// One opossum breaker per connector account per process, created once. Connectors return values
// and opossum counts only rejections, so availability outcomes become a tagged rejection inside the
// breaker and are unwrapped outside. Declines pass through as successes: a decline is the provider
// working. opossum's own timeout stays off: the SDK's timeout governs, and a breaker that gave up
// while the call was still in flight would report a guess.

import CircuitBreaker from 'opossum';
import type { CallOutcome } from '../core/outcome.ts';

export interface BreakerSettings {
  readonly error_threshold_pct: number;
  readonly volume_threshold: number;
  readonly reset_ms: number;
  readonly rolling_window_ms: number;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

const AVAILABILITY_UNKNOWNS = new Set(['timeout', 'connection_reset', 'truncated_body', 'server_error', 'unparseable']);

/** Outcomes that say the provider is not available (as opposed to answering, even with a no). */
export function isAvailabilityFailure(o: CallOutcome): boolean {
  if (o.kind === 'not_sent') return o.reason === 'connection_refused';
  if (o.kind === 'unknown') return AVAILABILITY_UNKNOWNS.has(o.reason);
  return false;
}

class AvailabilityFailure extends Error {
  override readonly name = 'AvailabilityFailure';
  constructor(readonly outcome: CallOutcome) {
    super(`provider unavailable: ${outcome.kind}`);
  }
}

type Call = () => Promise<CallOutcome>;

export class ConnectorBreakers {
  private readonly breakers = new Map<string, CircuitBreaker<[Call], CallOutcome>>();
  private readonly resets: Readonly<Record<string, number>>;
  private readonly windows: Readonly<Record<string, number>>;
  private readonly lastCall: Record<string, number> = {};
  /** Told of every state change (the breaker board publishes at once). */
  onChange: () => void = () => undefined;

  constructor(
    settings: Readonly<Record<string, BreakerSettings>>,
    private readonly log: (line: string) => void = () => {},
  ) {
    for (const [account, s] of Object.entries(settings)) this.breakers.set(account, this.create(account, s));
    this.resets = Object.freeze(Object.fromEntries(Object.entries(settings).map(([account, s]) => [account, s.reset_ms])));
    this.windows = Object.freeze(Object.fromEntries(Object.entries(settings).map(([account, s]) => [account, s.rolling_window_ms])));
  }

  /** Each account's rolling window: a process that called within it has a say in the fleet's view. */
  windowMs(account: string): number {
    return this.windows[account] ?? 10_000;
  }

  /** When this process last called each account through its breaker (ms since the epoch). */
  lastCalls(): Readonly<Record<string, number>> {
    return this.lastCall;
  }

  /** Each account's reset time in ms: the core waits at least this long before trying a refused call again. */
  resetTimes(): Readonly<Record<string, number>> {
    return this.resets;
  }

  private create(account: string, s: BreakerSettings): CircuitBreaker<[Call], CallOutcome> {
    const action = async (call: Call): Promise<CallOutcome> => {
      const outcome = await call();
      if (isAvailabilityFailure(outcome)) throw new AvailabilityFailure(outcome);
      return outcome;
    };
    const b = new CircuitBreaker(action, {
      timeout: false,
      errorThresholdPercentage: s.error_threshold_pct,
      volumeThreshold: s.volume_threshold,
      resetTimeout: s.reset_ms,
      rollingCountTimeout: s.rolling_window_ms,
      name: account,
    });
    b.on('open', () => {
      this.log(`breaker ${account}: open`);
      this.onChange();
    });
    b.on('halfOpen', () => {
      this.log(`breaker ${account}: half-open`);
      this.onChange();
    });
    b.on('close', () => {
      this.log(`breaker ${account}: closed`);
      this.onChange();
    });
    return b;
  }

  /** Runs a provider call through the account's breaker; only an open breaker turns into not_sent{breaker_open}. */
  async call(account: string, call: Call): Promise<CallOutcome> {
    const b = this.breakers.get(account);
    if (b === undefined) return call();
    this.lastCall[account] = Date.now();
    try {
      return await b.fire(call);
    } catch (err) {
      if (err instanceof AvailabilityFailure) return err.outcome;
      if ((err as { code?: string }).code === 'EOPENBREAKER') return { kind: 'not_sent', reason: 'breaker_open', detail: `breaker for ${account} is open` };
      throw err;
    }
  }

  state(account: string): BreakerState {
    const b = this.breakers.get(account);
    if (b === undefined || b.closed) return 'closed';
    return b.halfOpen ? 'half_open' : 'open';
  }

  states(): Record<string, BreakerState> {
    const out: Record<string, BreakerState> = {};
    for (const a of this.breakers.keys()) out[a] = this.state(a);
    return out;
  }

  /** Accounts whose breaker is open now: routing skips them, failover records why. */
  openAccounts(): Set<string> {
    return new Set([...this.breakers.keys()].filter((a) => this.state(a) === 'open'));
  }

  shutdown(): void {
    for (const b of this.breakers.values()) b.shutdown();
  }
}
