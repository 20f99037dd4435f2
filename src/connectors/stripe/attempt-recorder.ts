// stripe-node retries a connection reset once even with maxNetworkRetries: 0 and reports only the
// last attempt's error, so the error alone cannot prove "never sent". This HttpClient wraps the
// SDK's own node client and records every attempt of the current call (found through
// AsyncLocalStorage, which follows the SDK's promise chain and retry timers).

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Agent } from 'node:http';
import Stripe from 'stripe';

export type AttemptResult =
  | { readonly kind: 'in_flight' }
  | { readonly kind: 'response'; readonly status: number }
  | { readonly kind: 'error'; readonly code: string | null };

export interface CallRecord {
  readonly attempts: AttemptResult[];
}

/** Node error codes raised only before a connection exists, so the request cannot have been written. */
export const NEVER_CONNECTED_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  // TLS: the handshake failed, so no HTTP bytes were sent.
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

export function attemptNeverConnected(a: AttemptResult): boolean {
  return a.kind === 'error' && a.code !== null && NEVER_CONNECTED_CODES.has(a.code);
}

const currentCall = new AsyncLocalStorage<CallRecord>();

type MakeRequestArgs = Parameters<Stripe.HttpClient['makeRequest']>;

function errorCode(e: unknown): string | null {
  if (typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string') return e.code;
  return null;
}

export class AttemptRecordingHttpClient extends Stripe.HttpClient {
  private readonly inner: Stripe.HttpClient;

  constructor(agent?: Agent) {
    super();
    this.inner = Stripe.createNodeHttpClient(agent);
  }

  override getClientName(): string {
    return this.inner.getClientName();
  }

  override makeRequest(...args: MakeRequestArgs): Promise<Stripe.HttpClientResponse> {
    const call = currentCall.getStore();
    const index = call === undefined ? -1 : call.attempts.push({ kind: 'in_flight' }) - 1;
    const record = (r: AttemptResult): void => {
      if (call !== undefined && index >= 0) call.attempts[index] = r;
    };
    return this.inner.makeRequest(...args).then(
      (res) => {
        record({ kind: 'response', status: res.getStatusCode() });
        return res;
      },
      (e: unknown) => {
        record({ kind: 'error', code: errorCode(e) });
        throw e;
      },
    );
  }
}

export type RecordedCall<T> =
  | { readonly ok: true; readonly value: T; readonly attempts: readonly AttemptResult[] }
  | { readonly ok: false; readonly error: unknown; readonly attempts: readonly AttemptResult[] };

/** Runs one SDK call and returns its result with every HTTP attempt it made. Never throws. */
export async function recordAttempts<T>(call: () => Promise<T>): Promise<RecordedCall<T>> {
  const rec: CallRecord = { attempts: [] };
  try {
    const value = await currentCall.run(rec, call);
    return { ok: true, value, attempts: rec.attempts };
  } catch (error: unknown) {
    return { ok: false, error, attempts: rec.attempts };
  }
}
