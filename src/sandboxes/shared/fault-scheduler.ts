// Faults waiting for the requests they will hit. A fault is consumed per HTTP request that reaches
// the sandbox for its op (a client's own retry is a second request and consumes a second firing).

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

interface PendingFault {
  readonly spec: SandboxFaultSpec;
  remaining: number;
}

export class FaultScheduler {
  private readonly pending: PendingFault[] = [];

  /** Returns the number of firings scheduled (the spec's count). */
  schedule(spec: SandboxFaultSpec): number {
    if (!Number.isInteger(spec.count) || spec.count < 1) throw new RangeError(`fault count must be a positive integer, got ${spec.count}`);
    if (spec.mode === 'latency' && (spec.latencyMs === undefined || spec.latencyMs < 0)) {
      throw new RangeError('a latency fault needs latencyMs >= 0');
    }
    this.pending.push({ spec, remaining: spec.count });
    return spec.count;
  }

  /**
   * Consumes one firing of the oldest fault matching this request. `op` null means the request is
   * not one of the money operations (a read): only `any` faults hit it.
   */
  take(op: FaultOp | null): FiredFault | null {
    const index = this.pending.findIndex((p) => p.spec.op === 'any' || (op !== null && p.spec.op === op));
    const found = this.pending[index];
    if (found === undefined) return null;
    found.remaining -= 1;
    if (found.remaining === 0) this.pending.splice(index, 1);
    return {
      op: found.spec.op,
      mode: found.spec.mode,
      latencyMs: found.spec.latencyMs ?? 0,
      process: found.spec.process ?? 'before',
    };
  }

  pendingCount(): number {
    return this.pending.reduce((sum, p) => sum + p.remaining, 0);
  }

  clear(): void {
    this.pending.length = 0;
  }
}
