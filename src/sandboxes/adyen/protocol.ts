// How the Adyen sandbox answers one HTTP request: API-key authentication, Checkout v72 routing,
// JSON bodies, Adyen's idempotency around the operation (stored response replayed; a duplicate
// in flight gets 409 errorCode 704 with `transient-error: true`), ServiceError bodies, and the
// report downloads (to the report user only). A request that changes state runs in one transaction of
// the sandbox database (AccountStore.unit): key claim, change, notifications and stored answer
// commit together.

import { createHmac, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AccountStore, KeyClaim, KeyVerdict } from '../shared/account-store.ts';
import type { SandboxClock } from '../shared/clock.ts';
import type { FaultOp } from '../shared/control.ts';
import { orderReversal } from '../shared/provider-listener.ts';
import type { ExecutionOptions, ProviderProtocol, ProviderReply, ProviderRequest } from '../shared/provider-listener.ts';
import { adyenStateOf, batchingDelayMs, changesOf, loadOf } from './aggregates.ts';
import type { AdyenAccountSettings } from './aggregates.ts';
import type { AdyenOperationContext, JsonObject } from './context.ts';
import { isObject } from './context.ts';
import { failCapture, reverseRefund } from './late-events.ts';
import { AdyenServiceError, idempotencyKeyTooLong, internalError, invalidAmount, malformedJson, notFound, rateLimited, requestInProgress, unauthorized, unavailable } from './errors.ts';
import { cancelPayment, capturePayment, refundPayment, reversePayment, technicalCancel } from './modifications.ts';
import type { NotificationItem } from './notifications.ts';
import { createPayment } from './payments.ts';
import { disputeService, disputeServiceOp } from './dispute-service.ts';
import { fileTypeFromBuffer } from 'file-type';
import { CHALLENGE_PATH, DEFAULT_AUTHENTICATION, paymentDetails, postReturnPage, pageOpen, recordChoice, stalePage, challengePage } from './authentication.ts';
import { reportAccessRefusal } from './report-access.ts';
import type { ReportUser } from './report-access.ts';
import { matchReportPath, settlementReport } from './settlement-report.ts';
import { AdyenSandboxState } from './state.ts';
import type { SettlementBooking } from './state.ts';


export interface AdyenProtocolDeps {
  readonly store: AccountStore;
  readonly clock: SandboxClock;
  readonly apiKey: string;
  readonly merchantAccount: string;
  readonly reportDelayMs: number;
  /** The account's zone: report times are local to it, batches and daily reports are its days. */
  readonly reportTimeZone: string;
  /** Turns a notification item into the stored event (signed now when this process knows the endpoint). */
  readonly toEvent: (item: NotificationItem) => { eventId: string; type: string; items: NotificationItem[] };
  /** Where browsers reach this sandbox (the listener's URL, known once it listens). */
  readonly publicUrl: () => string;
  /** Who downloads reports (report-access.ts); absent: the payments API key's user. */
  readonly reportUser?: ReportUser;
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
  // The resume after the shopper's return: its own fault op, so a fault can target it alone.
  if (path === '/v72/payments/details') return { op: 'resume', handler: paymentDetails };
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

  rateLimitedReply(req: ProviderRequest): ProviderReply {
    return this.reply(req, errorAnswer(rateLimited()));
  }

  refusedReply(req: ProviderRequest): ProviderReply {
    return this.reply(req, errorAnswer(invalidAmount('sandbox fault: the modification is refused')));
  }

  async process(req: ProviderRequest, options: ExecutionOptions): Promise<ProviderReply> {
    const page = CHALLENGE_PATH.exec(req.path);
    if (page !== null) return this.challenge(req, page[1]!);
    if (req.method === 'GET') {
      // Reports are served to the report user, not to the payments key (report-access.ts).
      const refused = reportAccessRefusal(req.headers, this.deps.apiKey, this.deps.reportUser);
      return this.reply(req, refused === null ? await this.report(req) : errorAnswer(refused));
    }
    if (header(req, 'x-api-key') !== this.deps.apiKey) return this.reply(req, errorAnswer(unauthorized()));
    const disputeOp = disputeServiceOp(req.method, req.path);
    let route = matchCheckoutRoute(req.method, req.path);
    if (route === null && disputeOp === null) return this.reply(req, errorAnswer(notFound(req.path)));
    const key = header(req, 'idempotency-key');
    let body: JsonObject;
    try {
      if (key !== null && key.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw idempotencyKeyTooLong();
      body = parseBody(req.rawBody);
    } catch (err) {
      return this.reply(req, errorAnswer(err));
    }
    if (disputeOp !== null) {
      // What each supplied document's bytes are, read before the transaction (file-type is asynchronous).
      const detected = disputeOp === 'supplyDefenseDocument' ? await detectDocuments(body) : [];
      route = { op: 'any', handler: (ctx, b) => disputeService(ctx, disputeOp, b, detected) };
    }
    if (route === null) return this.reply(req, errorAnswer(notFound(req.path)));
    const { store } = this.deps;
    const claim: KeyClaim | null = key === null ? null : { key, fingerprint: null };
    let held: string | undefined;
    // A /payments held in flight: was its reference fenced when it arrived? (inFlightAfterCancel)
    let unfencedOnArrival = false;
    if (options.executionDelayMs > 0) {
      const reference = route.op === 'authorize' && typeof body['reference'] === 'string' ? body['reference'] : null;
      if (reference !== null) unfencedOnArrival = (await store.read({ fences: [reference] })).fences.length === 0;
      // Held, committed as in flight, for the whole wait: a same-key request meanwhile gets 704.
      if (claim !== null) {
        const hold = await store.holdKey(claim, options.executionDelayMs);
        if (hold.verdict.kind !== 'execute') return this.replyTo(req, hold.verdict);
        held = hold.token;
      }
      await sleep(options.executionDelayMs);
    }
    const { spec, locks } = loadOf(req.path, body);
    return store.unit(key === null ? locks : [...locks, `key:${key}`], async (unit) => {
      const loaded = await unit.load(claim, spec, held);
      if (loaded.verdict.kind !== 'execute') return this.replyTo(req, loaded.verdict);
      const settings = unit.account.settings as AdyenAccountSettings;
      const before = adyenStateOf(loaded.objects, loaded.fences, settings);
      const outrunsFence = unfencedOnArrival && settings.inFlightAfterCancel === 'authorised';
      const { answer, queued } = this.execute(route, body, options, before.state, unit.nowMs, settings, outrunsFence);
      await unit.save({
        ...changesOf(before),
        events: queued.map((item) => this.deps.toEvent(item)),
        eventDelayMs: batchingDelayMs(settings),
        // A refused request (4xx) stores nothing; anything that began processing is replayed as it was.
        // Fault already_done: performed, but its answer never stored, so a resend runs again.
        ...(key !== null && { key: (answer.status >= 400 && answer.status < 500) || options.forgetAnswer === true ? { key, release: true as const } : { key, store: { status: answer.status, body: answer.body } } }),
      });
      return this.reply(req, answer);
    });
  }

  /**
   * The hosted challenge page (a browser, no API key). GET shows it (the token in the query for a
   * GET redirect; a POST redirect brings MD in its body); a button posts the shopper's choice, which
   * sends the browser to the returnUrl with redirectResult: GET for a GET action, POST for a POST one.
   */
  private async challenge(req: ProviderRequest, psp: string): Promise<ProviderReply> {
    const html = (status: number, body: string): ProviderReply => ({ status, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }, body });
    const form = new URLSearchParams(req.method === 'POST' ? req.rawBody.toString('utf8') : '');
    const choice = form.get('choice');
    if (req.method === 'GET' || (req.method === 'POST' && choice === null)) {
      const pageToken = req.method === 'GET' ? (req.query.get('token') ?? '') : (form.get('MD') ?? '');
      const p = adyenStateOf((await this.deps.store.read({ ids: [psp] })).objects, [], {}).state.payments.get(psp);
      if (!pageOpen(p, pageToken)) return html(404, stalePage());
      return html(200, challengePage(psp, pageToken, `${p.amount.value} ${p.amount.currency} (minor units)`));
    }
    if (req.method !== 'POST') return html(405, stalePage());
    return this.deps.store.unit([], async (unit) => {
      const before = adyenStateOf((await unit.load(null, { ids: [psp] })).objects, [], {});
      const back = recordChoice(before.state.payments.get(psp), form.get('MD') ?? '', choice === 'complete', unit.nowMs);
      if (back === null) return html(409, stalePage());
      await unit.save({ ...changesOf(before), events: [] });
      if (back.post) return html(200, postReturnPage(back.returnUrl, back.redirectResult));
      const location = new URL(back.returnUrl);
      location.searchParams.set('redirectResult', back.redirectResult);
      return { status: 302, headers: { location: location.toString(), 'cache-control': 'no-store', 'content-type': 'text/plain' }, body: '' };
    });
  }

  private replyTo(req: ProviderRequest, verdict: Exclude<KeyVerdict, { kind: 'execute' }>): ProviderReply {
    if (verdict.kind === 'replay') return this.reply(req, { status: verdict.reply.status, body: verdict.reply.body });
    // Adyen compares no payloads: a live key is either answered or still running.
    return this.reply(req, errorAnswer(requestInProgress()));
  }

  private execute(route: Route, body: JsonObject, options: ExecutionOptions, state: AdyenSandboxState, nowMs: number, settings: AdyenAccountSettings, outrunsFence: boolean): { answer: Answer; queued: NotificationItem[] } {
    const queued: NotificationItem[] = [];
    const ctx: AdyenOperationContext = {
      state,
      nowMs,
      publicUrl: this.deps.publicUrl(),
      authentication: settings.authentication ?? DEFAULT_AUTHENTICATION,
      merchantAccount: this.deps.merchantAccount,
      newPspReference,
      notify: (item) => queued.push(item),
      failModification: options.failModification === true,
      outrunsFence,
      multicapture: settings.multicapture === true,
      rawCardData: settings.rawCardData !== false,
      // Keyed by the account's API key, which the sandbox database never holds.
      cardFingerprint: (number) => createHmac('sha256', `card:${this.deps.apiKey}`).update(number).digest('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 16),
    };
    let answer: Answer;
    try {
      const result = route.handler(ctx, body);
      answer = { status: result.status, body: JSON.stringify(result.body) };
    } catch (err) {
      answer = errorAnswer(err);
    }
    if (options.reverse !== undefined && answer.status === 201 && (route.op === 'capture' || route.op === 'refund')) {
      // Fault reverse_*: the scheme rejects it at once (CAPTURE_FAILED / REFUND_FAILED), notified before, after or around the success.
      const psp = (JSON.parse(answer.body) as { pspReference?: string }).pspReference ?? '';
      const own = queued.splice(0);
      try {
        if (route.op === 'capture') failCapture(ctx, psp);
        else reverseRefund(ctx, psp, 'REFUND_FAILED');
      } catch {
        // Nothing succeeded to reverse (a refund beyond the captured amount fails by notification).
      }
      const late = queued.splice(0);
      queued.push(...orderReversal(own, late, options.reverse));
    }
    if (options.failAfterProcessing) answer = errorAnswer(internalError('sandbox fault after processing'));
    return { answer, queued };
  }

  private async report(req: ProviderRequest): Promise<Answer> {
    const wanted = matchReportPath(req.path, this.deps.reportTimeZone);
    if (wanted === null) return errorAnswer(notFound(req.path));
    await this.deps.store.refresh();
    const state = new AdyenSandboxState();
    state.bookings.push(...((await this.deps.store.bookingsBetween(wanted.dayStartMs, wanted.dayEndMs)) as SettlementBooking[]));
    const csv = settlementReport(state, wanted, this.deps.clock.nowMs(), this.deps.reportDelayMs, this.deps.reportTimeZone);
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

/** The type of each defenseDocuments[i].content by its bytes (pdf, jpg, png), null when it is none of them or unreadable. */
async function detectDocuments(body: JsonObject): Promise<(string | null)[]> {
  const documents = Array.isArray(body['defenseDocuments']) ? (body['defenseDocuments'] as unknown[]) : [];
  return Promise.all(documents.map(async (d) => {
    const content = isObject(d) && typeof d['content'] === 'string' ? d['content'] : '';
    const found = await fileTypeFromBuffer(Buffer.from(content, 'base64'));
    return found === undefined ? null : found.ext;
  }));
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
