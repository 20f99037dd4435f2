// How the Adyen sandbox answers one HTTP request: API-key authentication, Checkout v72 routing,
// JSON bodies, Adyen's idempotency around the operation (stored response replayed; a duplicate
// in flight gets 409 errorCode 704 with `transient-error: true`), ServiceError bodies, and the
// settlement-details report download.

import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxClock } from '../shared/clock.ts';
import type { FaultOp } from '../shared/control.ts';
import type { ExecutionOptions, ProviderProtocol, ProviderReply, ProviderRequest } from '../shared/provider-listener.ts';
import type { AdyenOperationContext, JsonObject } from './context.ts';
import { isObject } from './context.ts';
import { AdyenServiceError, idempotencyKeyTooLong, internalError, malformedJson, notFound, requestInProgress, unauthorized, unavailable } from './errors.ts';
import type { AdyenIdempotencyStore } from './idempotency.ts';
import { cancelPayment, capturePayment, refundPayment, reversePayment, technicalCancel } from './modifications.ts';
import type { NotificationItem } from './notifications.ts';
import { createPayment } from './payments.ts';
import { matchReportPath, settlementReport } from './settlement-report.ts';
import type { AdyenSandboxState } from './state.ts';

export interface AdyenProtocolDeps {
  readonly state: AdyenSandboxState;
  readonly clock: SandboxClock;
  readonly idempotency: AdyenIdempotencyStore;
  readonly apiKey: string;
  readonly merchantAccount: string;
  readonly reportDelayMs: number;
  readonly notify: (item: NotificationItem) => void;
}

const MAX_IDEMPOTENCY_KEY_LENGTH = 64;

type Handler = (ctx: AdyenOperationContext, body: JsonObject) => { status: number; body: Record<string, unknown> };

interface Route {
  readonly op: FaultOp;
  readonly handler: Handler;
}

/** POST routes of Checkout v72 that the sandbox implements. */
export function matchCheckoutRoute(method: string, path: string): Route | null {
  if (method !== 'POST') return null;
  if (path === '/v72/payments') return { op: 'authorize', handler: createPayment };
  if (path === '/v72/cancels') return { op: 'void', handler: technicalCancel };
  const m = /^\/v72\/payments\/([^/]+)\/(captures|cancels|refunds|reversals)$/.exec(path);
  if (m === null) return null;
  const psp = decodeURIComponent(m[1] ?? '');
  switch (m[2]) {
    case 'captures': return { op: 'capture', handler: (ctx, body) => capturePayment(ctx, psp, body) };
    case 'cancels': return { op: 'void', handler: (ctx, body) => cancelPayment(ctx, psp, body) };
    case 'refunds': return { op: 'refund', handler: (ctx, body) => refundPayment(ctx, psp, body) };
    default: return { op: 'void', handler: (ctx, body) => reversePayment(ctx, psp, body) };
  }
}

export function newPspReference(): string {
  // Adyen's are 16 characters; the sandbox's start with "SY" so they are recognisable in logs.
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return `SY${[...randomBytes(14)].map((b) => alphabet[b % alphabet.length]).join('')}`;
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

function errorAnswer(err: unknown): Answer {
  const failure = err instanceof AdyenServiceError ? err : internalError(String(err));
  return { status: failure.status, body: JSON.stringify(failure.body(newPspReference())), headers: failure.extraHeaders };
}

function header(req: ProviderRequest, name: string): string | null {
  const v = req.headers[name];
  return typeof v === 'string' && v !== '' ? v : null;
}

export class AdyenProtocol implements ProviderProtocol {
  constructor(private readonly deps: AdyenProtocolDeps) {}

  faultOpOf(req: ProviderRequest): FaultOp | null {
    return matchCheckoutRoute(req.method, req.path)?.op ?? null;
  }

  unavailableReply(req: ProviderRequest): ProviderReply {
    return this.reply(req, errorAnswer(unavailable()));
  }

  async process(req: ProviderRequest, options: ExecutionOptions): Promise<ProviderReply> {
    if (header(req, 'x-api-key') !== this.deps.apiKey) return this.reply(req, errorAnswer(unauthorized()));
    if (req.method === 'GET') return this.reply(req, this.report(req));
    const route = matchCheckoutRoute(req.method, req.path);
    if (route === null) return this.reply(req, errorAnswer(notFound(req.path)));
    const key = header(req, 'idempotency-key');
    let body: JsonObject;
    try {
      if (key !== null && key.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw idempotencyKeyTooLong();
      body = parseBody(req.rawBody);
    } catch (err) {
      return this.reply(req, errorAnswer(err));
    }
    if (key === null) {
      if (options.executionDelayMs > 0) await sleep(options.executionDelayMs);
      return this.reply(req, this.execute(route, body, options));
    }
    const verdict = this.deps.idempotency.begin(key);
    if (verdict.kind === 'replay') return this.reply(req, verdict.response);
    if (verdict.kind === 'in_flight') return this.reply(req, errorAnswer(requestInProgress()));
    if (options.executionDelayMs > 0) await sleep(options.executionDelayMs);
    const answer = this.execute(route, body, options);
    // A refused request (4xx) stores nothing; anything that began processing is replayed as it was.
    if (answer.status >= 400 && answer.status < 500) this.deps.idempotency.release(key);
    else this.deps.idempotency.complete(key, { status: answer.status, body: answer.body });
    return this.reply(req, answer);
  }

  private execute(route: Route, body: JsonObject, options: ExecutionOptions): Answer {
    const queued: NotificationItem[] = [];
    const ctx: AdyenOperationContext = {
      state: this.deps.state,
      nowMs: this.deps.clock.nowMs(),
      merchantAccount: this.deps.merchantAccount,
      newPspReference,
      notify: (item) => queued.push(item),
    };
    let answer: Answer;
    try {
      const result = route.handler(ctx, body);
      answer = { status: result.status, body: JSON.stringify(result.body) };
    } catch (err) {
      answer = errorAnswer(err);
    }
    if (options.failAfterProcessing) answer = errorAnswer(internalError('sandbox fault after processing'));
    for (const item of queued) this.deps.notify(item);
    return answer;
  }

  private report(req: ProviderRequest): Answer {
    const wanted = matchReportPath(req.path);
    if (wanted === null) return errorAnswer(notFound(req.path));
    const csv = settlementReport(this.deps.state, wanted, this.deps.clock.nowMs(), this.deps.reportDelayMs);
    if (csv === null) return errorAnswer(notFound(`${req.path} (not generated yet)`));
    return { status: 200, body: csv, headers: { 'content-type': 'text/csv; charset=utf-8' } };
  }

  private reply(req: ProviderRequest, answer: Answer): ProviderReply {
    const key = header(req, 'idempotency-key');
    const psp = /"pspReference":"([^"]+)"/.exec(answer.body)?.[1];
    return {
      status: answer.status,
      headers: {
        'content-type': 'application/json;charset=UTF-8',
        ...(psp !== undefined && { pspreference: psp }),
        ...(key !== null && { 'idempotency-key': key }),
        ...answer.headers,
      },
      body: answer.body,
    };
  }
}

function parseBody(raw: Buffer): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw malformedJson(err instanceof Error ? err.message : 'not JSON');
  }
  if (!isObject(parsed)) throw malformedJson('the body must be a JSON object');
  return parsed;
}
