// startStripeSandbox: a stateful local Stripe that the unmodified stripe SDK talks to
// (`new Stripe(key, { host, port, protocol: 'http', maxNetworkRetries: 0 })`), with fault injection,
// outages, signed webhooks and a ledger of what it really authorized, captured, refunded and cancelled.

import { SandboxClock } from '../shared/clock.ts';
import type { SandboxControl, SandboxLedgerEntry, WebhookSettings } from '../shared/control.ts';
import { FaultScheduler } from '../shared/fault-scheduler.ts';
import type { SandboxFaultSpec } from '../shared/fault-scheduler.ts';
import { ProviderListener } from '../shared/provider-listener.ts';
import { WebhookDispatcher } from '../shared/webhook-dispatcher.ts';
import type { DeliveryRecord, WebhookTarget } from '../shared/webhook-dispatcher.ts';
import type { OperationContext } from './context.ts';
import { buildStripeEvent, stripeWebhookHeaders } from './events.ts';
import { IdempotencyStore } from './idempotency.ts';
import type { StripeObject } from './objects.ts';
import { StripeProtocol } from './protocol.ts';
import { closeDispute, failRefund, openDispute } from './refunds.ts';
import { StripeSandboxState } from './state.ts';

export interface StripeWebhookEndpoint {
  readonly url: string;
  /** The endpoint's signing secret, `whsec_…`. */
  readonly secret: string;
}

export interface StripeSandboxOptions {
  readonly account: string;
  /** 0 or absent: an ephemeral port. */
  readonly port?: number;
  readonly host?: string;
  /** The Bearer key requests must carry; anything else is answered 401. */
  readonly secretKey: string;
  readonly webhook?: StripeWebhookEndpoint;
  readonly webhookSettings?: Partial<WebhookSettings>;
  /** Bounded redelivery of webhooks on non-2xx (defaults: 5 attempts, 50 ms doubling). */
  readonly webhookRetry?: { readonly maxAttempts?: number; readonly baseMs?: number };
  /** How long an idempotency key is remembered, on the sandbox clock. Default 24 h, as Stripe. */
  readonly keyTtlMs?: number;
  readonly clock?: SandboxClock;
}

export interface StripeSandbox extends SandboxControl {
  readonly type: 'stripe';
  readonly host: string;
  readonly port: number;
  readonly clock: SandboxClock;
  /** Accepts the sandbox-only mode `error_500_after_processing` too. */
  scheduleFault(spec: SandboxFaultSpec): number;
  /** A succeeded refund fails afterwards (refund.updated + refund.failed); returns the refund object. */
  failRefund(refundId: string, failureReason?: string): StripeObject;
  /** Opens a dispute on the PaymentIntent's captured charge (charge.dispute.created); returns the dispute object. */
  createDispute(paymentIntentId: string, options?: { amount?: number; reason?: string }): StripeObject;
  /** Closes an open dispute as won or lost (charge.dispute.closed); returns the dispute object. */
  closeDispute(disputeId: string, outcome: 'won' | 'lost'): StripeObject;
  setWebhookEndpoint(endpoint: StripeWebhookEndpoint | undefined): void;
  webhookDeliveries(): readonly DeliveryRecord[];
  /** Resolves once every webhook published so far was delivered or given up on. */
  webhooksIdle(): Promise<void>;
  /** HTTP requests that reached the provider listener, faulted or not. */
  requestsReceived(): number;
}

const DAY_MS = 86_400_000;

export async function startStripeSandbox(options: StripeSandboxOptions): Promise<StripeSandbox> {
  const clock = options.clock ?? new SandboxClock();
  const state = new StripeSandboxState();
  const faults = new FaultScheduler();
  const targetOf = (endpoint: StripeWebhookEndpoint | undefined): WebhookTarget | undefined =>
    endpoint && { url: endpoint.url, headersFor: stripeWebhookHeaders(endpoint.secret) };
  const initialTarget = targetOf(options.webhook);
  const dispatcher = new WebhookDispatcher({
    ...(initialTarget && { target: initialTarget }),
    ...(options.webhookSettings && { settings: options.webhookSettings }),
    ...(options.webhookRetry?.maxAttempts !== undefined && { maxAttempts: options.webhookRetry.maxAttempts }),
    ...(options.webhookRetry?.baseMs !== undefined && { retryBaseMs: options.webhookRetry.baseMs }),
  });
  const protocol = new StripeProtocol({
    state,
    clock,
    idempotency: new IdempotencyStore(clock, options.keyTtlMs ?? DAY_MS),
    secretKey: options.secretKey,
    publish: (event) => dispatcher.publish(event),
  });
  const listener = await ProviderListener.start({ port: options.port ?? 0, host: options.host ?? '127.0.0.1', protocol, faults });

  // Changes made from code (not by an API request) emit events with no originating request.
  const fromCode = <T>(operation: (ctx: OperationContext) => T): T => {
    const now = clock.nowSeconds();
    const ctx: OperationContext = {
      state,
      now,
      emit: (type, object) => dispatcher.publish(buildStripeEvent(type, object, now, { requestId: null, idempotencyKey: null })),
    };
    return operation(ctx);
  };

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
    outage: (seconds) => listener.outage(seconds),
    ledger: (): readonly SandboxLedgerEntry[] => state.ledger(),
    configureWebhooks: (settings) => dispatcher.configure(settings),
    advanceClock: (seconds) => clock.advance(seconds),
    failRefund: (refundId, failureReason = 'expired_or_canceled_card') => fromCode((ctx) => failRefund(ctx, refundId, failureReason)),
    createDispute: (paymentIntentId, disputeOptions = {}) => fromCode((ctx) => openDispute(ctx, paymentIntentId, disputeOptions)),
    closeDispute: (disputeId, outcome) => fromCode((ctx) => closeDispute(ctx, disputeId, outcome)),
    setWebhookEndpoint: (endpoint) => dispatcher.setTarget(targetOf(endpoint)),
    webhookDeliveries: () => dispatcher.deliveries,
    webhooksIdle: () => dispatcher.idle(),
    requestsReceived: () => listener.requestsReceived,
    close: async () => {
      await listener.close();
      await dispatcher.close();
    },
  };
}
