// A worker child process the crash tests kill with SIGKILL at random moments and start again.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

export class KillableWorker {
  kills = 0;
  private child: ChildProcess | null = null;

  constructor(
    /** A script that starts a worker runtime and prints one line when ready. */
    private readonly script: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  get running(): boolean {
    return this.child !== null;
  }

  async start(): Promise<void> {
    const c = spawn(process.execPath, ['--import', 'tsx', this.script], { env: this.env, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      c.stdout.once('data', () => resolve());
      c.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
    });
    this.child = c;
  }

  async kill(): Promise<void> {
    const c = this.child;
    this.child = null;
    if (c === null || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
    this.kills++;
  }
}
