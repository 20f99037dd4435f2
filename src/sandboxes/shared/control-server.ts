// The control API on its own port, separate from every provider listener.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { SandboxControl } from './control.ts';
import { createControlRouter } from './control-router.ts';

export interface ControlServerOptions {
  readonly port: number; // 0 = ephemeral
  readonly host?: string;
  readonly sandboxes: readonly SandboxControl[];
}

export interface ControlServer {
  readonly host: string;
  readonly port: number;
  /** Base URL; the API lives under `${url}/_sandbox/{account}/...`. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startControlServer(options: ControlServerOptions): Promise<ControlServer> {
  const host = options.host ?? '127.0.0.1';
  const app = express();
  app.disable('x-powered-by');
  app.use(createControlRouter(options.sandboxes));
  app.use((_req, res) => {
    res.status(404).json({ error: { message: 'not a sandbox control route', field: null } });
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    host,
    port,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
