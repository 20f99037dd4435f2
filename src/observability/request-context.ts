// The request id of the API request being served, for log lines written deeper down (a
// transition committed by a request carries its id). AsyncLocalStorage, entered by the request
// middleware; express's body parser (raw-body) runs its callbacks in the caller's async scope, so
// the context survives a body that arrives after the headers (test/integration/observability/logs.test.ts).

import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

export interface RequestContext {
  readonly requestId: string;
  /** The payment the request changed (set by the transition feed), for its request line. */
  paymentId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** A caller's X-Request-Id is kept when it is short and plain; otherwise a new one is made. */
export function requestIdFor(header: string | undefined): string {
  return header !== undefined && /^[A-Za-z0-9._:-]{1,100}$/.test(header) ? header : `req_${randomUUID().replaceAll('-', '')}`;
}

/** Called for each transition: the request that caused it (if any) names that payment in its line. */
export function notePaymentOfRequest(paymentId: string): void {
  const ctx = storage.getStore();
  if (ctx !== undefined) ctx.paymentId ??= paymentId;
}

export function runInRequestContext<T>(ctx: RequestContext, run: () => T): T {
  return storage.run(ctx, run);
}
