// Faults waiting for the requests they will hit, queued in the sandbox database so a fault
// scheduled through any process's control API hits the next matching request whichever process
// serves it. A fault is consumed per HTTP request that reaches the sandbox for its op (a client's
// own retry is a second request and consumes a second firing).

import type { AccountStore, FaultRecord } from './account-store.ts';
import type { FaultMode, FaultOp, FaultSpec } from './control.ts';

/**
 * Modes beyond the shared control API's: `error_500_after_processing` performs the operation, then
 * answers 500 and stores that answer under the idempotency key (Stripe replays stored 500s).
 */
export type SandboxFaultMode = FaultMode | 'error_500_after_processing';

export interface SandboxFaultSpec extends Omit<FaultSpec, 'mode'> {
  readonly mode: SandboxFaultMode;
}

export interface FiredFault {
  readonly op: FaultOp;
  readonly mode: SandboxFaultMode;
  readonly latencyMs: number;
  readonly process: 'before' | 'after';
}

export class FaultScheduler {
  constructor(private readonly store: AccountStore) {}

  /** Returns the number of firings scheduled (the spec's count). */
  async schedule(spec: SandboxFaultSpec): Promise<number> {
    return (await this.scheduleTracked(spec)).scheduled;
  }

  /** Also says the fault's id, which GET .../faults lists with the requests it hit. */
  async scheduleTracked(spec: SandboxFaultSpec): Promise<{ scheduled: number; id: number }> {
    if (!Number.isInteger(spec.count) || spec.count < 1) throw new RangeError(`fault count must be a positive integer, got ${spec.count}`);
    if (spec.mode === 'latency' && (spec.latencyMs === undefined || spec.latencyMs < 0)) {
      throw new RangeError('a latency fault needs latencyMs >= 0');
    }
    return { scheduled: spec.count, id: await this.store.scheduleFault(spec) };
  }

  /**
   * Consumes one firing of the oldest fault matching this request. `op` null means the request is
   * not one of the money operations (a read): only `any` faults hit it. `alsoOp`: a second op the
   * request belongs to (`release` for a void or refund that releases an approval).
   */
  async take(op: FaultOp | null, alsoOp: FaultOp | null = null, idempotencyKey: string | null = null): Promise<FiredFault | null> {
    const row = await this.store.takeFault(op, alsoOp, idempotencyKey);
    return row === null ? null : { op: row.op, mode: row.mode as SandboxFaultMode, latencyMs: row.latencyMs, process: row.process };
  }

  /** Every fault still queued or fired, with the idempotency keys of the requests it hit (oldest first). */
  list(): Promise<readonly FaultRecord[]> {
    return this.store.listFaults();
  }

  pendingCount(): Promise<number> {
    return this.store.pendingFaults();
  }

  /** Drops every queued fault; returns the firings that were still pending. */
  clear(): Promise<number> {
    return this.store.clearFaults();
  }
}
