// Child processes of a chaos run: the sandboxes alone (`switchyard sandbox`), K API and K worker
// processes (`switchyard start --role ...`, or the planted-bug entry), each with its own port so
// readiness is checked over HTTP, each killable with SIGKILL and restartable on the same port, and
// each started again when it exits during start, as a supervisor would.

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
  /** Headers of that GET (the vault's health needs its token). */
  readonly readyHeaders?: Readonly<Record<string, string>>;
}

/** A supervisor's pause before starting a process that exited again (systemd's RestartSec). */
const RESTART_PAUSE_MS = 500;

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

export class ManagedProcess {
  private child: ChildProcess | null = null;
  private log: WriteStream;
  private starting: Promise<void> | null = null;
  private stopped = false;
  restarts = 0;
  /** Times it exited before becoming ready (and was started again). */
  startFailures = 0;

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

  /**
   * Spawns the process and waits for its readiness URL. One that exits before it is ready is
   * started again after a pause, as a supervisor (systemd, Kubernetes) would; each such exit is
   * counted in startFailures. Only the deadline makes start() fail.
   */
  private async launch(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let lastExit = '';
    for (;;) {
      const child = this.spawnChild();
      for (;;) {
        if (child.exitCode !== null || child.signalCode !== null) break;
        try {
          const res = await fetch(this.spec.readyUrl, { headers: this.spec.readyHeaders ?? {}, signal: AbortSignal.timeout(1_000) });
          await res.arrayBuffer();
          if (res.status === 200) return;
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline) {
          // Not left half-started: a later start() must find the port free.
          child.kill('SIGKILL');
          throw new Error(`${this.spec.name} not ready after ${timeoutMs} ms${lastExit}; see ${this.spec.logFile}`);
        }
        await sleep(100);
      }
      if (this.stopped) throw new Error(`${this.spec.name} stopped during start`);
      this.startFailures += 1;
      lastExit = ` (${this.startFailures} exits during start, last code ${child.exitCode ?? child.signalCode})`;
      if (Date.now() > deadline) throw new Error(`${this.spec.name} not ready after ${timeoutMs} ms${lastExit}; see ${this.spec.logFile}`);
      await sleep(RESTART_PAUSE_MS);
    }
  }

  private spawnChild(): ChildProcess {
    const child = spawn(process.execPath, [...this.spec.args], { cwd: ROOT, env: this.spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    return child;
  }

  /** Answers 200 on its readiness URL now (the run's checks need every process back up). */
  async ready(): Promise<boolean> {
    if (!this.alive) return false;
    try {
      const res = await fetch(this.spec.readyUrl, { headers: this.spec.readyHeaders ?? {}, signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
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
    this.stopped = true;
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
