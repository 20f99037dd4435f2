// Under `npm start` the process a supervisor (or a container runtime) signals is npm. The start
// script execs node, so no shell stands between them, and npm forwards SIGTERM and SIGINT to it:
// those stop the gateway gracefully. npm forwards no other signal: SIGHUP ends npm itself, and the
// gateway would run on with nobody supervising it. So a gateway started by npm stops gracefully
// once npm is gone (SIGHUP for a reload goes to the gateway's own pid, printed at start).

export interface NpmParentOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly intervalMs?: number;
}

/** When started by `npm start`: calls `stop` once the parent npm process has exited. */
export function stopWithNpm(stop: (why: string) => void, o: NpmParentOptions = {}): void {
  if ((o.env ?? process.env)['npm_lifecycle_event'] !== 'start') return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop(`npm (pid ${parent}) exited`);
  }, o.intervalMs ?? 1_000);
  timer.unref();
}
