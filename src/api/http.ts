// Small response helpers shared by the routes: every body is serialized here exactly once, so a
// stored idempotent answer and the first answer are the same bytes.

import type { Response } from 'express';
import type { KeyIdentity } from '../store/api-keys.ts';
import { ApiProblem } from './problems.ts';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

/** What a route answers: the status and the resource (or problem) to serialize. */
export interface ApiResult {
  readonly status: number;
  readonly body: unknown;
}

export interface EncodedResponse {
  readonly status: number;
  readonly contentType: string;
  readonly bytes: Buffer;
}

export function encodeResult(r: ApiResult): EncodedResponse {
  return { status: r.status, contentType: JSON_TYPE, bytes: Buffer.from(JSON.stringify(r.body), 'utf8') };
}

export function encodeProblem(p: ApiProblem): EncodedResponse {
  return { status: p.status, contentType: PROBLEM_TYPE, bytes: Buffer.from(JSON.stringify(p.toProblem()), 'utf8') };
}

export function sendEncoded(res: Response, e: EncodedResponse, headers: Readonly<Record<string, string>> = {}): void {
  res.status(e.status).set(headers).set('Content-Type', e.contentType).send(e.bytes);
}

export function sendProblem(res: Response, p: ApiProblem): void {
  sendEncoded(res, encodeProblem(p), p.retryAfterS === undefined ? {} : { 'Retry-After': String(p.retryAfterS) });
}

/** The authenticated merchant, set by the auth middleware. */
export function merchantIdOf(res: Response): string {
  const id: unknown = res.locals['merchantId'];
  if (typeof id !== 'string') throw new Error('route reached without authentication');
  return id;
}

/**
 * The key the request was authenticated with (id, kind, role, mode; never its secret), set by the
 * auth middleware beside the merchant: what the role check reads and what a later change routes by.
 */
export function apiKeyOf(res: Response): KeyIdentity {
  const key: unknown = res.locals['apiKey'];
  if (typeof key !== 'object' || key === null) throw new Error('route reached without authentication');
  return key as KeyIdentity;
}

/**
 * The objects the request's key may see: live ones for a live key (true), test ones for a test key
 * (false), both for a legacy key (null, mode `any`). An object of the other mode answers 404, as one
 * of another merchant does: the key does not learn it exists.
 */
export function livemodeScopeOf(res: Response): boolean | null {
  return livemodeScope(apiKeyOf(res).mode);
}

export function livemodeScope(mode: KeyIdentity['mode']): boolean | null {
  return mode === 'any' ? null : mode === 'live';
}

export function notFound(what: string, id: string): ApiProblem {
  return new ApiProblem('not_found', `no ${what} ${id}`);
}
