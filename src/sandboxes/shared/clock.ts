// The sandbox clock: real time plus an offset that the control API advances, so tests can age
// idempotency keys and holds without sleeping. One clock may be shared by several sandboxes.

export class SandboxClock {
  private offsetMs = 0;

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  /** Unix seconds, as providers put in `created` fields. */
  nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  advance(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`clock can only move forward, got ${seconds}`);
    this.offsetMs += Math.round(seconds * 1000);
  }
}
