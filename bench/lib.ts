// Shared bench plumbing: a keep-alive HTTP client over node:http, closed- and open-loop drivers
// that stop by themselves, percentiles, and the child processes (gateway, bare baseline).

import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';

export interface HttpResult {
  readonly status: number;
  readonly body: string;
  readonly ms: number;
}

export class HttpClient {
  private readonly agent: Agent;
  constructor(readonly port: number, maxSockets: number) {
    this.agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  send(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<HttpResult> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: this.port, method, path, agent: this.agent, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
          res.on('error', reject);
        },
      );
      req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  async json(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; json: Record<string, unknown>; ms: number }> {
    const r = await this.send(method, path, { 'content-type': 'application/json', ...headers }, body === undefined ? undefined : JSON.stringify(body));
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(r.body) as Record<string, unknown>;
    } catch {
      json = { raw: r.body };
    }
    return { status: r.status, json, ms: r.ms };
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Nearest-rank percentile of unsorted samples (0 when there are none). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return 0;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? 0;
}

export const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface LoopStats {
  readonly ok: number;
  readonly errors: number;
  readonly seconds: number;
  readonly latencies: number[];
  readonly firstError: string | null;
}

/** `workers` loops, each calling `fn(worker)` back to back until `seconds` have passed. */
export async function closedLoop(workers: number, seconds: number, fn: (worker: number) => Promise<number | null>): Promise<LoopStats> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < deadline) {
        try {
          const ms = await fn(w);
          if (ms === null) errors++;
          else latencies.push(ms);
        } catch (err) {
          errors++;
          firstError ??= (err as Error).message;
          await sleep(5);
        }
      }
    }),
  );
  return { ok: latencies.length, errors, seconds: (performance.now() - started) / 1000, latencies, firstError };
}

/** Starts `fn` at a fixed rate for `seconds` (open loop: a slow answer does not slow the arrivals). */
export async function openLoop(ratePerS: number, seconds: number, fn: () => Promise<number | null>): Promise<LoopStats> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  const pending: Promise<void>[] = [];
  const started = performance.now();
  const total = Math.max(1, Math.round(ratePerS * seconds));
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / ratePerS;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    pending.push(
      fn().then(
        (ms) => {
          if (ms === null) errors++;
          else latencies.push(ms);
        },
        (err: unknown) => {
          errors++;
          firstError ??= (err as Error).message;
        },
      ),
    );
  }
  await Promise.all(pending);
  return { ok: latencies.length, errors, seconds: (performance.now() - started) / 1000, latencies, firstError };
}

/** BENCH_CPU_PROF=<dir>: the gateway child writes a V8 CPU profile there when it stops (read it with bench/cpu-summary.ts). */
function profileArgs(mode: string): string[] {
  const dir = process.env['BENCH_CPU_PROF'];
  return dir === undefined || dir === '' || mode !== 'gateway' ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

export interface Child {
  readonly port: number;
  stop(): Promise<void>;
}

/** Forks bench/server.ts in `mode` under tsx and waits for the port it listens on. */
export async function startChild(mode: 'gateway' | 'baseline', env: Record<string, string> = {}): Promise<Child> {
  const file = fileURLToPath(new URL('./server.ts', import.meta.url));
  const child: ChildProcess = fork(file, [mode], { execArgv: ['--import', 'tsx', ...profileArgs(mode)], env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${mode} did not start within 60 s`)), 60_000);
    child.once('exit', (code) => reject(new Error(`${mode} exited with ${code ?? 'a signal'} before listening`)));
    child.on('message', (m: unknown) => {
      const p = (m as { port?: unknown }).port;
      if (typeof p === 'number') {
        clearTimeout(timer);
        resolve(p);
      }
    });
  });
  return {
    port,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.send({ op: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
