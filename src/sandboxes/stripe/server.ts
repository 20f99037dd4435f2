// startStripeSandbox: a stateful local Stripe that the unmodified stripe SDK talks to
// (`new Stripe(key, { host, port, protocol: 'http', maxNetworkRetries: 0 })`), with fault injection,
// outages, signed webhooks and a ledger of what it really authorized, captured, refunded and cancelled.
// Its state lives in the sandbox database: every process that starts it for the same account and
// database is the same provider.

import { AccountStore } from '../shared/account-store.ts';
import type { LoadSpec, NewEvent } from '../shared/account-store.ts';
import { SandboxClock } from '../shared/clock.ts';
import type { SandboxControl, SandboxLedgerEntry, WebhookSettings } from '../shared/control.ts';
import type { SandboxDatabase } from '../shared/database.ts';
import { FaultScheduler } from '../shared/fault-scheduler.ts';
import type { SandboxFaultSpec } from '../shared/fault-scheduler.ts';
import { ProviderListener } from '../shared/provider-listener.ts';
import { WebhookDispatcher } from '../shared/webhook-dispatcher.ts';
import type { DeliveryRecord, WebhookTarget } from '../shared/webhook-dispatcher.ts';
import { changedAggregates, stateOf } from './aggregates.ts';
import type { OperationContext } from './context.ts';
import { buildStripeEvent, stripeWebhookHeaders } from './events.ts';
import type { StripeObject } from './objects.ts';
import { StripeProtocol } from './protocol.ts';
import { advanceDispute, closeDispute, failRefund, openDispute } from './refunds.ts';
import { decideDispute } from './dispute-responses.ts';
import { StripeRequestFailure } from './errors.ts';

export interface StripeWebhookEndpoint {
  readonly url: string;
  /** The endpoint's signing secret, `whsec_…`. */
  readonly secret: string;
}

export interface StripeSandboxOptions {
  readonly account: string;
  /** Where the provider's state lives (openSandboxDatabase); shared by every process given the same one. */
  readonly database: SandboxDatabase;
  /** 0 or absent: an ephemeral port. */
  readonly port?: number;
  readonly host?: string;
  /** The Bearer key requests must carry; anything else is answered 401. */
  readonly secretKey: string;
  readonly webhook?: StripeWebhookEndpoint;
  readonly webhookSettings?: Partial<WebhookSettings>;
  /** Bounded redelivery of webhooks on non-2xx (defaults: 5 attempts, 50 ms doubling). */
  readonly webhookRetry?: { readonly maxAttempts?: number; readonly transientAttempts?: number; readonly baseMs?: number };
  /** How long an idempotency key is remembered, on the sandbox clock. Default 24 h, as Stripe. */
  readonly keyTtlMs?: number;
  /** How long a new PaymentIntent stays out of search results (search.ts). Default 60 s, Stripe's "less than a minute". */
  readonly searchLagMs?: number;
  /** Raw card data APIs (payment_method_data[card]) enabled on the account; kept in its settings. Absent: as stored (enabled by default). */
  readonly rawCardData?: boolean;
}

export interface StripeSandbox extends SandboxControl {
  readonly type: 'stripe';
  readonly host: string;
  readonly port: number;
  readonly clock: SandboxClock;
  /** Accepts the sandbox-only mode `error_500_after_processing` too. */
  scheduleFault(spec: SandboxFaultSpec): Promise<number>;
  /** A succeeded refund fails afterwards (refund.updated + refund.failed); returns the refund object. */
  failRefund(refundId: string, failureReason?: string): Promise<StripeObject>;
  /** Opens a dispute on the PaymentIntent's captured charge (charge.dispute.created); returns the dispute object. */
  createDispute(paymentIntentId: string, options?: { amount?: number; reason?: string; inquiry?: boolean }): Promise<StripeObject>;
  /** Moves a dispute to `status` (under_review, needs_response, appeal_*, won, lost, warning_*, prevented) with its events and balance transactions. */
  advanceDispute(disputeId: string, status: string): Promise<StripeObject>;
  /**
   * A whole dispute path at once: opened in the first status (needs_response or
   * warning_needs_response), then moved through the rest; its events are published together (so
   * `reorder` delivers them all reversed). Returns the dispute object.
   */
  disputePath(paymentIntentId: string, statuses: readonly string[], options?: { amount?: number; reason?: string }): Promise<StripeObject>;
  /** Closes an open dispute as won or lost (charge.dispute.closed); returns the dispute object. */
  closeDispute(disputeId: string, outcome: 'won' | 'lost'): Promise<StripeObject>;
  /** This process's delivery target; with none, this process delivers nothing (another may). */
  setWebhookEndpoint(endpoint: StripeWebhookEndpoint | undefined): void;
  /** Every delivery attempt for the account, by whichever process made it. */
  webhookDeliveries(): Promise<readonly DeliveryRecord[]>;
  /** Resolves once every webhook published so far was delivered or given up on. */
  webhooksIdle(): Promise<void>;
}

const DAY_MS = 86_400_000;

export async function startStripeSandbox(options: StripeSandboxOptions): Promise<StripeSandbox> {
  const clock = new SandboxClock();
  const store = await AccountStore.open(options.database, options.account, 'stripe', clock, {
    keyTtlMs: options.keyTtlMs ?? DAY_MS,
    ...(options.webhookSettings && { webhookSettings: options.webhookSettings }),
    ...(options.rawCardData !== undefined && { settings: { rawCardData: options.rawCardData } }),
  });
  const faults = new FaultScheduler(store);
  const targetOf = (endpoint: StripeWebhookEndpoint | undefined): WebhookTarget | undefined =>
    endpoint && { url: endpoint.url, headersFor: stripeWebhookHeaders(endpoint.secret) };
  const initialTarget = targetOf(options.webhook);
  const dispatcher = new WebhookDispatcher({
    db: options.database,
    account: options.account,
    ...(initialTarget && { target: initialTarget }),
    ...(options.webhookRetry?.maxAttempts !== undefined && { maxAttempts: options.webhookRetry.maxAttempts }),
    ...(options.webhookRetry?.transientAttempts !== undefined && { transientAttempts: options.webhookRetry.transientAttempts }),
    ...(options.webhookRetry?.baseMs !== undefined && { retryBaseMs: options.webhookRetry.baseMs }),
  });
  let listener: ProviderListener | undefined;
  const protocol = new StripeProtocol({
    store, clock, secretKey: options.secretKey, ...(options.searchLagMs !== undefined && { searchLagMs: options.searchLagMs }),
    publicUrl: () => listener?.url ?? '',
  });
  try {
    listener = await ProviderListener.start({ port: options.port ?? 0, host: options.host ?? '127.0.0.1', protocol, faults });
  } catch (err) {
    await dispatcher.close();
    throw err;
  }

  // Changes made from code (not by an API request) emit events with no originating request.
  const fromCode = <T>(spec: LoadSpec, operation: (ctx: OperationContext) => T): Promise<T> =>
    store.unit([], async (unit) => {
      const loaded = stateOf((await unit.load(null, spec)).objects);
      const now = Math.floor(unit.nowMs / 1000);
      const events: NewEvent[] = [];
      const ctx: OperationContext = {
        state: loaded.state,
        now,
        emit: (type, object, previous) => {
          const event = buildStripeEvent(type, object, now, { requestId: null, idempotencyKey: null }, previous);
          events.push({ eventId: event.id, type: event.type, body: event.body });
        },
      };
      const result = operation(ctx);
      await unit.save({ ...changedAggregates(loaded, unit.nowMs), events });
      return result;
    });

  return {
    account: options.account,
    type: 'stripe',
    host: listener.host,
    get port() {
      return listener.port;
    },
    get url() {
      return listener.url;
    },
    clock,
    scheduleFault: (spec) => faults.schedule(spec),
    scheduleFaultTracked: (spec) => faults.scheduleTracked(spec),
    clearFaults: () => faults.clear(),
    faults: () => faults.list(),
    outage: (seconds) => listener.outage(seconds),
    ledger: async (): Promise<readonly SandboxLedgerEntry[]> => stateOf(await store.allObjects()).state.ledger(),
    configureWebhooks: (settings) => dispatcher.configure(settings),
    advanceClock: (seconds) => store.advanceClock(seconds),
    setKeyLifetime: (ms) => store.updateSettings({ key_ttl_ms: ms }),
    configureRawCardData: (enabled) => store.updateSettings({ rawCardData: enabled }),
    failRefund: (refundId, failureReason = 'expired_or_canceled_card') => fromCode({ aliases: [refundId] }, (ctx) => failRefund(ctx, refundId, failureReason)),
    createDispute: (paymentIntentId, disputeOptions = {}) => fromCode({ ids: [paymentIntentId] }, (ctx) => openDispute(ctx, paymentIntentId, disputeOptions)),
    closeDispute: (disputeId, outcome) => fromCode({ aliases: [disputeId] }, (ctx) => closeDispute(ctx, disputeId, outcome)),
    advanceDispute: (disputeId, status) => fromCode({ aliases: [disputeId] }, (ctx) => advanceDispute(ctx, disputeId, status)),
    disputePath: (paymentIntentId, statuses, o = {}) => fromCode({ ids: [paymentIntentId] }, (ctx) => {
      const [first, ...rest] = statuses;
      if (first !== 'needs_response' && first !== 'warning_needs_response') throw new Error(`a dispute opens as needs_response or warning_needs_response, not ${String(first)}`);
      let d = openDispute(ctx, paymentIntentId, { ...o, inquiry: first === 'warning_needs_response' });
      for (const status of rest) d = advanceDispute(ctx, String(d['id']), status);
      return d;
    }),
    openDispute: async (paymentIntentId, o = {}) => {
      try {
        const d = await fromCode({ ids: [paymentIntentId] }, (ctx) => openDispute(ctx, paymentIntentId, o));
        return { id: String(d['id']) };
      } catch (err) {
        // The provider's refusal (no such PaymentIntent, nothing captured, a bad amount) is the caller's error.
        throw err instanceof StripeRequestFailure ? new RangeError(err.message) : err;
      }
    },
    decideDispute: async (disputeId, outcome) => {
      try {
        await fromCode({ aliases: [disputeId] }, (ctx) => decideDispute(ctx, disputeId, outcome));
      } catch (err) {
        throw err instanceof StripeRequestFailure ? new RangeError(err.message) : err;
      }
    },
    setWebhookEndpoint: (endpoint) => dispatcher.setTarget(targetOf(endpoint)),
    webhookDeliveries: () => dispatcher.deliveries(),
    webhooksIdle: () => dispatcher.idle(),
    requestsReceived: () => listener.requestsReceived,
    maxInFlight: () => listener.maxInFlight,
    close: async () => {
      await listener.close();
      await dispatcher.close();
    },
  };
}
