// How the Stripe sandbox answers one HTTP request: authentication, routing, form parsing, Stripe's
// idempotency (replay, mismatch, in-flight conflict) around the operation, and the response headers
// stripe-node reads (Request-Id, echoed Idempotency-Key, Stripe-Version). A request that changes
// state runs in one transaction of the sandbox database (AccountStore.unit): the key's claim, the
// change, its events and the stored answer commit together or not at all.

import { createHmac, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AccountStore, KeyClaim, KeyVerdict } from '../shared/account-store.ts';
import type { SandboxClock } from '../shared/clock.ts';
import type { FaultOp } from '../shared/control.ts';
import { orderReversal } from '../shared/provider-listener.ts';
import type { ExecutionOptions, ProviderProtocol, ProviderReply, ProviderRequest } from '../shared/provider-listener.ts';
import { EVENT_RETENTION_SECONDS } from './balance.ts';
import { failRefund } from './refunds.ts';
import { multipartParams } from './files.ts';
import { changedAggregates, loadSpecOf, stateOf } from './aggregates.ts';
import type { OperationContext } from './context.ts';
import { authenticationFailure, idempotencyKeyInUse, idempotencyMismatch, invalidParam, serverError, StripeRequestFailure, unrecognizedUrl } from './errors.ts';
import { buildStripeEvent, STRIPE_API_VERSION } from './events.ts';
import type { EventOrigin } from './events.ts';
import { canonicalParams, FormEncodingError, parseStripeForm } from './form-encoding.ts';
import type { FormParams } from './form-encoding.ts';
import { matchStripeRoute } from './routes.ts';
import { CHALLENGE_PATH, challengePage, stalePage } from './challenge-page.ts';
import { completeAuthentication } from './payment-intents.ts';
import type { StripeRoute } from './routes.ts';
import type { StripeSandboxState } from './state.ts';

export interface StripeProtocolDeps {
  readonly store: AccountStore;
  readonly clock: SandboxClock;
  readonly secretKey: string;
  /** Search lags the list by this much (search.ts). */
  readonly searchLagMs?: number;
  /** The sandbox's base URL as browsers reach it (next_action.redirect_to_url points at its hosted page). */
  readonly publicUrl?: () => string;
}

/** Stripe documents keys of up to 255 characters; connectors must shorten longer ones by hashing. */
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

interface Outcome {
  readonly status: number;
  readonly body: string;
  readonly storable: boolean;
}

interface Executed {
  readonly outcome: Outcome;
  readonly events: readonly { readonly eventId: string; readonly type: string; readonly body: string }[];
}

export class StripeProtocol implements ProviderProtocol {
  constructor(private readonly deps: StripeProtocolDeps) {}

  faultOpOf(req: ProviderRequest): FaultOp | null {
    const matched = matchStripeRoute(req.method, req.path);
    if (matched === null) return null;
    try {
      return matched.route.faultOp(this.paramsOf(req));
    } catch {
      return null;
    }
  }

  refusedReply(req: ProviderRequest): ProviderReply {
    const failure = invalidParam('payment_intent', 'This request is refused by a sandbox fault (release_refused).');
    return this.reply(req, newRequestId(), { status: failure.status, body: errorBody(failure), storable: false });
  }

  unavailableReply(req: ProviderRequest): ProviderReply {
    const failure = new StripeRequestFailure(503, { type: 'api_error', message: 'The Stripe API is temporarily unavailable (sandbox fault).' }, false);
    return this.reply(req, newRequestId(), { status: failure.status, body: errorBody(failure), storable: false });
  }

  rateLimitedReply(req: ProviderRequest): ProviderReply {
    // Stripe's rate limiter answers before the request is processed or its key is stored.
    const failure = new StripeRequestFailure(429, { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly (sandbox fault).' }, false);
    return this.reply(req, newRequestId(), { status: failure.status, body: errorBody(failure), storable: false });
  }

  async process(req: ProviderRequest, options: ExecutionOptions): Promise<ProviderReply> {
    const page = CHALLENGE_PATH.exec(req.path);
    if (page !== null) return this.challenge(req, page[1]!);
    const requestId = newRequestId();
    const key = req.method === 'POST' ? idempotencyKeyOf(req) : null;
    let route: StripeRoute;
    let id: string;
    let params: FormParams;
    try {
      if (req.headers.authorization !== `Bearer ${this.deps.secretKey}`) throw authenticationFailure();
      if (key !== null && key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
        throw invalidParam('Idempotency-Key', `Idempotency keys can be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters long.`, 'idempotency_key_too_long');
      }
      const matched = matchStripeRoute(req.method, req.path);
      if (matched === null) throw unrecognizedUrl(req.method, req.path);
      ({ route, id } = matched);
      const contentType = req.headers['content-type'] ?? '';
      // File uploads are multipart/form-data (files.ts); every other request is form-encoded.
      params = req.method === 'POST' && /^multipart\/form-data/i.test(contentType) ? await multipartParams(req.rawBody, contentType) : this.paramsOf(req);
    } catch (err) {
      return this.reply(req, requestId, failureOutcome(err));
    }
    const origin: EventOrigin = { requestId, idempotencyKey: key };
    const { store } = this.deps;
    const spec = loadSpecOf(route.loads, id, params);
    if (req.method === 'GET') {
      // Reads change nothing: no transaction, one statement.
      if (options.executionDelayMs > 0) await sleep(options.executionDelayMs);
      const { state } = stateOf((await store.read(spec)).objects);
      if (route.loads === 'events') {
        // Kept 30 days; the `created` range narrows the read (the handler applies the exact filter).
        const retained = this.deps.clock.nowMs() - EVENT_RETENTION_SECONDS * 1000;
        state.events = await store.loggedEvents(Math.max(retained, spec.fromMs ?? 0), spec.toMs ?? null);
      }
      return this.reply(req, requestId, this.execute(route, id, params, origin, options, state, this.deps.clock.nowMs()).outcome);
    }
    // Stored under the key to spot a reuse with other parameters: keyed, because the parameters may carry a card number.
    const claim: KeyClaim | null = key === null ? null : { key, fingerprint: this.keyed('request', `${req.method} ${req.path} ${canonicalParams(params)}`) };
    let held: string | undefined;
    if (options.executionDelayMs > 0) {
      // The key is held, committed as in flight, for the whole wait: a same-key request meanwhile is "in progress".
      if (claim !== null) {
        const hold = await store.holdKey(claim, options.executionDelayMs);
        if (hold.verdict.kind !== 'execute') return this.replyTo(req, requestId, key!, hold.verdict);
        held = hold.token;
      }
      await sleep(options.executionDelayMs);
    }
    // Stripe answers a request whose key is held by one still executing with 409 at once; it does
    // not wait for the first to finish and replay it.
    const busy = key === null || held !== undefined ? undefined : { lock: `key:${key}`, key, answer: () => this.replyTo(req, requestId, key, { kind: 'in_flight' }) };
    return store.unit(key === null ? [] : [`key:${key}`], async (unit) => {
      const loaded = await unit.load(claim, spec, held);
      if (loaded.verdict.kind !== 'execute') return this.replyTo(req, requestId, key!, loaded.verdict);
      const before = stateOf(loaded.objects);
      const { outcome, events } = this.execute(route, id, params, origin, options, before.state, unit.nowMs, rawCardDataEnabled(unit.account.settings));
      await unit.save({
        ...changedAggregates(before, unit.nowMs),
        events,
        // Fault already_done: performed, but its answer never stored, so a resend runs again.
        ...(key !== null && { key: outcome.storable && options.forgetAnswer !== true ? { key, store: { status: outcome.status, body: outcome.body, requestId } } : { key, release: true as const } }),
      });
      return this.reply(req, requestId, outcome);
    }, busy);
  }

  /** The hosted authentication page (a browser, no API key): GET shows it, POST records the customer's choice. */
  private async challenge(req: ProviderRequest, piId: string): Promise<ProviderReply> {
    const html = (status: number, body: string): ProviderReply => ({ status, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }, body });
    const spec = loadSpecOf('payment_intent', piId, {});
    if (req.method === 'GET') {
      const token = req.query.get('token') ?? '';
      const pi = stateOf((await this.deps.store.read(spec)).objects).state.paymentIntents.get(piId);
      if (pi === undefined || pi.status !== 'requires_action' || pi.authenticationToken !== token) return html(404, stalePage());
      return html(200, challengePage(pi.id, token, `${pi.amount} ${pi.currency.toUpperCase()}`));
    }
    if (req.method !== 'POST') return html(405, stalePage());
    const form = new URLSearchParams(req.rawBody.toString('utf8'));
    const token = form.get('token') ?? '';
    const completed = form.get('outcome') === 'complete';
    const origin: EventOrigin = { requestId: null, idempotencyKey: null };
    return this.deps.store.unit([], async (unit) => {
      const before = stateOf((await unit.load(null, spec)).objects);
      const emitted: { type: string; object: Record<string, unknown>; previous?: Record<string, unknown> }[] = [];
      const now = Math.floor(unit.nowMs / 1000);
      const ctx: OperationContext = { state: before.state, now, emit: (type, object, previous) => emitted.push({ type, object, ...(previous !== undefined && { previous }) }) };
      const location = completeAuthentication(ctx, piId, token, completed);
      if (location === null) return html(409, stalePage());
      const events = emitted.map((e) => {
        const event = buildStripeEvent(e.type, e.object, now, origin, e.previous);
        return { eventId: event.id, type: event.type, body: event.body };
      });
      await unit.save({ ...changedAggregates(before, unit.nowMs), events });
      return { status: 303, headers: { location, 'cache-control': 'no-store', 'content-type': 'text/plain' }, body: '' };
    });
  }

  private replyTo(req: ProviderRequest, requestId: string, key: string, verdict: Exclude<KeyVerdict, { kind: 'execute' }>): ProviderReply {
    switch (verdict.kind) {
      case 'replay':
        return this.reply(req, requestId, { status: verdict.reply.status, body: verdict.reply.body, storable: false }, {
          'idempotent-replayed': 'true',
          'original-request': verdict.reply.requestId ?? requestId,
        });
      case 'mismatch':
        return this.reply(req, requestId, failureOutcome(idempotencyMismatch(key)));
      case 'in_flight':
        return this.reply(req, requestId, failureOutcome(idempotencyKeyInUse(key)));
    }
  }

  /** Runs an operation against the loaded state; the events it emitted are written with its change. */
  private execute(route: StripeRoute, id: string, params: FormParams, origin: EventOrigin, options: ExecutionOptions, state: StripeSandboxState, nowMs: number, rawCardData = false): Executed {
    const emitted: { type: string; object: Record<string, unknown>; previous?: Record<string, unknown> }[] = [];
    const ctx: OperationContext = {
      state, now: Math.floor(nowMs / 1000), emit: (type, object, previous) => emitted.push({ type, object, ...(previous !== undefined && { previous }) }), failModification: options.failModification === true,
      rawCardData, cardFingerprint: (number) => this.keyed('card', number).replace(/[^A-Za-z0-9]/g, '').slice(0, 16),
      ...(this.deps.publicUrl !== undefined && { publicUrl: this.deps.publicUrl() }),
      ...(this.deps.searchLagMs !== undefined && { searchLagMs: this.deps.searchLagMs }),
    };
    let outcome: Outcome;
    try {
      const result = route.run(ctx, id, params);
      outcome = { status: 200, body: toJson(result), storable: true };
      if (options.reverse !== undefined && route.faultOp(params) === 'refund' && typeof result['id'] === 'string') {
        // Fault reverse_*: the refund fails right after it succeeded (refund.failed), sent before, after or around its success.
        const own = emitted.splice(0);
        failRefund(ctx, result['id'], 'expired_or_canceled_card');
        const late = emitted.splice(0);
        emitted.push(...orderReversal(own, late, options.reverse));
      }
    } catch (err) {
      outcome = failureOutcome(err);
    }
    if (options.failAfterProcessing) outcome = failureOutcome(serverError('An unknown error occurred while processing the request (sandbox fault).'));
    const events = emitted.map((e) => {
      const event = buildStripeEvent(e.type, e.object, ctx.now, origin, e.previous);
      return { eventId: event.id, type: event.type, body: event.body };
    });
    return { outcome, events };
  }

  /**
   * An HMAC under the account's secret key (never stored in the sandbox database): card fingerprints
   * and stored request fingerprints reveal nothing of a card number to whoever reads the database.
   */
  private keyed(purpose: string, value: string): string {
    return createHmac('sha256', `${purpose}:${this.deps.secretKey}`).update(value).digest('base64');
  }

  private paramsOf(req: ProviderRequest): FormParams {
    try {
      return req.method === 'GET' ? parseStripeForm(req.query) : parseStripeForm(req.rawBody.toString('utf8'));
    } catch (err) {
      if (err instanceof FormEncodingError) throw invalidParam('body', err.message);
      throw err;
    }
  }

  private reply(req: ProviderRequest, requestId: string, outcome: Outcome, extra: Record<string, string> = {}): ProviderReply {
    const key = req.method === 'POST' ? idempotencyKeyOf(req) : null;
    const version = req.headers['stripe-version'];
    return {
      status: outcome.status,
      headers: {
        'content-type': 'application/json',
        'request-id': requestId,
        'stripe-version': typeof version === 'string' ? version : STRIPE_API_VERSION,
        ...(key !== null && { 'idempotency-key': key }),
        ...extra,
      },
      body: outcome.body,
    };
  }
}

/** Raw card data APIs are on unless the account's settings turned them off (configureRawCardData). */
export function rawCardDataEnabled(settings: Readonly<Record<string, unknown>>): boolean {
  return settings['rawCardData'] !== false;
}

function failureOutcome(err: unknown): Outcome {
  // Anything unexpected is Stripe's 500: it began executing, so it is stored and replayed.
  const failure = err instanceof StripeRequestFailure ? err : serverError(`An unknown error occurred: ${String(err)}`);
  return { status: failure.status, body: errorBody(failure), storable: failure.storable };
}

function errorBody(failure: StripeRequestFailure): string {
  return toJson({ error: failure.error });
}

function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function idempotencyKeyOf(req: ProviderRequest): string | null {
  const key = req.headers['idempotency-key'];
  return typeof key === 'string' && key !== '' ? key : null;
}

function newRequestId(): string {
  return `req_${randomBytes(7).toString('hex')}`;
}
