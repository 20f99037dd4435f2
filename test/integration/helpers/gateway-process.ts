// The gateway as an operator runs it: `npm start` or `node bin/switchyard.js start` in a child
// process (its own process group, so a kill reaches npm, tsx and node alike), ready when it
// prints "listening on <url>".

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

export type Launcher = 'npm start' | 'switchyard start';

export interface GatewayProcess {
  readonly url: string;
  /** Everything it printed (stdout and stderr), for failure messages. */
  output(): string;
  /** Signals the whole process group and waits for the exit. */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

export async function startGatewayProcess(launcher: Launcher, env: Readonly<Record<string, string>>, readyTimeoutMs = 60_000): Promise<GatewayProcess> {
  const [command, args] = launcher === 'npm start' ? ['npm', ['start', '--silent']] : [process.execPath, ['bin/switchyard.js', 'start', '--role', 'all']];
  const child: ChildProcess = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${launcher} not ready after ${readyTimeoutMs} ms:\n${output}`)), readyTimeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const m = /listening on (http:\/\/[^\s)]+)/.exec(output);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${launcher} exited (${code}) before it was ready:\n${output}`));
    });
  });
  return {
    url,
    output: () => output,
    async stop(signal) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, signal);
      } catch {
        return; // already gone
      }
      await exited;
      // npm may exit before its script does: make sure nothing of the group is left running.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone
      }
    },
  };
}
