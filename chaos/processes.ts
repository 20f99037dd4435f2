// Child processes of a chaos run: the sandboxes alone (`switchyard sandbox`), K API and K worker
// processes (`switchyard start --role ...`, or the planted-bug entry), each with its own port so
// readiness is checked over HTTP, and each killable with SIGKILL and restartable on the same port.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { join } from 'node:path';

export const ROOT = new URL('..', import.meta.url).pathname;

export interface ProcessSpec {
  readonly name: string;
  /** The port it serves HTTP on (the proxy forwards there). */
  readonly port: number;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Where its stdout and stderr go (appended across restarts). */
  readonly logFile: string;
  /** GET this URL until 200 to know it is ready. */
  readonly readyUrl: string;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

export class ManagedProcess {
  private child: ChildProcess | null = null;
  private log: WriteStream;
  private starting: Promise<void> | null = null;
  restarts = 0;

  constructor(readonly spec: ProcessSpec) {
    this.log = createWriteStream(spec.logFile, { flags: 'a' });
  }

  get port(): number {
    return this.spec.port;
  }

  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null && this.starting === null;
  }

  async start(timeoutMs = 90_000): Promise<void> {
    this.starting ??= this.launch(timeoutMs).finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async launch(timeoutMs: number): Promise<void> {
    const child = spawn(process.execPath, [...this.spec.args], { cwd: ROOT, env: this.spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${this.spec.name} exited during start (code ${child.exitCode}); see ${this.spec.logFile}`);
      try {
        const res = await fetch(this.spec.readyUrl, { signal: AbortSignal.timeout(1_000) });
        await res.arrayBuffer();
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`${this.spec.name} not ready after ${timeoutMs} ms; see ${this.spec.logFile}`);
      await sleep(100);
    }
  }

  /** SIGKILL: no shutdown hooks, no flushing — a crash. */
  async kill(): Promise<void> {
    const c = this.child;
    if (c === null || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  }

  async restart(): Promise<void> {
    await this.kill();
    this.restarts += 1;
    await this.start();
  }

  /** SIGTERM, then SIGKILL if it does not go within the grace period. */
  async stop(graceMs = 10_000): Promise<void> {
    const c = this.child;
    if (c !== null && c.exitCode === null && c.signalCode === null) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => c.kill('SIGKILL'), graceMs);
        c.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        c.kill('SIGTERM');
      });
    }
    await new Promise<void>((r) => this.log.end(r));
  }
}

export const CLI = join(ROOT, 'bin', 'switchyard.js');
