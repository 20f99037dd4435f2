// The run's load balancer: merchants' requests and the sandboxes' webhooks reach the API
// processes through it, round robin over the live ones. A backend that dies mid-request gives the
// client a 502 (it retries, with the same idempotency key or the same webhook); while no backend
// is alive it holds requests for a while, as a load balancer with a queue does, instead of
// failing them all at once.

import { createServer, request } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Backend {
  readonly port: number;
  readonly alive: boolean;
}

export interface Proxy {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const HOLD_MS = 20_000;

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function startProxy(backends: () => readonly Backend[], port = 0): Promise<Proxy> {
  let next = 0;
  const pick = async (): Promise<Backend | null> => {
    const deadline = Date.now() + HOLD_MS;
    for (;;) {
      const live = backends().filter((b) => b.alive);
      if (live.length > 0) return live[next++ % live.length]!;
      if (Date.now() > deadline) return null;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const forward = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    const backend = await pick();
    if (backend === null) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('no live API process');
      return;
    }
    const upstream = request(
      { host: '127.0.0.1', port: backend.port, method: req.method, path: req.url, headers: { ...req.headers, 'content-length': String(body.length) } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        up.on('error', () => res.destroy());
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain', 'x-chaos-proxy': 'backend-lost' }).end('backend lost');
      else res.destroy();
    });
    upstream.end(body);
  };

  const server: Server = createServer((req, res) => {
    forward(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
