// The request id of the API request being served, for log lines written deeper down (a
// transition committed by a request carries its id). AsyncLocalStorage, entered by the request
// middleware and entered again after the body parser, whose stream callbacks lose the context.

import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

export interface RequestContext {
  readonly requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** A caller's X-Request-Id is kept when it is short and plain; otherwise a new one is made. */
export function requestIdFor(header: string | undefined): string {
  return header !== undefined && /^[A-Za-z0-9._:-]{1,100}$/.test(header) ? header : `req_${randomUUID().replaceAll('-', '')}`;
}

export function runInRequestContext<T>(ctx: RequestContext, run: () => T): T {
  return storage.run(ctx, run);
}

/** Middleware: continue the chain inside the request's context again (after body parsers). */
export function reenterRequestContext(_req: Request, res: Response, next: NextFunction): void {
  const ctx = res.locals['requestContext'] as RequestContext | undefined;
  if (ctx === undefined) next();
  else storage.run(ctx, next);
}
