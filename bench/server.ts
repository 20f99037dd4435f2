// A bench child process: `gateway` runs the whole gateway (role all) with the API on a loopback
// port (one of the bench's K replicas; the sandboxes run in their own process); `baseline` is a bare express endpoint that reads the raw body and answers 200. Each tells
// its parent the port over IPC and stops on {op:'stop'} or when the parent goes away.

import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRuntime } from '../src/app/runtime.ts';
import type { Runtime } from '../src/app/runtime.ts';
import { createApiApp } from '../src/api/app.ts';
import { listenApi } from '../src/api/server.ts';
import type { ApiServer } from '../src/api/server.ts';
import { DEFAULT_MAX_IN_FLIGHT } from '../src/api/defaults.ts';
import { positiveInteger } from '../src/cli/settings.ts';

function env(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === '') throw new Error(`${name} is not set`);
  return v;
}

function onStop(stop: () => Promise<void>): void {
  let stopping = false;
  const run = (): void => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    void stop().finally(() => process.exit(0));
  };
  process.on('message', (m: unknown) => {
    if ((m as { op?: unknown }).op === 'stop') run();
  });
  process.on('disconnect', run);
}

async function baseline(): Promise<void> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.post('/webhooks/:account', express.raw({ type: () => true, limit: '1mb' }), (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    res.status(200).json({ received: raw.length > 0 ? 1 : 0, duplicates: 0 });
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  onStop(() => new Promise((r) => server.close(() => r())));
  process.send?.({ port: (server.address() as AddressInfo).port });
}

/** BENCH_LOG=1: the gateway's log lines on stderr (off by default: logging costs CPU on the measured path). */
const benchLog = process.env['BENCH_LOG'] === '1' ? (line: string): void => void process.stderr.write(`${line}\n`) : (): void => undefined;

async function gateway(): Promise<void> {
  // BENCH_PORT: a port chosen by the parent (the out-of-process sandbox sends webhooks to it); else any.
  const server: ApiServer = await listenApi(Number(process.env['BENCH_PORT'] ?? 0), '127.0.0.1');
  const rt: Runtime = await startRuntime({
    role: 'all',
    databaseUrl: env('DATABASE_URL'),
    redisUrl: env('REDIS_URL'),
    configFile: env('BENCH_CONFIG_FILE'),
    queuePrefix: env('BENCH_QUEUE_PREFIX'),
    webhookBaseUrl: `http://127.0.0.1:${server.port}`,
    log: benchLog,
  });
  server.attach(
    createApiApp(rt, {
      log: benchLog,
      // The per-merchant limit would cap the bench, not the gateway; it is measured separately by its own tests.
      rateLimits: null,
      // SWITCHYARD_API_MAX_IN_FLIGHT, as `switchyard start` reads it (default 64).
      admission: { maxInFlight: positiveInteger(process.env, 'SWITCHYARD_API_MAX_IN_FLIGHT', DEFAULT_MAX_IN_FLIGHT) },
      mount: (app) => {
        app.get('/_bench/breakers', (_req, res) => {
          res.json(Object.fromEntries([...rt.connectors.keys()].map((name) => [name, rt.breakers.state(name)])));
        });
      },
    }),
  );
  onStop(async () => {
    await server.close(2_000);
    await rt.stop();
  });
  process.send?.({ port: server.port });
}

const mode = process.argv[2];
if (mode === 'baseline') await baseline();
else if (mode === 'gateway') await gateway();
else throw new Error(`unknown mode ${mode ?? '(none)'}: gateway | baseline`);
