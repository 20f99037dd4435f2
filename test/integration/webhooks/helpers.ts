// A gateway listening on HTTP with the webhook routers mounted as the API will mount them (intake
// before any JSON parser), plus a merchant endpoint receiver that records what it is sent.

import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { RequestHandler } from 'express';
import type { RuntimeOptions } from '../../../src/app/runtime.ts';
import { createJwksRouter, createWebhookEndpointsRouter, createWebhookIntakeRouter } from '../../../src/webhooks/index.ts';
import { startTestGateway } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

export interface WebhookGateway extends TestGateway {
  readonly url: string;
  /** Merchant API call as this gateway's merchant. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown>; contentType: string | null }>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function startWebhookGateway(name: string, yaml: string, over: Partial<RuntimeOptions> = {}): Promise<WebhookGateway> {
  let app: express.Express | null = null;
  // The port must be known before the runtime starts: its sandboxes post webhooks to it.
  const server = createServer((req, res) => {
    if (app === null) res.writeHead(503).end();
    else app(req, res);
  });
  const url = await listen(server);
  const gw = await startTestGateway(name, yaml, { webhookBaseUrl: url, ...over });
  const asMerchant: RequestHandler = (req, res, next) => {
    const merchant = req.get('x-test-merchant');
    if (merchant !== undefined) res.locals['merchantId'] = merchant;
    next();
  };
  const a = express();
  a.use(createWebhookIntakeRouter(gw.rt.webhooks));
  a.use(createJwksRouter(gw.rt.webhooks));
  a.use(createWebhookEndpointsRouter(gw.rt.webhooks, asMerchant));
  app = a;
  return {
    ...gw,
    url,
    async api(method, path, body) {
      const res = await fetch(`${url}${path}`, {
        method, headers: { 'x-test-merchant': gw.merchantId, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), contentType: res.headers.get('content-type') };
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await gw.close();
    },
  };
}

export interface Received {
  readonly path: string;
  readonly body: Buffer;
  readonly headers: IncomingMessage['headers'];
  /** When the request arrived (its delivery started). */
  readonly started: number;
  /** When it was answered. */
  readonly at: number;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** The most requests to one path open at once (what the endpoint saw, whichever process sent them). */
  readonly maxInFlight: Map<string, number>;
  /** How a path answers: status (default 200) and delay before answering. */
  behave(path: string, how: { status?: number; delayMs?: number }): void;
  waitFor(pred: (r: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const behaviour = new Map<string, { status?: number; delayMs?: number }>();
  const open = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const started = Date.now();
    const path = req.url ?? '/';
    const now = (open.get(path) ?? 0) + 1;
    open.set(path, now);
    maxInFlight.set(path, Math.max(now, maxInFlight.get(path) ?? 0));
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      open.set(path, (open.get(path) ?? 1) - 1);
    };
    res.on('close', close);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const how = behaviour.get(path) ?? {};
      const answer = () => {
        received.push({ path, body: Buffer.concat(chunks), headers: req.headers, started, at: Date.now() });
        // Counted as closed once answered: the next request the sender makes after this answer must not count it.
        close();
        res.writeHead(how.status ?? 200).end('ok');
      };
      if (how.delayMs === undefined) answer();
      else setTimeout(answer, how.delayMs);
    });
  });
  const url = await listen(server);
  return {
    url, received, maxInFlight,
    behave: (path, how) => behaviour.set(path, how),
    async waitFor(pred, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pred(received)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met in ${timeoutMs} ms (${received.length} received)`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return received;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function until<T>(probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let v = await probe();
  while (!done(v)) {
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(v).slice(0, 400)}`);
    await new Promise((r) => setTimeout(r, 50));
    v = await probe();
  }
  return v;
}
