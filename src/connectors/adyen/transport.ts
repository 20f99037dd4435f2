// The library's own HTTPS client, pointed at any origin (the sandbox, a proxy) and trusting an extra
// CA, with its real error and timeout behaviour kept. It also records what the socket did during
// each call, because the library reports a timeout and a reset with the same "socket hang up"
// message, and a TLS or connect failure only as text (research/providers.md B1).

import { AsyncLocalStorage } from 'node:async_hooks';
import type { ClientRequest } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { HttpURLConnectionClient } from './library.ts';

/** What one library call's socket went through; read after the call failed. */
export interface TransportRecord {
  requests: number;
  /** The TLS handshake completed: from here on the request may have been read by the server. */
  secureConnected: boolean;
  /** A status line arrived. */
  responseStatus: number | null;
  /** The library's socket idle timeout fired (it then aborts: "socket hang up"). */
  timedOut: boolean;
}

const currentCall = new AsyncLocalStorage<TransportRecord>();

export type RecordedCall<T> =
  | { readonly ok: true; readonly value: T; readonly transport: TransportRecord }
  | { readonly ok: false; readonly error: unknown; readonly transport: TransportRecord };

/** Runs one library call and returns its result or rejection with the socket's record. Never throws. */
export async function recordTransport<T>(call: () => Promise<T>): Promise<RecordedCall<T>> {
  const transport: TransportRecord = { requests: 0, secureConnected: false, responseStatus: null, timedOut: false };
  try {
    return { ok: true, value: await currentCall.run(transport, call), transport };
  } catch (error: unknown) {
    return { ok: false, error, transport };
  }
}

type CreateRequest = (endpoint: string, options: unknown, applicationName?: string) => ClientRequest;

export class RedirectingHttpClient extends HttpURLConnectionClient {
  constructor(
    private readonly origin: string | null,
    ca: string | undefined,
  ) {
    super();
    // agentOptions and createRequest are private in the library's typings; the JS is what runs.
    if (ca !== undefined) Reflect.set(this, 'agentOptions', { ca });
    const inherited = Reflect.get(HttpURLConnectionClient.prototype, 'createRequest') as CreateRequest;
    const observed: CreateRequest = (...args) => observe(inherited.apply(this, args));
    Reflect.set(this, 'createRequest', observed);
  }

  override request(...args: Parameters<InstanceType<typeof HttpURLConnectionClient>['request']>): Promise<string> {
    const [endpoint, ...rest] = args;
    const target = this.origin === null ? endpoint : endpoint.replace(/^https:\/\/[^/]+/, this.origin);
    return super.request(target, ...rest);
  }
}

function observe(req: ClientRequest): ClientRequest {
  const record = currentCall.getStore();
  if (record === undefined) return req;
  record.requests += 1;
  req.once('socket', (socket) => {
    const tlsSocket = socket as TLSSocket;
    if (tlsSocket.encrypted === true && !tlsSocket.connecting && tlsSocket.authorized) record.secureConnected = true;
    tlsSocket.once('secureConnect', () => {
      record.secureConnected = true;
    });
  });
  req.once('timeout', () => {
    record.timedOut = true;
  });
  req.once('response', (res) => {
    record.responseStatus = res.statusCode ?? 0;
  });
  return req;
}
