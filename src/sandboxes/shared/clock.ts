// The sandbox clock: real time plus an offset that the control API advances, so tests can age
// idempotency keys and holds without sleeping. The offset lives in the account's row in the
// sandbox database (every process shares it); this object caches it, refreshed by each request.

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

  /** Takes the offset the database holds (AccountStore calls it whenever it reads the account row). */
  sync(offsetMs: number): void {
    this.offsetMs = offsetMs;
  }
}
