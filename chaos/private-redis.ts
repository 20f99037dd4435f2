// A private redis-server on a free port: the chaos harness restarts it for real (kill -9, start
// again on the same port), and tests use it to flush or restart Redis without disturbing the shared one.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

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

export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  flushAll(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function waitForPing(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      client.disconnect();
      return;
    } catch {
      client.disconnect();
      if (Date.now() > deadline) throw new Error(`redis-server at ${url} did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitForPing(url);
  };
  const stopChild = async () => {
    const c = child;
    if (c === null || c.exitCode !== null || c.signalCode !== null) return; // already gone (a SIGKILL exit sets signalCode, not exitCode)
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  };
  await start();
  return {
    url,
    port,
    async flushAll() {
      const client = new Redis(url);
      await client.flushall();
      client.disconnect();
    },
    async restart() {
      await stopChild();
      await start();
    },
    stop: stopChild,
  };
}
