// startAdyenSandbox: a stateful local Adyen Checkout v72 over HTTPS that the unmodified
// @adyen/api-library talks to (through a client that rewrites the host and trusts the sandbox CA),
// with fault injection, outages, signed notifications and a ledger of what it really authorised,
// captured, refunded and cancelled.

import { SandboxClock } from '../shared/clock.ts';
import type { SandboxControl, SandboxLedgerEntry, WebhookSettings } from '../shared/control.ts';
import { FaultScheduler } from '../shared/fault-scheduler.ts';
import type { SandboxFaultSpec } from '../shared/fault-scheduler.ts';
import { ProviderListener } from '../shared/provider-listener.ts';
import { WebhookDispatcher } from '../shared/webhook-dispatcher.ts';
import type { DeliveryRecord } from '../shared/webhook-dispatcher.ts';
import { ensureSandboxTlsMaterial } from './certificate.ts';
import type { AdyenOperationContext } from './context.ts';
import { AdyenIdempotencyStore } from './idempotency.ts';
import { chargeback, failCapture, reverseRefund } from './late-events.ts';
import { NotificationOutbox, webhookTarget } from './notifications.ts';
import type { AdyenWebhookEndpoint, NotificationBatching } from './notifications.ts';
import { AdyenProtocol, newPspReference } from './protocol.ts';
import { AdyenSandboxState } from './state.ts';

export interface AdyenSandboxOptions {
  readonly account: string;
  /** 0 or absent: an ephemeral port. */
  readonly port?: number;
  readonly host?: string;
  /** The `x-api-key` requests must carry; anything else is answered 401. */
  readonly apiKey: string;
  readonly merchantAccount: string;
  /** Where the CA and server certificate are kept; minted there on first use. */
  readonly certificateDirectory: string;
  readonly webhook?: AdyenWebhookEndpoint;
  readonly webhookSettings?: Partial<WebhookSettings>;
  /** Bounded redelivery on non-2xx (defaults: 5 attempts, 50 ms doubling). */
  readonly webhookRetry?: { readonly maxAttempts?: number; readonly baseMs?: number };
  readonly notificationBatching?: Partial<NotificationBatching>;
  /** How long an idempotency key is remembered, on the sandbox clock. Default 7 days (Adyen's older documented minimum). */
  readonly keyTtlMs?: number;
  /** How long after booking a settlement row appears in the report. Default 15 minutes. */
  readonly reportDelayMs?: number;
  readonly clock?: SandboxClock;
}

export interface AdyenSandbox extends SandboxControl {
  readonly type: 'adyen';
  readonly host: string;
  readonly port: number;
  readonly clock: SandboxClock;
  readonly caPem: string;
  readonly merchantAccount: string;
  readonly reportDelayMs: number;
  /** Accepts the sandbox-only mode `error_500_after_processing` too. */
  scheduleFault(spec: SandboxFaultSpec): number;
  setWebhookEndpoint(endpoint: AdyenWebhookEndpoint | undefined): void;
  configureNotificationBatching(batching: Partial<NotificationBatching>): void;
  /** The scheme rejects a capture after it succeeded: CAPTURE_FAILED. */
  failCapture(capturePspReference: string): void;
  /** A succeeded refund fails (REFUND_FAILED) or is returned (REFUNDED_REVERSED). */
  reverseRefund(refundPspReference: string, eventCode?: 'REFUND_FAILED' | 'REFUNDED_REVERSED'): void;
  chargeback(paymentPspReference: string, options?: { readonly amount?: number; readonly reversed?: boolean }): void;
  /** Commission on each Settled row of the settlement report from now on: fixed minor units + basis points. */
  setSettlementCommission(fixed: number, bps: number): void;
  webhookDeliveries(): readonly DeliveryRecord[];
  /** Resolves once every notification queued so far was delivered or given up on. */
  webhooksIdle(): Promise<void>;
  requestsReceived(): number;
}

const DAY_MS = 86_400_000;

export async function startAdyenSandbox(options: AdyenSandboxOptions): Promise<AdyenSandbox> {
  const clock = options.clock ?? new SandboxClock();
  const tls = ensureSandboxTlsMaterial(options.certificateDirectory);
  const state = new AdyenSandboxState();
  const faults = new FaultScheduler();
  const reportDelayMs = options.reportDelayMs ?? 15 * 60_000;
  const dispatcher = new WebhookDispatcher({
    ...(options.webhook && { target: webhookTarget(options.webhook) }),
    ...(options.webhookSettings && { settings: options.webhookSettings }),
    ...(options.webhookRetry?.maxAttempts !== undefined && { maxAttempts: options.webhookRetry.maxAttempts }),
    ...(options.webhookRetry?.baseMs !== undefined && { retryBaseMs: options.webhookRetry.baseMs }),
  });
  const outbox = new NotificationOutbox(dispatcher, options.webhook);
  if (options.notificationBatching) outbox.configureBatching(options.notificationBatching);
  const protocol = new AdyenProtocol({
    state,
    clock,
    idempotency: new AdyenIdempotencyStore(clock, options.keyTtlMs ?? 7 * DAY_MS),
    apiKey: options.apiKey,
    merchantAccount: options.merchantAccount,
    reportDelayMs,
    notify: (item) => outbox.emit(item),
  });
  const listener = await ProviderListener.start({
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    protocol,
    faults,
    tls: { key: tls.keyPem, cert: tls.certPem },
  });

  const fromCode = (operation: (ctx: AdyenOperationContext) => void): void => {
    operation({ state, nowMs: clock.nowMs(), merchantAccount: options.merchantAccount, newPspReference, notify: (item) => outbox.emit(item) });
  };

  return {
    account: options.account,
    type: 'adyen',
    host: listener.host,
    get port() {
      return listener.port;
    },
    get url() {
      return listener.url;
    },
    clock,
    caPem: tls.caPem,
    merchantAccount: options.merchantAccount,
    reportDelayMs,
    scheduleFault: (spec) => faults.schedule(spec),
    outage: (seconds) => listener.outage(seconds),
    ledger: (): readonly SandboxLedgerEntry[] => state.ledger(),
    configureWebhooks: (settings) => dispatcher.configure(settings),
    advanceClock: (seconds) => clock.advance(seconds),
    setWebhookEndpoint: (endpoint) => outbox.setEndpoint(endpoint),
    configureNotificationBatching: (batching) => outbox.configureBatching(batching),
    failCapture: (psp) => fromCode((ctx) => failCapture(ctx, psp)),
    reverseRefund: (psp, eventCode = 'REFUNDED_REVERSED') => fromCode((ctx) => reverseRefund(ctx, psp, eventCode)),
    chargeback: (psp, o = {}) => fromCode((ctx) => chargeback(ctx, psp, o.reversed === true, o.amount)),
    setSettlementCommission: (fixed, bps) => {
      state.commission = { fixed, bps };
    },
    webhookDeliveries: () => dispatcher.deliveries,
    webhooksIdle: async () => {
      outbox.flush();
      await dispatcher.idle();
    },
    requestsReceived: () => listener.requestsReceived,
    close: async () => {
      await listener.close();
      outbox.close();
      await dispatcher.close();
    },
  };
}
