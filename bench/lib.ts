// Shared bench plumbing: a keep-alive HTTP client over node:http, closed- and open-loop drivers
// that stop by themselves, percentiles, and the child processes (gateway, bare baseline).

import { fork, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface HttpResult {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
  readonly ms: number;
}

export interface JsonResult {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly json: Record<string, unknown>;
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
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
          res.on('error', reject);
        },
      );
      req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  async json(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<JsonResult> {
    const r = await this.send(method, path, { 'content-type': 'application/json', ...headers }, body === undefined ? undefined : JSON.stringify(body));
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(r.body) as Record<string, unknown>;
    } catch {
      json = { raw: r.body };
    }
    return { status: r.status, headers: r.headers, json, ms: r.ms };
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The gateway replicas as one client: each request goes to the next process in turn (a round-robin load balancer). */
export class GatewayPool {
  private next = 0;
  readonly clients: readonly HttpClient[];
  constructor(ports: readonly number[], maxSocketsEach: number) {
    this.clients = ports.map((p) => new HttpClient(p, maxSocketsEach));
  }

  private pick(): HttpClient {
    const c = this.clients[this.next % this.clients.length]!;
    this.next++;
    return c;
  }

  send(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<HttpResult> {
    return this.pick().send(method, path, headers, body);
  }

  json(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<JsonResult> {
    return this.pick().json(method, path, headers, body);
  }

  close(): void {
    for (const c of this.clients) c.close();
  }
}

/** What the stages drive: one gateway process or a pool of them. */
export type Http = Pick<HttpClient, 'send' | 'json'>;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
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
  readonly pid: number;
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
    pid: child.pid ?? 0,
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

/**
 * `switchyard sandbox` in its own process (the CLI under tsx, not through npm, so `pid` is the
 * sandbox itself): the providers on the config's loopback endpoints, their control API on
 * `controlPort`, webhooks to `gatewayUrl`. Resolves once the control API answers.
 */
export async function startSandboxProcess(o: { configFile: string; databaseUrl: string; controlPort: number; gatewayUrl: string }): Promise<Child> {
  const cli = fileURLToPath(new URL('../src/cli/index.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'sandbox', '--control-port', String(o.controlPort), '--gateway-url', o.gatewayUrl], {
    env: { ...process.env, SWITCHYARD_CONFIG: o.configFile, DATABASE_URL: o.databaseUrl }, stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exited: number | null | undefined;
  child.once('exit', (code) => {
    exited = code;
  });
  const deadline = Date.now() + 60_000;
  const control = new HttpClient(o.controlPort, 1);
  try {
    for (;;) {
      if (exited !== undefined) throw new Error(`switchyard sandbox exited with ${exited ?? 'a signal'} before its control API answered`);
      const up = await control.send('GET', '/_sandbox').then((r) => r.status === 200, () => false);
      if (up) break;
      if (Date.now() > deadline) throw new Error('switchyard sandbox did not answer within 60 s');
      await sleep(100);
    }
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  } finally {
    control.close();
  }
  return {
    port: o.controlPort,
    pid: child.pid ?? 0,
    async stop() {
      if (child.exitCode !== null || exited !== undefined) return;
      const done = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await done;
      clearTimeout(timer);
    },
  };
}
