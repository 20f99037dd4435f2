// The gateway as an operator runs it: `npm start` or `node bin/switchyard.js start` (or the vault
// alone: `start --role vault`) in a child process (its own process group, so a kill reaches npm,
// tsx and node alike), ready when it prints "listening on <url>".

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';

/** `start script`: the exact command package.json's start runs (`sh -c "<scripts.start>"`), as npm runs it. */
export type Launcher = 'npm start' | 'switchyard start' | 'start script' | 'switchyard start --role vault' | 'switchyard start --role api';

export interface GatewayProcess {
  readonly url: string;
  /** The spawned process: npm, the shell running the start script, or node. */
  readonly pid: number;
  /** Its exit (code, or the signal that ended it). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it printed (stdout and stderr), for failure messages. */
  output(): string;
  /** Signals the whole process group and waits for the exit. */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

export async function startGatewayProcess(launcher: Launcher, env: Readonly<Record<string, string>>, readyTimeoutMs = 60_000): Promise<GatewayProcess> {
  const [command, args] = launcher === 'npm start' ? ['npm', ['start', '--silent']]
    : launcher === 'start script' ? ['sh', ['-c', (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start]]
      : [process.execPath, ['bin/switchyard.js', 'start', '--role', launcher === 'switchyard start' ? 'all' : launcher === 'switchyard start --role api' ? 'api' : 'vault']];
  const child: ChildProcess = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
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
    pid: child.pid!,
    exited,
    output: () => output,
    async stop(signal) {
      if (child.exitCode !== null || child.signalCode !== null) {
        // It is gone, but what it started may not be (a gateway orphaned by its npm): nothing of the group is left.
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // the group is gone
        }
        return;
      }
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
