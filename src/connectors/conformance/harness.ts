// Kit plumbing: drives a connector through the gateway's operations with real ids and keys, receives
// the sandbox's webhooks, and serves scripted raw HTTP for situations no sandbox produces.

import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { newId } from '../../core/ids.ts';
import { providerIdempotencyKey } from '../../core/keys.ts';
import type { KeyedOperation } from '../../core/keys.ts';
import type { CallOutcome } from '../../core/outcome.ts';
import type { AuthorizeRequest, Connector, PaymentMethodInput } from '../contract.ts';
import type { WireReply } from './subject.ts';

export interface PaymentHandle {
  readonly paymentId: string;
  readonly attemptId: string;
  readonly amount: number;
  readonly currency: string;
  readonly providerRef: string | null;
  readonly authKey: string;
  readonly prepared: CallOutcome | null;
  readonly outcome: CallOutcome;
}

export interface AuthorizeOptions {
  readonly card?: string;
  readonly paymentMethod?: PaymentMethodInput;
  readonly amount?: number;
  readonly currency?: string;
  readonly captureMethod?: 'manual' | 'automatic';
  readonly paymentId?: string;
  readonly attemptId?: string;
  /** Overrides the authorize key (replays, length limits). */
  readonly authKey?: string;
}

export function keyFor(connector: Connector, paymentId: string, op: KeyedOperation, n = 1): string {
  return providerIdempotencyKey(paymentId, op, n, connector.policy.maxKeyLength);
}

export function authorizeRequest(connector: Connector, o: AuthorizeOptions = {}): Omit<AuthorizeRequest, 'providerRef'> {
  const paymentId = o.paymentId ?? newId('payment');
  return {
    paymentId,
    attemptId: o.attemptId ?? newId('attempt'),
    amount: o.amount ?? 1000,
    currency: o.currency ?? 'EUR',
    captureMethod: o.captureMethod ?? 'manual',
    paymentMethod: o.paymentMethod ?? { testCard: o.card ?? '4242424242424242' },
    idempotencyKey: o.authKey ?? keyFor(connector, paymentId, 'auth'),
  };
}

/** prepare (when the connector prepares) then authorize, as the core's effects would run them. */
export async function authorizePayment(connector: Connector, o: AuthorizeOptions = {}): Promise<PaymentHandle> {
  const base = authorizeRequest(connector, o);
  let providerRef: string | null = null;
  let prepared: CallOutcome | null = null;
  if (connector.capabilities.preparesAuthorization && connector.prepare !== undefined) {
    prepared = await connector.prepare({ ...base, idempotencyKey: keyFor(connector, base.paymentId, 'prepare') });
    if (prepared.kind !== 'succeeded') return { ...base, providerRef: null, authKey: base.idempotencyKey, prepared, outcome: prepared };
    providerRef = prepared.providerRef;
  }
  const outcome = await connector.authorize({ ...base, providerRef });
  const ref = 'providerRef' in outcome && outcome.providerRef !== undefined ? outcome.providerRef : providerRef;
  return { ...base, providerRef: ref, authKey: base.idempotencyKey, prepared, outcome };
}

export interface ReceivedWebhook {
  readonly rawBody: Buffer;
  readonly headers: IncomingHttpHeaders;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Resolves with the first delivery whose body contains `needle`, or null after `timeoutMs`. */
  waitFor(needle: string, timeoutMs?: number): Promise<ReceivedWebhook | null>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ rawBody: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(200).end();
    });
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    async waitFor(needle, timeoutMs = 5_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const hit = received.find((r) => r.rawBody.includes(needle));
        if (hit !== undefined || Date.now() > until) return hit ?? null;
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => closeServer(server),
  };
}

export interface StubServer {
  readonly host: string;
  readonly port: number;
  /** HTTP requests or TCP connections that reached the stub. */
  hits(): number;
  close(): Promise<void>;
}

/** Answers every request with the scripted reply, in the provider's wire format. */
export async function startWireStub(reply: WireReply): Promise<StubServer> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits += 1;
    req.resume();
    req.on('end', () => {
      const headers = { ...reply.headers, 'content-length': String(Buffer.byteLength(reply.body)) };
      if (reply.truncate === true) {
        res.writeHead(reply.status, headers);
        res.write(reply.body.slice(0, Math.floor(reply.body.length / 2)));
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      res.writeHead(reply.status, headers).end(reply.body);
    });
  });
  const port = await listen(server);
  return { host: '127.0.0.1', port, hits: () => hits, close: () => closeServer(server) };
}

/**
 * Resets the first connection after reading the request, then stops listening: the SDK's forced
 * retry of the reset meets a refused port. Only the first error is evidence the request may have landed.
 */
export async function startResetThenRefuse(): Promise<StubServer> {
  let hits = 0;
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    hits += 1;
    sockets.add(socket);
    socket.once('data', () => {
      server.close();
      socket.resetAndDestroy();
    });
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  return {
    host: '127.0.0.1',
    port,
    hits: () => hits,
    close: async () => {
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A port nothing listens on: bound, read, released. */
export async function refusedPort(): Promise<number> {
  const server = createTcpServer();
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
