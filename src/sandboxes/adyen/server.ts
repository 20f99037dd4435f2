// startAdyenSandbox: a stateful local Adyen Checkout v72 over HTTPS that the unmodified
// @adyen/api-library talks to (through a client that rewrites the host and trusts the sandbox CA),
// with fault injection, outages, signed notifications and a ledger of what it really authorised,
// captured, refunded and cancelled. Its state lives in the sandbox database: every process that
// starts it for the same account and database is the same provider.

import { AccountStore } from '../shared/account-store.ts';
import type { LoadSpec } from '../shared/account-store.ts';
import { SandboxClock } from '../shared/clock.ts';
import type { SandboxControl, SandboxLedgerEntry, WebhookSettings } from '../shared/control.ts';
import type { SandboxDatabase } from '../shared/database.ts';
import { FaultScheduler } from '../shared/fault-scheduler.ts';
import type { SandboxFaultSpec } from '../shared/fault-scheduler.ts';
import { ProviderListener } from '../shared/provider-listener.ts';
import { WebhookDispatcher } from '../shared/webhook-dispatcher.ts';
import type { DeliveryRecord } from '../shared/webhook-dispatcher.ts';
import { DEFAULT_AUTHENTICATION } from './authentication.ts';
import type { AdyenAuthenticationSettings } from './authentication.ts';
import { ensureSandboxTlsMaterial } from './certificate.ts';
import type { AdyenOperationContext } from './context.ts';
import { adyenStateOf, batchingDelayMs, changesOf } from './aggregates.ts';
import type { AdyenAccountSettings, InFlightAfterCancel } from './aggregates.ts';
import { chargeback, failCapture, reverseRefund } from './late-events.ts';
import { runDisputeSteps } from './disputes.ts';
import { decideDefendedDispute } from './dispute-service.ts';
import type { AdyenDisputeStepSpec } from './disputes.ts';
import { checkBatching, eventDate, NotificationOutbox, webhookTarget } from './notifications.ts';
import { nextCalendarDay, zoneMidnight } from './report-zone.ts';
import { batchDay, batchOf } from './settlement-report.ts';
import type { SettlementBooking } from './state.ts';
import type { AdyenWebhookEndpoint, NotificationBatching, NotificationItem } from './notifications.ts';
import { AdyenProtocol, newPspReference } from './protocol.ts';
import type { ReportUser } from './report-access.ts';

export interface AdyenSandboxOptions {
  readonly account: string;
  /** Where the provider's state lives (openSandboxDatabase); shared by every process given the same one. */
  readonly database: SandboxDatabase;
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
  readonly webhookRetry?: { readonly maxAttempts?: number; readonly transientAttempts?: number; readonly baseMs?: number };
  readonly notificationBatching?: Partial<NotificationBatching>;
  /** How long an idempotency key is remembered, on the sandbox clock. Default 7 days (Adyen's older documented minimum). */
  readonly keyTtlMs?: number;
  /** How long after booking a settlement row appears in the report. Default 15 minutes. */
  readonly reportDelayMs?: number;
  /** The account's IANA zone: report times are local to it; batches and daily reports cover its days. Default UTC. */
  readonly reportTimeZone?: string;
  /** Multiple partial captures enabled on the merchant account (Adyen's default: off); kept in the account's settings. */
  readonly multicapture?: boolean;
  /** The report service user downloads are served to (its API key or basic auth); absent: the payments API key's user. */
  readonly reportUser?: ReportUser;
  /** Raw card data allowed for the API credential (PCI-compliant accounts); kept in the account's settings. Absent: as stored (allowed by default). */
  readonly rawCardData?: boolean;
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
  scheduleFault(spec: SandboxFaultSpec): Promise<number>;
  /** This process's delivery target; with none, this process delivers nothing (another may). */
  setWebhookEndpoint(endpoint: AdyenWebhookEndpoint | undefined): void;
  configureNotificationBatching(batching: Partial<NotificationBatching>): Promise<void>;
  /** 3-D Secure answers from now on: the redirect action's method (GET or POST), or threeDS2 actions whatever the request asks (docs/sandbox.md). */
  configureAuthentication(settings: Partial<AdyenAuthenticationSettings>): Promise<void>;
  /**
   * What a technical cancel does to a /payments with its reference already in flight (held by a
   * latency fault) when the cancel arrives: `cancelled` (default) or `authorised` (docs/sandbox.md).
   * Kept in the account's settings: every process serving the account answers alike.
   */
  configureTechnicalCancel(inFlight: InFlightAfterCancel): Promise<void>;
  /** Multiple partial captures on or off from now on (docs/sandbox.md). */
  configureMulticapture(enabled: boolean): Promise<void>;
  /** The scheme rejects a capture after it succeeded: CAPTURE_FAILED. */
  failCapture(capturePspReference: string): Promise<void>;
  /** A succeeded refund fails (REFUND_FAILED) or is returned (REFUNDED_REVERSED). */
  reverseRefund(refundPspReference: string, eventCode?: 'REFUND_FAILED' | 'REFUNDED_REVERSED'): Promise<void>;
  chargeback(paymentPspReference: string, options?: { readonly amount?: number; readonly reversed?: boolean }): Promise<void>;
  /**
   * Runs dispute steps (one notification each, in order, with originalReference and disputeStatus)
   * on the payment's dispute `disputePspReference`, or on a new one; returns the dispute's pspReference.
   */
  dispute(paymentPspReference: string, steps: readonly AdyenDisputeStepSpec[], options?: { readonly disputePspReference?: string; readonly amount?: number }): Promise<string>;
  /** Commission on each Settled row of the settlement report from now on: fixed minor units + basis points. */
  setSettlementCommission(fixed: number, bps: number): Promise<void>;
  /** Every delivery attempt for the account, by whichever process made it. */
  webhookDeliveries(): Promise<readonly DeliveryRecord[]>;
  /** Resolves once every notification queued so far was delivered or given up on. */
  webhooksIdle(): Promise<void>;
  /**
   * Announces (REPORT_AVAILABLE, pspReference = the file name, reason = its download URL) the
   * settlement details batch and the payments accounting report of every account-zone day that has
   * closed (plus the report delay) since the last announcement, from the first day with a booking.
   * `except` names files to leave unannounced (a report Adyen never delivers). Answers the files announced.
   */
  announceReports(options?: { readonly except?: readonly string[] }): Promise<string[]>;
}

const DAY_MS = 86_400_000;

export async function startAdyenSandbox(options: AdyenSandboxOptions): Promise<AdyenSandbox> {
  const clock = new SandboxClock();
  const tls = ensureSandboxTlsMaterial(options.certificateDirectory);
  const store = await AccountStore.open(options.database, options.account, 'adyen', clock, {
    keyTtlMs: options.keyTtlMs ?? 7 * DAY_MS,
    ...(options.webhookSettings && { webhookSettings: options.webhookSettings }),
    ...((options.notificationBatching !== undefined || options.multicapture !== undefined || options.rawCardData !== undefined) && {
      settings: {
        ...(options.notificationBatching && { batching: checkBatching({ maxItems: 1, windowMs: 0, ...options.notificationBatching }) }),
        ...(options.multicapture !== undefined && { multicapture: options.multicapture }),
        ...(options.rawCardData !== undefined && { rawCardData: options.rawCardData }),
      },
    }),
  });
  const faults = new FaultScheduler(store);
  const reportDelayMs = options.reportDelayMs ?? 15 * 60_000;
  const reportTimeZone = options.reportTimeZone ?? 'UTC';
  // The dispatcher renders with the outbox, and the outbox sets the dispatcher's target.
  let outbox: NotificationOutbox | undefined = undefined;
  const dispatcher = new WebhookDispatcher({
    db: options.database,
    account: options.account,
    ...(options.webhook && { target: webhookTarget(options.webhook) }),
    ...(options.webhookRetry?.maxAttempts !== undefined && { maxAttempts: options.webhookRetry.maxAttempts }),
    ...(options.webhookRetry?.transientAttempts !== undefined && { transientAttempts: options.webhookRetry.transientAttempts }),
    ...(options.webhookRetry?.baseMs !== undefined && { retryBaseMs: options.webhookRetry.baseMs }),
    batchSize: (settings) => (settings as AdyenAccountSettings).batching?.maxItems ?? 1,
    render: (events) => outbox!.render(events),
  });
  const notifications = new NotificationOutbox(dispatcher, options.webhook);
  outbox = notifications;
  const protocol = new AdyenProtocol({
    store,
    clock,
    apiKey: options.apiKey,
    merchantAccount: options.merchantAccount,
    reportDelayMs,
    reportTimeZone,
    toEvent: (item) => notifications.toEvent(item),
    publicUrl: () => listener.url,
    ...(options.reportUser !== undefined && { reportUser: options.reportUser }),
  });
  let listener: ProviderListener;
  try {
    listener = await ProviderListener.start({
      port: options.port ?? 0,
      host: options.host ?? '127.0.0.1',
      protocol,
      faults,
      tls: { key: tls.keyPem, cert: tls.certPem },
    });
  } catch (err) {
    await dispatcher.close();
    throw err;
  }

  // Late events driven from code, each in its own transaction like an API request.
  const fromCode = (spec: LoadSpec, operation: (ctx: AdyenOperationContext) => void): Promise<void> =>
    store.unit([], async (unit) => {
      const loaded = await unit.load(null, spec);
      const settings = unit.account.settings as AdyenAccountSettings;
      const before = adyenStateOf(loaded.objects, loaded.fences, settings);
      const queued: NotificationItem[] = [];
      operation({ state: before.state, nowMs: unit.nowMs, merchantAccount: options.merchantAccount, newPspReference, notify: (item) => queued.push(item) });
      await unit.save({ ...changesOf(before), events: queued.map((item) => notifications.toEvent(item)), eventDelayMs: batchingDelayMs(settings) });
    });

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
    scheduleFaultTracked: (spec) => faults.scheduleTracked(spec),
    clearFaults: () => faults.clear(),
    faults: () => faults.list(),
    outage: (seconds) => listener.outage(seconds),
    ledger: async (): Promise<readonly SandboxLedgerEntry[]> => adyenStateOf(await store.allObjects(), [], {}).state.ledger(),
    configureWebhooks: (settings) => dispatcher.configure(settings),
    advanceClock: (seconds) => store.advanceClock(seconds),
    setKeyLifetime: (ms) => store.updateSettings({ key_ttl_ms: ms }),
    setWebhookEndpoint: (endpoint) => notifications.setEndpoint(endpoint),
    configureNotificationBatching: async (batching) => {
      const current = ((await store.refresh()).settings as AdyenAccountSettings).batching ?? { maxItems: 1, windowMs: 0 };
      await store.updateSettings({ batching: checkBatching({ ...current, ...batching }) });
    },
    configureAuthentication: async (settings) => {
      const current = ((await store.refresh()).settings as AdyenAccountSettings).authentication ?? DEFAULT_AUTHENTICATION;
      await store.updateSettings({ authentication: { ...current, ...settings } });
    },
    configureTechnicalCancel: (inFlight) => store.updateSettings({ inFlightAfterCancel: inFlight }),
    configureRawCardData: (enabled) => store.updateSettings({ rawCardData: enabled }),
    configureMulticapture: (enabled) => store.updateSettings({ multicapture: enabled }),
    failCapture: (psp) => fromCode({ aliases: [psp] }, (ctx) => failCapture(ctx, psp)),
    reverseRefund: (psp, eventCode = 'REFUNDED_REVERSED') => fromCode({ aliases: [psp] }, (ctx) => reverseRefund(ctx, psp, eventCode)),
    chargeback: (psp, o = {}) => fromCode({ ids: [psp] }, (ctx) => chargeback(ctx, psp, o.reversed === true, o.amount)),
    dispute: async (psp, steps, o = {}) => {
      let ref = '';
      await fromCode({ ids: [psp] }, (ctx) => {
        ref = runDisputeSteps(ctx, psp, o.disputePspReference ?? null, steps, o.amount);
      });
      return ref;
    },
    openDispute: async (psp, o = {}) => {
      let id = '';
      try {
        await fromCode({ ids: [psp] }, (ctx) => {
          id = runDisputeSteps(ctx, psp, null, [{ eventCode: 'NOTIFICATION_OF_CHARGEBACK' }, { eventCode: 'CHARGEBACK' }], o.amount);
        });
      } catch (err) {
        // runDisputeSteps refuses with plain Errors (no such payment, nothing captured, a bad amount): the caller's error.
        throw err instanceof Error && !(err instanceof RangeError) && !('code' in err) ? new RangeError(err.message) : err;
      }
      return { id };
    },
    decideDispute: (ref, outcome) => fromCode({ aliases: [ref] }, (ctx) => decideDefendedDispute(ctx, ref, outcome)),
    setSettlementCommission: (fixed, bps) => store.updateSettings({ commission: { fixed, bps } }),
    webhookDeliveries: () => dispatcher.deliveries(),
    webhooksIdle: () => dispatcher.idle(),
    requestsReceived: () => listener.requestsReceived,
    maxInFlight: () => listener.maxInFlight,
    announceReports: async (o = {}) => {
      const settings = (await store.refresh()).settings as AdyenAccountSettings & { reportsAnnouncedThrough?: number };
      const nowMs = clock.nowMs();
      let next = settings.reportsAnnouncedThrough === undefined ? undefined : settings.reportsAnnouncedThrough + 1;
      if (next === undefined) {
        const first = (await store.bookingsBetween(0, nowMs + 1) as SettlementBooking[]).reduce((m, b) => Math.min(m, b.bookedMs), Number.POSITIVE_INFINITY);
        next = batchOf(reportTimeZone, Number.isFinite(first) ? first : nowMs);
      }
      const files: string[] = [];
      let last = next - 1;
      for (let batch = next; zoneMidnight(reportTimeZone, nextCalendarDay(batchDay(batch))) + reportDelayMs <= nowMs; batch++) {
        last = batch;
        files.push(`settlement_detail_report_batch_${batch}.csv`, `payments_accounting_report_${batchDay(batch).replace(/-/g, '_')}.csv`);
      }
      const announced = files.filter((f) => !(o.except ?? []).includes(f));
      const base = `${listener.url}/reports/download/MerchantAccount/${encodeURIComponent(options.merchantAccount)}`;
      if (announced.length > 0) {
        await fromCode({}, (ctx) => {
          for (const file of announced) {
            ctx.notify({ amount: { value: 0, currency: 'EUR' }, eventCode: 'REPORT_AVAILABLE', eventDate: eventDate(ctx.nowMs), merchantAccountCode: options.merchantAccount, merchantReference: '', pspReference: file, reason: `${base}/${file}`, success: 'true' });
          }
        });
      }
      if (last >= next) await store.updateSettings({ reportsAnnouncedThrough: last });
      return announced;
    },
    close: async () => {
      await listener.close();
      await dispatcher.close();
    },
  };
}
