// SIGTERM/SIGINT stop a process once (requests in flight finish), a second signal exits at once:
// the gateway's roles and the vault's share it.

import { safeErrorText } from '../observability/safe-error-text.ts';

/** Installs the handlers; returns the handler, for other reasons to stop the same way. */
export function stopOnTermSignals(stop: () => Promise<void>, print: (line: string) => void): (why: string) => void {
  let signalled = false;
  const onSignal = (signal: string): void => {
    if (signalled) process.exit(1);
    signalled = true;
    print(`${signal}: shutting down`);
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        print(`shutdown failed: ${safeErrorText(err)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return onSignal;
}
