// The provider-facing listener every sandbox runs on: one HTTP(S) server that reads a request,
// applies a scheduled fault around the provider's own processing, and can go dark for an outage.
// Provider specifics (routes, idempotency, bodies) live in a ProviderProtocol.

import http from 'node:http';
import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultOp } from './control.ts';
import type { FaultScheduler, FiredFault } from './fault-scheduler.ts';

export interface ProviderRequest {
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: Buffer;
}

export interface ProviderReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface ExecutionOptions {
  /** Wait this long after taking the request (idempotency key held) and before performing it. */
  readonly executionDelayMs: number;
  /** Perform the operation, then answer (and store) a 500 instead of its result. */
  readonly failAfterProcessing: boolean;
  /** Accept a cancel or refund without performing it; its event reports the failure (fault release_fail_later). */
  readonly failModification?: boolean;
  /** Reverse a capture or refund right after performing it; its failure event before, after, or around the success (faults reverse_*). */
  readonly reverse?: 'before' | 'after' | 'twice';
  /** Store no answer under the idempotency key (fault already_done): a same-key resend runs again. */
  readonly forgetAnswer?: boolean;
}

/** Puts the reversal's events before, after, or around (twice) the operation's own. */
export function orderReversal<T>(own: T[], late: readonly T[], order: 'before' | 'after' | 'twice'): T[] {
  if (order === 'after') return [...own, ...late];
  if (order === 'before') return [...late, ...own];
  return [...late, ...own, ...late];
}

export interface ProviderProtocol {
  /** The fault op a request belongs to; null for requests that move no money (reads, unknown routes). */
  faultOpOf(req: ProviderRequest): FaultOp | null;
  process(req: ProviderRequest, options: ExecutionOptions): Promise<ProviderReply>;
  /** The provider's own 503 answer, sent before anything is processed. */
  unavailableReply(req: ProviderRequest): ProviderReply;
  /** The provider's 429 answer, sent before anything is processed (the key is not stored). */
  rateLimitedReply(req: ProviderRequest): ProviderReply;
  /** The provider refusing the request as invalid (4xx), nothing processed (fault release_refused). */
  refusedReply(req: ProviderRequest): ProviderReply;
}

/** A void or refund releasing an approval the gateway does not keep: its key names a release. */
export function isReleaseRequest(op: FaultOp | null, req: ProviderRequest): boolean {
  const key = req.headers['idempotency-key'];
  return (op === 'void' || op === 'refund') && typeof key === 'string' && key.includes(':release:');
}

export interface ProviderListenerOptions {
  readonly port: number; // 0 = ephemeral
  readonly host: string;
  readonly protocol: ProviderProtocol;
  readonly faults: FaultScheduler;
  readonly tls?: { readonly key: string; readonly cert: string };
}

const NO_FAULT_EXECUTION: ExecutionOptions = { executionDelayMs: 0, failAfterProcessing: false };

export class ProviderListener {
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private listening = false;
  private reopenTimer: NodeJS.Timeout | undefined;
  private boundPort: number;
  private closed = false;
  /** HTTP requests that reached the listener, faulted or not. */
  requestsReceived = 0;
  /** Requests being answered now, and the most at once since start (the gateway's per-account budget is checked against it). */
  inFlight = 0;
  maxInFlight = 0;

  private constructor(private readonly options: ProviderListenerOptions) {
    const onRequest = (req: IncomingMessage, res: ServerResponse): void => void this.handle(req, res);
    this.server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, onRequest) : http.createServer(onRequest);
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.boundPort = options.port;
  }

  static async start(options: ProviderListenerOptions): Promise<ProviderListener> {
    const listener = new ProviderListener(options);
    await listener.listen();
    return listener;
  }

  get host(): string {
    return this.options.host;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    return `${this.options.tls ? 'https' : 'http'}://${this.options.host}:${this.boundPort}`;
  }

  /** Closes the listener and destroys every open socket for `seconds`, then listens again on the same port; 0 ends an outage now. */
  async outage(seconds: number): Promise<void> {
    if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`outage seconds must be >= 0, got ${seconds}`);
    clearTimeout(this.reopenTimer);
    this.reopenTimer = undefined;
    if (seconds === 0) {
      if (!this.listening && !this.closed) await this.listen();
      return;
    }
    await this.stopListening();
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = undefined;
      if (!this.closed) void this.listen();
    }, seconds * 1000);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reopenTimer);
    await this.stopListening();
  }

  private async listen(): Promise<void> {
    // Re-listening on a port we just released can race with the OS; a few short retries cover it.
    for (let attempt = 0; ; attempt++) {
      try {
        await new Promise<void>((resolve, reject) => {
          const onError = (err: Error): void => reject(err);
          this.server.once('error', onError);
          this.server.listen(this.boundPort, this.options.host, () => {
            this.server.off('error', onError);
            resolve();
          });
        });
        break;
      } catch (err) {
        if (attempt >= 20 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        await sleep(50);
      }
    }
    this.boundPort = (this.server.address() as AddressInfo).port;
    this.listening = true;
  }

  private async stopListening(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requestsReceived += 1;
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    res.once('close', () => (this.inFlight -= 1));
    try {
      const rawBody = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
      const request: ProviderRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, rawBody };
      const { protocol, faults } = this.options;
      const op = protocol.faultOpOf(request);
      const key = req.headers['idempotency-key'];
      const fault = await faults.take(op, isReleaseRequest(op, request) ? 'release' : null, typeof key === 'string' ? key : null);
      await this.answer(request, fault, res);
    } catch (err) {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'api_error', message: `sandbox failure: ${String(err)}` } }));
      }
    }
  }

  private async answer(request: ProviderRequest, fault: FiredFault | null, res: ServerResponse): Promise<void> {
    const { protocol } = this.options;
    if (fault === null) return send(res, await protocol.process(request, NO_FAULT_EXECUTION));
    switch (fault.mode) {
      case 'error_503':
        return send(res, protocol.unavailableReply(request));
      case 'rate_limited':
        if (fault.latencyMs > 0) await sleep(fault.latencyMs);
        return send(res, protocol.rateLimitedReply(request));
      case 'reset_before_processing':
        res.socket?.destroy();
        return;
      case 'accept_then_drop':
        await protocol.process(request, NO_FAULT_EXECUTION);
        res.socket?.destroy();
        return;
      case 'already_done':
        await protocol.process(request, { ...NO_FAULT_EXECUTION, forgetAnswer: true });
        res.socket?.destroy();
        return;
      case 'latency': {
        if (fault.process === 'after') {
          return send(res, await protocol.process(request, { executionDelayMs: fault.latencyMs, failAfterProcessing: false }));
        }
        const reply = await protocol.process(request, NO_FAULT_EXECUTION);
        await sleep(fault.latencyMs);
        return send(res, reply);
      }
      case 'release_refused':
        return send(res, protocol.refusedReply(request));
      case 'release_fail_later':
        return send(res, await protocol.process(request, { executionDelayMs: 0, failAfterProcessing: false, failModification: true }));
      case 'reverse_before':
      case 'reverse_after':
      case 'reverse_twice':
        return send(res, await protocol.process(request, { executionDelayMs: 0, failAfterProcessing: false, reverse: fault.mode === 'reverse_before' ? 'before' : fault.mode === 'reverse_after' ? 'after' : 'twice' }));
      case 'reverse_before_then_drop':
        await protocol.process(request, { executionDelayMs: 0, failAfterProcessing: false, reverse: 'before' });
        res.socket?.destroy();
        return;
      case 'error_500_after_processing':
        return send(res, await protocol.process(request, { executionDelayMs: 0, failAfterProcessing: true }));
    }
  }
}

function send(res: ServerResponse, reply: ProviderReply): void {
  // The client may have timed out and gone; the work is done either way.
  if (res.destroyed) return;
  res.writeHead(reply.status, { ...reply.headers, 'content-length': String(Buffer.byteLength(reply.body)) });
  res.end(reply.body);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
