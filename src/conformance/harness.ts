// Kit plumbing: drives a connector through the gateway's operations with real ids and keys, receives
// the sandbox's webhooks, and serves scripted raw HTTP for situations no sandbox produces.

import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import { createServer as createTcpServer } from 'node:net';
import { TLSSocket, createSecureContext } from 'node:tls';
import type { AddressInfo, Socket } from 'node:net';
import { newId } from '../core/ids.ts';
import { providerIdempotencyKey } from '../core/keys.ts';
import type { KeyedOperation } from '../core/keys.ts';
import type { CallOutcome } from '../core/outcome.ts';
import type { AuthenticationRequest, AuthorizeRequest, Connector, NormalizedEvent, PaymentMethodInput } from '../connectors/contract.ts';
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
  /** When the authorize call was made (what the core records as the first send). */
  readonly sentAt: string;
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
  /** Customer authentication settings (absent: a payment created without them). */
  readonly authentication?: AuthenticationRequest;
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
    ...(o.authentication === undefined ? {} : { authentication: o.authentication }),
  };
}

/** prepare (when the connector prepares) then authorize, as the core's effects would run them. */
export async function authorizePayment(connector: Connector, o: AuthorizeOptions = {}): Promise<PaymentHandle> {
  const base = authorizeRequest(connector, o);
  let providerRef: string | null = null;
  let prepared: CallOutcome | null = null;
  if (connector.capabilities.preparesAuthorization && connector.prepare !== undefined) {
    prepared = await connector.prepare({ ...base, idempotencyKey: keyFor(connector, base.paymentId, 'prepare') });
    if (prepared.kind !== 'succeeded') return { ...base, providerRef: null, authKey: base.idempotencyKey, prepared, outcome: prepared, sentAt: new Date().toISOString() };
    providerRef = prepared.providerRef;
  }
  const sentAt = new Date().toISOString();
  const outcome = await connector.authorize({ ...base, providerRef });
  const ref = 'providerRef' in outcome && outcome.providerRef !== undefined ? outcome.providerRef : providerRef;
  return { ...base, providerRef: ref, authKey: base.idempotencyKey, prepared, outcome, sentAt };
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

export interface StubTls {
  readonly key: string;
  readonly cert: string;
}

/** Answers every request with the scripted reply, in the provider's wire format (over TLS when given). */
export async function startWireStub(reply: WireReply, tls?: StubTls): Promise<StubServer> {
  let hits = 0;
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
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
  };
  const server = tls === undefined ? createServer(onRequest) : createHttpsServer({ key: tls.key, cert: tls.cert }, onRequest);
  const port = await listen(server);
  return { host: '127.0.0.1', port, hits: () => hits, close: () => closeServer(server) };
}

/**
 * Resets the first connection after reading the request, then stops listening: the SDK's forced
 * retry of the reset meets a refused port. Only the first error is evidence the request may have landed.
 */
export async function startResetThenRefuse(tls?: StubTls): Promise<StubServer> {
  let hits = 0;
  const sockets = new Set<Socket>();
  // Over TLS the first application data is the request itself: the reset comes after it was read.
  const onConnection = (socket: Socket, raw: Socket): void => {
    hits += 1;
    sockets.add(raw);
    socket.once('data', () => {
      server.close();
      raw.resetAndDestroy();
    });
  };
  // TLS is layered over our own TCP socket: only a TCP handle can be reset (a TLSSocket cannot).
  const server = createTcpServer((raw) => {
    if (tls === undefined) return onConnection(raw, raw);
    onConnection(new TLSSocket(raw, { isServer: true, secureContext: createSecureContext({ key: tls.key, cert: tls.cert }) }), raw);
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

function listen(server: Server | HttpsServer): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function closeServer(server: Server | HttpsServer): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const receivers = new WeakMap<Connector, WebhookReceiver>();

/** The kit's receiver for a connector's sandbox, so async modifications can be settled by webhook. */
export function attachReceiver(connector: Connector, receiver: WebhookReceiver): void {
  receivers.set(connector, receiver);
}

export interface ModificationSubject {
  readonly op: 'capture' | 'void' | 'refund';
  /** The authorization's provider reference. */
  readonly paymentRef: string;
  readonly amount: number;
  readonly currency: string;
}

function settles(e: NormalizedEvent, pending: string, about: ModificationSubject): boolean {
  switch (about.op) {
    case 'capture':
      return (e.kind === 'capture_succeeded' || e.kind === 'capture_failed' || (e.kind === 'already_done' && e.op === 'capture')) && e.modificationRef === pending;
    case 'refund':
      return (e.kind === 'refund_succeeded' || e.kind === 'refund_failed') && e.modificationRef === pending;
    case 'void':
      // A void's events name the payment; the one that settles this cancel is its own (the event id carries the cancel's pspReference).
      return (e.kind === 'void_succeeded' || e.kind === 'void_failed' || (e.kind === 'already_done' && e.op === 'void')) && e.providerRef === about.paymentRef && e.providerEventId.includes(`:${pending}:`);
  }
}

/**
 * A connector that declares asyncModifications answers capture / void / refund with `pending`; the
 * result is the provider's webhook. This waits for it (verified by the connector itself) and returns
 * the outcome it stands for, so the kit's checks read the same for every provider. Anything else,
 * or no webhook within the time, is returned as it was.
 */
export async function settleModification(connector: Connector, outcome: CallOutcome, about: ModificationSubject, timeoutMs = 5_000): Promise<CallOutcome> {
  const receiver = receivers.get(connector);
  if (outcome.kind !== 'pending' || !connector.capabilities.asyncModifications || receiver === undefined) return outcome;
  const pending = outcome.providerRef;
  const until = Date.now() + timeoutMs;
  for (;;) {
    for (const d of receiver.received) {
      if (!d.rawBody.includes(pending) && !d.rawBody.includes(about.paymentRef)) continue;
      const v = connector.verifyWebhook(d.rawBody, d.headers, new Date());
      const e = v.ok ? v.events.find((x) => settles(x, pending, about)) : undefined;
      if (e === undefined) continue;
      // The provider refused it because the payment already is where it would put it: the operation's answer is that.
      if (e.kind === 'already_done') return { kind: 'unknown', reason: 'already_done', providerRef: pending, detail: e.detail };
      if (e.kind === 'capture_succeeded' || e.kind === 'refund_succeeded' || e.kind === 'void_succeeded') {
        const amount = 'amount' in e ? e.amount : about.amount;
        return { kind: 'succeeded', providerRef: pending, amount, currency: about.currency, providerStatus: e.rawType };
      }
      return { kind: 'declined', class: 'hard', retryElsewhere: false, code: `${about.op}_failed`, providerCode: e.rawType, providerRef: pending };
    }
    if (Date.now() > until) return outcome;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The first event of `kind` about an attempt among the deliveries, verified by the connector itself; null after `timeoutMs`. */
export async function eventFor(connector: Connector, receiver: WebhookReceiver, attemptId: string, kind: NormalizedEvent['kind'], timeoutMs = 5_000): Promise<NormalizedEvent | null> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for (const d of receiver.received) {
      if (!d.rawBody.includes(attemptId)) continue;
      const v = connector.verifyWebhook(d.rawBody, d.headers, new Date());
      const e = v.ok ? v.events.find((x) => x.kind === kind && x.attemptId === attemptId) : undefined;
      if (e !== undefined) return e;
    }
    if (Date.now() > until) return null;
    await new Promise((r) => setTimeout(r, 25));
  }
}
