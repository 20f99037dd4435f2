// The HTTP listener. It listens before the runtime starts (the in-process sandboxes need the
// gateway's own URL for their webhooks, and PORT=0 is only known after listening) and answers
// 503 until an app is attached. Closing stops accepting, lets requests in flight finish, then
// drops what is left.

import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { sendProblem } from './http.ts';
import { ApiProblem } from './problems.ts';
import express from 'express';

export interface ApiServer {
  readonly port: number;
  readonly url: string;
  attach(app: Express): void;
  close(graceMs?: number): Promise<void>;
}

function startingApp(): Express {
  const app = express();
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.use((_req, res) => {
    sendProblem(res, new ApiProblem('service_unavailable', 'the gateway is starting', undefined, 1));
  });
  return app;
}

export async function listenApi(port: number, host = '0.0.0.0'): Promise<ApiServer> {
  let app: Express = startingApp();
  const server: Server = createServer((req, res) => {
    app(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    port: actual,
    url: `http://localhost:${actual}`,
    attach(next) {
      app = next;
    },
    async close(graceMs = 10_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}
