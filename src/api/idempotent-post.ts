// Every POST under /v1 runs through here (architecture §5): the key is checked, the body
// validated (failures are not stored), the key claimed with a lease, the operation executed and
// its answer stored, so a retry replays the same bytes. A retry after the holder died resumes
// from what was committed: the payment id recorded with the key, or the capture/refund id that
// is derived from the key and which the core treats as already requested.

import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { newId } from '../core/ids.ts';
import type { DbOrTx } from '../store/db.ts';
import { claimIdempotencyKey, completeClaim, LeaseLostError, releaseClaim } from '../store/idempotency.ts';
import type { HeldClaim } from '../store/idempotency.ts';
import { canonicalJson, NotCanonicalizableError } from './canonical-json.ts';
import type { StoredKeyMode } from '../core/api-keys.ts';
import { encodeProblem, encodeResult, livemodeScope, merchantIdOf, sendEncoded } from './http.ts';
import type { ApiResult, EncodedResponse } from './http.ts';
import { ApiProblem, validationProblem } from './problems.ts';
import type { ProblemCode } from './problems.ts';

export const MAX_KEY_LENGTH = 255;

export interface IdempotencySettings {
  readonly db: DbOrTx;
  readonly now: () => Date;
  /** How long a claim holds off other requests with the same key; longer than the longest request. */
  readonly leaseMs: number;
  readonly retentionMs: number;
  readonly log: (line: string) => void;
}

export interface ExecutionContext<B> {
  readonly merchantId: string;
  readonly body: B;
  readonly params: Readonly<Record<string, string>>;
  readonly claim: HeldClaim;
  /** `https://host` as the merchant called it, for answers that carry a URL of this gateway. */
  readonly origin: string;
  /** The id of the key the request was made with (the audit trail names it); null off the API's /v1 auth. */
  readonly keyId: string | null;
  /** That key's mode (`any` for a legacy key, or off the API's /v1 auth): what it routes to and may see. */
  readonly keyMode: StoredKeyMode;
  /** The objects it may see: live (true), test (false), both (null). */
  readonly livemode: boolean | null;
}

/** Answers that depend on the request alone, not on what execution did, and so are never stored. */
const NOT_STORED: ReadonlySet<ProblemCode> = new Set<ProblemCode>([
  'validation_error', 'malformed_json', 'idempotency_key_missing', 'idempotency_key_invalid', 'unauthorized', 'payload_too_large',
  'rate_limited', 'idempotency_request_in_progress', 'idempotency_key_reused', 'internal_error', 'service_unavailable', 'overloaded',
  // Depends on the merchant's other endpoints, and writes nothing: a retry after a deletion may succeed.
  'endpoint_limit_reached',
  // Depends on when the last rotation was, and writes nothing: a retry after its announcement may succeed.
  'signing_key_rotation_pending',
  // Depends on the hour, and stores nothing: a retry in the next hour may succeed.
  'payment_method_quota_exceeded',
  // Depends on the merchant's other keys, and writes nothing: a retry after deleting one may succeed.
  'key_limit_reached',
  // Answered before the key is claimed (src/api/key-roles.ts); listed so it could never be stored.
  'insufficient_role',
]);

export function requestOrigin(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

/**
 * Method, path and RFC 8785 body: what the fingerprint of a request covers; and the mode of a key of
 * a mode. A test key's request is not a live key's: a replay must never answer a test key with a live
 * object, so the same Idempotency-Key reused across modes is refused as reused. A legacy key's (mode
 * `any`) is as it always was, so its records from before modes still match.
 */
export function canonicalRequest(method: string, path: string, body: unknown, keyMode: StoredKeyMode = 'any'): string {
  return `${keyMode === 'any' ? '' : `mode ${keyMode}\n`}${method.toUpperCase()}\n${path}\n${canonicalJson(body)}`;
}

export function requestFingerprint(method: string, path: string, body: unknown, keyMode: StoredKeyMode = 'any'): string {
  return createHash('sha256').update(canonicalRequest(method, path, body, keyMode)).digest('hex');
}

/**
 * A capture or refund id fixed by the key (and the record's creation time), so a resumed request
 * asks the core for the same operation. The record must outlive a failed execution for that: the
 * routes bind it to its payment first (bindClaimToPayment), and releaseClaim keeps bound records.
 */
export function operationIdFor(kind: 'capture' | 'refund' | 'key', claim: HeldClaim): string {
  const seed = createHash('sha256').update(`${claim.merchantId}\u0000${claim.key}`).digest();
  return newId(kind, claim.createdAt.getTime(), seed);
}

function keyIdOf(res: Response): string | null {
  const key = res.locals['apiKey'] as { id?: unknown } | undefined;
  return typeof key?.id === 'string' ? key.id : null;
}

function keyModeOf(res: Response): StoredKeyMode {
  const mode = (res.locals['apiKey'] as { mode?: unknown } | undefined)?.mode;
  return mode === 'test' || mode === 'live' ? mode : 'any';
}

function idempotencyKeyOf(req: Request): string {
  const key = req.get('idempotency-key');
  if (key === undefined || key.trim() === '') throw new ApiProblem('idempotency_key_missing', 'every POST needs an Idempotency-Key header');
  if (key.length > MAX_KEY_LENGTH) throw new ApiProblem('idempotency_key_invalid', `Idempotency-Key is ${key.length} characters; at most ${MAX_KEY_LENGTH}`);
  return key;
}

export interface IdempotentPostOptions {
  /**
   * How the record names the request when the default (a SHA-256 of method, path and canonical
   * body) must not be kept: a body with a card number (src/api/payment-method-routes.ts).
   */
  readonly fingerprint?: (merchantId: string, canonicalRequest: string) => Promise<string>;
  /** Rewrites a validation problem about the body before it is answered (masks what must not be echoed). */
  readonly maskProblem?: (p: ApiProblem) => ApiProblem;
  /**
   * What the record keeps of a successful answer when it must not keep all of it: a new API key's
   * secret is answered once and stored nowhere (src/api/api-key-routes.ts). A replay answers this.
   */
  readonly storedResult?: (r: ApiResult) => ApiResult;
}

export function idempotentPost<S extends z.ZodType>(
  settings: IdempotencySettings,
  schema: S,
  execute: (ctx: ExecutionContext<z.output<S>>) => Promise<ApiResult>,
  options: IdempotentPostOptions = {},
): RequestHandler {
  return async (req: Request, res: Response) => {
    const merchantId = merchantIdOf(res);
    const key = idempotencyKeyOf(req);
    const raw: unknown = req.body ?? {};
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const problem = validationProblem(parsed.error, 'body');
      throw options.maskProblem === undefined ? problem : options.maskProblem(problem);
    }
    const keyMode = keyModeOf(res);
    let request: string;
    try {
      request = canonicalRequest(req.method, req.originalUrl.split('?')[0]!, raw, keyMode);
    } catch (err) {
      if (err instanceof NotCanonicalizableError) throw new ApiProblem('validation_error', `the body is not I-JSON: ${err.message}`);
      throw err;
    }
    const fingerprint = options.fingerprint === undefined ? createHash('sha256').update(request).digest('hex') : await options.fingerprint(merchantId, request);

    const now = settings.now();
    const claimed = await claimIdempotencyKey(settings.db, { merchantId, key, fingerprint, now, leaseMs: settings.leaseMs, retentionMs: settings.retentionMs });
    switch (claimed.kind) {
      case 'fingerprint_mismatch':
        throw new ApiProblem('idempotency_key_reused', 'this Idempotency-Key was used with another request (method, path or body)');
      case 'in_progress':
        throw new ApiProblem('idempotency_request_in_progress', 'the first request with this Idempotency-Key is still executing', undefined, claimed.retryAfterS);
      case 'completed':
        res.status(claimed.status).set(claimed.headers).set('Idempotent-Replayed', 'true').send(claimed.body);
        return;
      case 'claimed':
        break;
    }

    const claim = claimed.claim;
    let answer: EncodedResponse;
    let stored: EncodedResponse;
    try {
      const result = await execute({ merchantId, body: parsed.data, params: req.params as Record<string, string>, claim, origin: requestOrigin(req), keyId: keyIdOf(res), keyMode, livemode: livemodeScope(keyMode) });
      answer = encodeResult(result);
      stored = options.storedResult === undefined ? answer : encodeResult(options.storedResult(result));
    } catch (err) {
      if (err instanceof LeaseLostError) throw new ApiProblem('idempotency_request_in_progress', 'another request took this Idempotency-Key over', undefined, 1);
      if (!(err instanceof ApiProblem) || NOT_STORED.has(err.code)) {
        await releaseClaim(settings.db, claim, settings.now()).catch((e: unknown) => settings.log(`idempotency: release failed: ${(e as Error).name}`));
        throw err;
      }
      answer = encodeProblem(err);
      stored = answer;
    }
    if (answer.status >= 500) {
      // Never stored: a 5xx says nothing about the operation, and the merchant's retry must run it.
      await releaseClaim(settings.db, claim, settings.now()).catch((e: unknown) => settings.log(`idempotency: release failed: ${(e as Error).name}`));
      sendEncoded(res, answer);
      return;
    }
    const completed = await completeClaim(settings.db, claim, { status: stored.status, body: stored.bytes, headers: { 'content-type': stored.contentType } });
    if (completed.kind === 'already') {
      // A concurrent execution of the same request stored first: every answer for one key is the first one.
      res.status(completed.status).set(completed.headers).set('Idempotent-Replayed', 'true').send(completed.body);
      return;
    }
    if (completed.kind === 'lost') settings.log(`idempotency: record no longer in progress for this payment; answer not stored (${req.method} ${req.originalUrl.split('?')[0]})`);
    sendEncoded(res, answer);
  };
}
