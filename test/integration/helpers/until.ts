// A wait for a condition, never a fixed sleep: polls `read` until `ok` holds, at most `timeoutMs`,
// then fails naming `what` and the last value read. A fixed sleep waits its whole length on a quiet
// machine and is too short on a loaded one.

export async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 15_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(v)?.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
