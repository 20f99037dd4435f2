// The Stripe connector: calls the official SDK and translates. It owns no state and no retries
// (maxNetworkRetries: 0; the SDK's one forced retry of a reset is recorded and classified).

import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import Stripe from 'stripe';
import type { CallOutcome, NotSent } from '../../core/outcome.ts';
import type {
  AttemptLookup,
  AuthorizeRequest,
  CaptureRequest,
  Connector,
  ConnectorAccountConfig,
  ConnectorFactory,
  DeclineTable,
  PrepareRequest,
  QueryRequest,
  ReconciliationRecord,
  ReconciliationWindow,
  RefundRequest,
  ResumeRequest,
  VoidRequest,
} from '../contract.ts';
import { mergeDeclineTable } from '../decline-table.ts';
import type { AttemptResult } from './attempt-recorder.ts';
import { AttemptRecordingHttpClient, recordAttempts } from './attempt-recorder.ts';
import type { StripeConnectorOptions } from './config.ts';
import { parseStripeAccountConfig } from './config.ts';
import { toStripeValue } from './currencies.ts';
import { STRIPE_DEFAULT_DECLINES, STRIPE_POLICY } from './defaults.ts';
import { outcomeForFailure, STRIPE_ERROR_CLASSIFICATION } from './error-classification.ts';
import { findPaymentIntentOfAttempt } from './lookup.ts';
import { lookUpOperation } from './operation-lookup.ts';
import type { StripeOperation } from './error-classification.ts';
import { readStripeReturn } from './customer-return.ts';
import { capturedOutcome, paymentIntentOutcome, preparedOutcome, refundOutcome, voidedOutcome } from './status-map.ts';
import { attemptIdOf, authorizeCreateParams, captureParams, paymentIntentCreateParams, reconciliationRecord, refundParams, resolvePaymentMethod, stripeTokenProblem, toStripeAmount } from './transformers.ts';
import { verifyStripeWebhook } from './webhook.ts';
import { stripeDisputeOperations } from './disputes.ts';

export interface StripeConnectorDeps {
  readonly declineTable?: DeclineTable;
}

/** Thrown by fetchReconciliationRecords only: reconciliation is a read the job retries, never a payment outcome. */
export class ReconciliationFetchError extends Error {
  override readonly name = 'ReconciliationFetchError';
}

function localRefusal(detail: string): NotSent {
  return { kind: 'not_sent', reason: 'local_validation', detail };
}

/** A query answers about the authorization, so a failed query is never "not sent" or "declined": it is unknown. */
function queryFailure(o: CallOutcome): CallOutcome {
  if (o.kind === 'not_sent' || o.kind === 'declined') {
    return { kind: 'unknown', reason: 'unexpected', ...('providerRef' in o && o.providerRef !== undefined ? { providerRef: o.providerRef } : {}), detail: `query failed (${o.kind === 'not_sent' ? o.reason : o.code})` };
  }
  return o;
}

function isMissingResource(error: unknown): boolean {
  const e = error as { statusCode?: unknown; code?: unknown };
  return e.statusCode === 404 || e.code === 'resource_missing';
}

export function createStripeConnector(account: string, options: StripeConnectorOptions, deps: StripeConnectorDeps = {}): Connector {
  const declineTable = mergeDeclineTable(STRIPE_DEFAULT_DECLINES, deps.declineTable);
  const agent = options.apiProtocol === 'http' ? new HttpAgent({ keepAlive: options.keepAlive }) : new HttpsAgent({ keepAlive: options.keepAlive });
  const stripe = new Stripe(options.secretKey, {
    maxNetworkRetries: 0,
    timeout: options.timeoutMs,
    telemetry: false,
    httpClient: new AttemptRecordingHttpClient(agent),
    ...(options.apiHost !== undefined ? { host: options.apiHost } : {}),
    ...(options.apiPort !== undefined ? { port: options.apiPort } : {}),
    ...(options.apiProtocol !== undefined ? { protocol: options.apiProtocol } : {}),
  });
  const policy = { ...STRIPE_POLICY, keyRetentionMs: options.keyRetentionMs };

  function failed(call: { error: unknown; attempts: readonly AttemptResult[] }, providerRef?: string, operation?: StripeOperation): CallOutcome {
    return outcomeForFailure(call.error, call.attempts, { declineTable, ...(providerRef !== undefined ? { providerRef } : {}), ...(operation !== undefined ? { operation } : {}) });
  }

  async function prepare(req: PrepareRequest): Promise<CallOutcome> {
    const wire = toStripeAmount(req.amount, req.currency);
    if (!wire.ok) return localRefusal(wire.problem);
    const pm = resolvePaymentMethod(req.paymentMethod, options.sandbox);
    if (!pm.ok) return pm.outcome;
    const params = paymentIntentCreateParams(req, wire, pm);
    const call = await recordAttempts(() => stripe.paymentIntents.create(params, { idempotencyKey: req.idempotencyKey }));
    return call.ok ? preparedOutcome(call.value, req) : failed(call);
  }

  /**
   * One call: create with confirm: true under the attempt's key. An attempt prepared in the former
   * two-call shape (providerRef set) confirms its PaymentIntent, as it did when it was persisted.
   */
  async function authorize(req: AuthorizeRequest): Promise<CallOutcome> {
    const wire = toStripeAmount(req.amount, req.currency);
    if (!wire.ok) return localRefusal(wire.problem);
    if (req.providerRef !== null) {
      const id = req.providerRef;
      const confirmed = await recordAttempts(() => stripe.paymentIntents.confirm(id, {}, { idempotencyKey: req.idempotencyKey }));
      return confirmed.ok ? paymentIntentOutcome(confirmed.value, req, declineTable) : failed(confirmed, id);
    }
    const pm = resolvePaymentMethod(req.paymentMethod, options.sandbox);
    if (!pm.ok) return pm.outcome;
    const params = authorizeCreateParams(req, wire, pm);
    // A decline (402) names the PaymentIntent it created in the error: the failure keeps its id.
    const call = await recordAttempts(() => stripe.paymentIntents.create(params, { idempotencyKey: req.idempotencyKey }));
    return call.ok ? paymentIntentOutcome(call.value, req, declineTable) : failed(call);
  }

  /** Multicapture is per charge: a non-final capture goes out only when the charge says it is available. */
  async function multicaptureAvailable(piId: string): Promise<boolean | string> {
    const pi = await recordAttempts(() => stripe.paymentIntents.retrieve(piId));
    if (!pi.ok) return `could not check multicapture: ${String((pi.error as Error).message)}`;
    const latest = pi.value.latest_charge;
    if (latest === null) return 'the PaymentIntent has no charge';
    let charge: Stripe.Charge;
    if (typeof latest === 'string') {
      const ch = await recordAttempts(() => stripe.charges.retrieve(latest));
      if (!ch.ok) return `could not check multicapture: ${String((ch.error as Error).message)}`;
      charge = ch.value;
    } else {
      charge = latest;
    }
    return charge.payment_method_details?.card?.multicapture?.status === 'available';
  }

  async function capture(req: CaptureRequest): Promise<CallOutcome> {
    const wire = toStripeAmount(req.amount, req.currency);
    if (!wire.ok) return localRefusal(wire.problem);
    if (!req.final) {
      const available = await multicaptureAvailable(req.providerRef);
      if (available !== true) return localRefusal(available === false ? 'multicapture is not available on this charge' : available);
    }
    const call = await recordAttempts(() => stripe.paymentIntents.capture(req.providerRef, captureParams(req, wire.amount), { idempotencyKey: req.idempotencyKey }));
    return call.ok ? capturedOutcome(call.value, req, req.alreadyCaptured ?? 0) : failed(call, req.providerRef, 'capture');
  }

  async function voidAuthorization(req: VoidRequest): Promise<CallOutcome> {
    const call = await recordAttempts(() => stripe.paymentIntents.cancel(req.providerRef, {}, { idempotencyKey: req.idempotencyKey }));
    return call.ok ? voidedOutcome(call.value, req) : failed(call, req.providerRef, 'cancel');
  }

  async function refund(req: RefundRequest): Promise<CallOutcome> {
    const wire = toStripeAmount(req.amount, req.currency);
    if (!wire.ok) return localRefusal(wire.problem);
    const call = await recordAttempts(() => stripe.refunds.create(refundParams(req, wire.amount), { idempotencyKey: req.idempotencyKey }));
    return call.ok ? refundOutcome(call.value, req, declineTable) : failed(call, req.providerRef, 'refund');
  }

  /** By the PaymentIntent id when known; else found by attempt id in the list (lookup.ts). */
  async function query(req: QueryRequest): Promise<CallOutcome> {
    if (req.providerRef === null) return queryByAttempt(req);
    const id = req.providerRef;
    const call = await recordAttempts(() => stripe.paymentIntents.retrieve(id));
    if (call.ok) return paymentIntentOutcome(call.value, req, declineTable);
    if (isMissingResource(call.error)) return { kind: 'unknown', reason: 'not_found', providerRef: id, detail: 'Stripe does not know this PaymentIntent' };
    return queryFailure(failed(call, id));
  }

  /**
   * The customer is back from Stripe's page: the PaymentIntent says what happened (retrieve). What
   * the browser brought (payment_intent, redirect_status) is never trusted: only Stripe's answer is.
   * A failed retrieve is unknown, never a decline; the core retrieves again.
   */
  async function resume(req: ResumeRequest): Promise<CallOutcome> {
    if (req.providerRef === null) return { kind: 'unknown', reason: 'unexpected', detail: 'no PaymentIntent id to retrieve' };
    const id = req.providerRef;
    const call = await recordAttempts(() => stripe.paymentIntents.retrieve(id));
    if (call.ok) return paymentIntentOutcome(call.value, req, declineTable);
    return queryFailure(failed(call, id));
  }

  /** A lookup's answer is a query's answer: found, the status map says what it is; anything else is unknown, never proof. */
  async function queryByAttempt(req: QueryRequest): Promise<CallOutcome> {
    const found = await findPaymentIntentOfAttempt(stripe, req, { pageSize: options.lookupPageSize, now: new Date(), retentionMs: policy.keyRetentionMs });
    switch (found.kind) {
      case 'found':
        return paymentIntentOutcome(found.paymentIntent, req, declineTable);
      case 'not_found':
        return { kind: 'unknown', reason: 'not_found', detail: `no PaymentIntent with metadata.attempt_id ${req.attemptId} in ${found.pages} page(s) of the list since the send` };
      case 'incomplete':
        return { kind: 'unknown', reason: 'unexpected', detail: `lookup stopped after ${found.pages} pages of the list without reaching the send` };
      case 'failed':
        return queryFailure(failed(found));
    }
  }

  /** The charge says what was refunded; fetch it when the list did not expand it and money was received. */
  async function unexpandedCharge(pi: Stripe.PaymentIntent): Promise<Stripe.Charge | null> {
    const id = pi.latest_charge;
    if (typeof id !== 'string' || pi.amount_received === 0) return null;
    const ch = await recordAttempts(() => stripe.charges.retrieve(id));
    if (!ch.ok) throw new ReconciliationFetchError(`Stripe charge ${id} could not be read: ${String((ch.error as Error).message)}`, { cause: ch.error });
    return ch.value;
  }

  /**
   * The record of a PaymentIntent as it is now: its charge, and the charge's refunds read from the
   * refunds list (charges do not embed them since API version 2022-11-15), every page of it.
   */
  async function recordOf(pi: Stripe.PaymentIntent): Promise<ReconciliationRecord> {
    const charge = typeof pi.latest_charge === 'object' && pi.latest_charge !== null ? pi.latest_charge : await unexpandedCharge(pi);
    if (charge === null || charge.amount_captured === 0) return reconciliationRecord(pi, charge, []);
    const refunds = await listAll('refund', (after) => stripe.refunds.list({ charge: charge.id, limit: 100, ...(after !== undefined ? { starting_after: after } : {}) }));
    return reconciliationRecord(pi, charge, refunds);
  }

  /** Every page of a list, newest first, following starting_after while has_more. */
  async function listAll<T extends { id: string }>(what: string, page: (startingAfter: string | undefined) => Promise<Stripe.ApiList<T>>): Promise<T[]> {
    const out: T[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const r = await recordAttempts(() => page(startingAfter));
      if (!r.ok) throw new ReconciliationFetchError(`Stripe ${what} list failed: ${String((r.error as Error).message)}`, { cause: r.error });
      out.push(...r.value.data);
      const last = r.value.data[r.value.data.length - 1];
      if (!r.value.has_more || last === undefined) return out;
      startingAfter = last.id;
    }
  }

  /** The PaymentIntent a charge, refund or dispute (or a PaymentIntent itself) belongs to. */
  function paymentIntentOf(object: unknown): string | null {
    const o = object as { object?: unknown; id?: unknown; payment_intent?: unknown } | null;
    if (o === null || typeof o !== 'object') return null;
    if (o.object === 'payment_intent' && typeof o.id === 'string') return o.id;
    if (typeof o.payment_intent === 'string') return o.payment_intent;
    const nested = o.payment_intent as { id?: unknown } | null | undefined;
    return typeof nested?.id === 'string' ? nested.id : null;
  }

  /**
   * The window selects activity, not creation: PaymentIntents created in it, those a balance
   * transaction booked in it belongs to (a capture, a refund, a refund that failed later, a
   * dispute's withdrawal or reinstatement: each carries its own time), and those an event of the
   * window is about (Stripe keeps events 30 days; past that the balance transactions alone). Each
   * record is the PaymentIntent as it is now, with its charge.
   */
  async function fetchReconciliationRecords(window: ReconciliationWindow): Promise<readonly ReconciliationRecord[]> {
    const created = { gte: Math.floor(window.from.getTime() / 1000), lt: Math.ceil(window.to.getTime() / 1000) };
    const records = new Map<string, ReconciliationRecord>();
    const created_ = await listAll('PaymentIntent', (after) => stripe.paymentIntents.list({ created, limit: 100, expand: ['data.latest_charge'], ...(after !== undefined ? { starting_after: after } : {}) }));
    for (const pi of created_) records.set(pi.id, await recordOf(pi));
    const touched = new Set<string>();
    const balance = await listAll('balance transaction', (after) => stripe.balanceTransactions.list({ created, limit: 100, expand: ['data.source'], ...(after !== undefined ? { starting_after: after } : {}) }));
    for (const t of balance) {
      const id = paymentIntentOf(t.source);
      if (id !== null) touched.add(id);
    }
    const events = await listAll('event', (after) => stripe.events.list({ created, limit: 100, ...(after !== undefined ? { starting_after: after } : {}) }));
    for (const e of events) {
      const id = paymentIntentOf(e.data.object);
      if (id !== null) touched.add(id);
    }
    for (const id of touched) {
      if (records.has(id)) continue;
      const r = await recordAttempts(() => stripe.paymentIntents.retrieve(id, { expand: ['latest_charge'] }));
      if (!r.ok) {
        if (isMissingResource(r.error)) continue;
        throw new ReconciliationFetchError(`Stripe PaymentIntent ${id} could not be read: ${String((r.error as Error).message)}`, { cause: r.error });
      }
      records.set(id, await recordOf(r.value));
    }
    return [...records.values()];
  }

  /** By id when we know it; else the PaymentIntents created from a minute before the attempt to an hour after, by its metadata. */
  async function lookupAttempt(req: AttemptLookup): Promise<ReconciliationRecord | null> {
    if (req.providerRef !== null) {
      const id = req.providerRef;
      const r = await recordAttempts(() => stripe.paymentIntents.retrieve(id, { expand: ['latest_charge'] }));
      if (r.ok) return recordOf(r.value);
      if (!isMissingResource(r.error)) throw new ReconciliationFetchError(`Stripe PaymentIntent ${id} could not be read: ${String((r.error as Error).message)}`, { cause: r.error });
    }
    const t = Math.floor(req.createdAt.getTime() / 1000);
    const created = { gte: t - 60, lt: t + 3600 };
    const listed = await listAll('PaymentIntent', (after) => stripe.paymentIntents.list({ created, limit: 100, expand: ['data.latest_charge'], ...(after !== undefined ? { starting_after: after } : {}) }));
    const pi = listed.find((x) => attemptIdOf(x.metadata) === req.attemptId);
    return pi === undefined ? null : recordOf(pi);
  }

  return {
    type: 'stripe',
    account,
    sandbox: options.sandbox,
    capabilities: policy.capabilities,
    policy,
    errorClassification: STRIPE_ERROR_CLASSIFICATION,
    declineTable,
    reconciliationDelayMs: 0, // the list endpoint is read-your-writes
    prepare,
    authorize,
    capture,
    void: voidAuthorization,
    refund,
    query,
    resume,
    readCustomerReturn: readStripeReturn,
    lookupOperation: (req) => lookUpOperation(stripe, req, declineTable),
    verifyWebhook: (rawBody, headers, now) => verifyStripeWebhook(rawBody, headers, options.webhookSecrets, now, declineTable),
    fetchReconciliationRecords,
    lookupAttempt,
    disputes: stripeDisputeOperations(stripe),
    close: () => {
      agent.destroy();
      return Promise.resolve();
    },
  };
}

export const stripeConnectorFactory: ConnectorFactory = {
  type: 'stripe',
  amountProblem(amount, currency) {
    const wire = toStripeValue(amount, currency);
    return wire.ok ? null : wire.problem;
  },
  tokenProblem: stripeTokenProblem,
  acceptsCardData: true,
  create(account: string, config: ConnectorAccountConfig): Connector {
    const options = parseStripeAccountConfig(account, config);
    return createStripeConnector(account, options, config.declineTable !== undefined ? { declineTable: config.declineTable } : {});
  },
};
