// Prometheus metrics (prom-client), one registry per runtime. Counters and histograms count what
// this process did (sum them over processes); gauges about shared state are read from Postgres
// and Redis at scrape time (indicators.ts), so any process reports them correctly — aggregate
// those with max(), not sum(). Breaker states are per process, like the breakers themselves.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CallOutcome } from '../core/outcome.ts';
import { DELIVERY_AGE_BUCKETS } from './indicators.ts';
import type { Indicators } from './indicators.ts';
import type { TransitionEvent } from './transition-feed.ts';
import type { ConfigStatus, ReloadOutcome } from '../routing/config-holder.ts';

/** How the provider call wrapper sees an effect: enough for labels. */
export interface ObservedEffect {
  readonly connector: string;
  readonly op: string;
}

export type AroundCall<E extends ObservedEffect> = (effect: E, call: () => Promise<CallOutcome>) => Promise<CallOutcome>;

/** The config holder as the metrics see it (src/routing/config-holder.ts). */
export interface ObservedConfig {
  status(): ConfigStatus;
  onReload(listener: (o: ReloadOutcome) => void): void;
}

/** The values `switchyard_config_reload_total{result}` takes, all exported from the start (at 0) so a rate or an alert has a series. */
export const CONFIG_RELOAD_RESULTS: readonly ReloadOutcome['kind'][] = ['swapped', 'unchanged', 'rejected'];

/** What the webhook intake reports (WebhookServices.observe). */
export interface WebhookIntakeObserver {
  /** A request verified (rejected: null) or refused with the connector's reason. */
  webhookIntake(connector: string, rejected: string | null): void;
}

const BREAKER_STATES = ['closed', 'half_open', 'open'] as const;

/** The connector's rejection reason, reduced to a small fixed set of label values. */
export function rejectionLabel(reason: string): string {
  if (/unknown account/i.test(reason)) return 'unknown_account';
  if (/header/i.test(reason)) return 'signature_header';
  if (/old \(tolerance/i.test(reason)) return 'stale_timestamp';
  if (/basic auth/i.test(reason)) return 'basic_auth';
  if (/signature|hmac/i.test(reason)) return 'bad_signature';
  if (/not JSON|is not a|is not an/i.test(reason)) return 'malformed_body';
  return 'other';
}

export function outcomeLabel(o: CallOutcome): string {
  return o.kind === 'declined' ? `declined_${o.class}` : o.kind;
}

function outcomeReason(o: CallOutcome): string {
  return o.kind === 'not_sent' || o.kind === 'unknown' ? o.reason : '';
}

export class GatewayMetrics implements WebhookIntakeObserver {
  readonly registry = new Registry();
  private readonly transitions: Counter<'from' | 'to' | 'connector' | 'origin'>;
  private readonly ignoredTransitions: Counter<'origin' | 'code'>;
  private readonly calls: Counter<'connector' | 'op' | 'outcome' | 'reason'>;
  private readonly callSeconds: Histogram<'connector' | 'op' | 'outcome'>;
  private readonly idempotency: Counter<'outcome'>;
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly requestSeconds: Histogram<'method' | 'route'>;
  private readonly webhooksReceived: Counter<'connector'>;
  private readonly webhooksRejected: Counter<'connector' | 'reason'>;
  private readonly webhookIgnored: Counter<'connector' | 'reason'>;
  private readonly webhookJobs: Counter<'queue' | 'result'>;
  private readonly configReloads: Counter<'result'>;
  private readonly rateLimitedRequests: Counter<'policy'>;
  private readonly rateLimitFailOpen: Counter<'reason'>;
  private config: ObservedConfig | null = null;
  private cached: { at: number; value: Promise<Indicators> } | null = null;

  constructor(
    private readonly read: () => Promise<Indicators>,
    opts: { defaultMetrics?: boolean; cacheMs?: number } = {},
  ) {
    const registers = [this.registry];
    const cacheMs = opts.cacheMs ?? 1_000;
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });

    this.transitions = new Counter({ name: 'switchyard_transitions_total', help: 'Applied payment transitions by from-state, to-state, connector account and origin', labelNames: ['from', 'to', 'connector', 'origin'], registers });
    this.ignoredTransitions = new Counter({ name: 'switchyard_transitions_ignored_total', help: 'Inputs recorded but not applied (noop: stale or duplicate; otherwise the illegal code)', labelNames: ['origin', 'code'], registers });
    this.calls = new Counter({ name: 'switchyard_provider_calls_total', help: 'Provider calls by connector account, operation and outcome (succeeded, declined_hard, declined_soft, not_sent, unknown, pending, action_required)', labelNames: ['connector', 'op', 'outcome', 'reason'], registers });
    this.callSeconds = new Histogram({ name: 'switchyard_provider_call_duration_seconds', help: 'Provider call latency as the worker saw it (breaker included)', labelNames: ['connector', 'op', 'outcome'], buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30], registers });
    this.idempotency = new Counter({ name: 'switchyard_idempotency_total', help: 'Idempotency outcomes: replayed (stored answer sent again), in_progress (409), key_reused (422)', labelNames: ['outcome'], registers });
    this.requests = new Counter({ name: 'switchyard_http_requests_total', help: 'HTTP requests by method, route and status', labelNames: ['method', 'route', 'status'], registers });
    this.requestSeconds = new Histogram({ name: 'switchyard_http_request_duration_seconds', help: 'HTTP request duration', labelNames: ['method', 'route'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers });
    this.webhooksReceived = new Counter({ name: 'switchyard_webhooks_received_total', help: 'Provider webhook requests verified and stored', labelNames: ['connector'], registers });
    this.webhooksRejected = new Counter({ name: 'switchyard_webhooks_rejected_total', help: 'Provider webhook requests refused at intake, by reason', labelNames: ['connector', 'reason'], registers });
    this.webhookIgnored = new Counter({ name: 'switchyard_webhook_events_ignored_total', help: 'Verified provider events that changed nothing: stale (or duplicate) and illegal', labelNames: ['connector', 'reason'], registers });
    this.webhookJobs = new Counter({ name: 'switchyard_webhook_jobs_total', help: 'Webhook jobs finished by queue and result (inbound: applied, ignored, retry, failed; deliveries: succeeded, retry, dead)', labelNames: ['queue', 'result'], registers });

    this.configReloads = new Counter({ name: 'switchyard_config_reload_total', help: 'Config reloads (file change or SIGHUP) by result: swapped (a new routing snapshot serves), unchanged, rejected (invalid, or adds or changes a connector account: the old snapshot keeps serving)', labelNames: ['result'], registers });
    for (const result of CONFIG_RELOAD_RESULTS) this.configReloads.inc({ result }, 0);
    this.rateLimitedRequests = new Counter({ name: 'switchyard_rate_limited_total', help: 'Merchant API requests refused with 429 rate_limited, by the policy that refused them (merchant, key, create, refund, write, read, publishable_key, client)', labelNames: ['policy'], registers });
    // Exported at 0 from the start, so an alert on its rate has a series before the first outage.
    this.rateLimitFailOpen = new Counter({ name: 'switchyard_rate_limit_fail_open_total', help: 'Merchant API requests let through without a rate limit because Redis did not answer the limiter within 50 ms (timeout) or failed (error)', labelNames: ['reason'], registers });
    for (const reason of ['timeout', 'error']) this.rateLimitFailOpen.inc({ reason }, 0);
    const configStatus = (): ConfigStatus | null => this.config?.status() ?? null;
    new Gauge<'snapshot'>({
      name: 'switchyard_config_snapshot_info', help: 'The routing snapshot this process serves (1, labelled with its version)', labelNames: ['snapshot'], registers,
      collect() {
        this.reset();
        const s = configStatus();
        if (s !== null) this.set({ snapshot: s.snapshot }, 1);
      },
    });
    new Gauge({
      name: 'switchyard_config_last_load_success_timestamp_seconds', help: 'When this process last read the config file and accepted it (at start, or a reload that swapped or found it unchanged), Unix seconds', registers,
      collect() {
        const s = configStatus();
        if (s !== null) this.set(s.loadedAt.getTime() / 1000);
      },
    });

    const snapshot = (): Promise<Indicators> => {
      const now = Date.now();
      if (this.cached === null || now - this.cached.at > cacheMs) this.cached = { at: now, value: this.read() };
      return this.cached.value;
    };
    const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[], fill: (g: Gauge<L>, s: Indicators) => void): void => {
      new Gauge<L>({
        name, help, labelNames, registers,
        async collect() {
          const s = await snapshot();
          this.reset();
          fill(this, s);
        },
      });
    };

    gauge('switchyard_payments_nonterminal', 'Payments not in a terminal state, by state and connector account of the latest attempt', ['state', 'connector'], (g, s) => {
      for (const p of s.payments) g.set({ state: p.state, connector: p.connector }, p.count);
    });
    gauge('switchyard_payments_oldest_nonterminal_age_seconds', 'Age of the oldest non-terminal payment, by state and connector account', ['state', 'connector'], (g, s) => {
      for (const p of s.payments) g.set({ state: p.state, connector: p.connector }, p.oldestAgeSeconds);
    });
    for (const state of ['auth_unknown', 'needs_review'] as const) {
      gauge(`switchyard_payments_${state}`, `Payments in ${state} now`, [], (g, s) => {
        g.set(s.payments.filter((p) => p.state === state).reduce((n, p) => n + p.count, 0));
      });
    }
    gauge('switchyard_breaker_state', 'Circuit breaker state per connector account in this process (1 for the current state)', ['connector', 'state'], (g, s) => {
      for (const [connector, state] of Object.entries(s.breakers)) for (const b of BREAKER_STATES) g.set({ connector, state: b }, state === b ? 1 : 0);
    });
    gauge('switchyard_breaker_processes', 'Live processes whose breaker for the connector account is in each state (fleet-wide, from Redis)', ['connector', 'state'], (g, s) => {
      for (const [connector, counts] of Object.entries(s.fleetBreakers ?? {})) for (const b of BREAKER_STATES) g.set({ connector, state: b }, counts[b]);
    });
    gauge('switchyard_queue_jobs', 'BullMQ jobs per queue and status', ['queue', 'status'], (g, s) => {
      for (const q of s.queues ?? []) for (const status of ['waiting', 'active', 'delayed', 'failed'] as const) g.set({ queue: q.queue, status }, q[status]);
    });
    gauge('switchyard_queue_oldest_waiting_age_seconds', 'How long the oldest job ready to run has waited, per queue', ['queue'], (g, s) => {
      for (const q of s.queues ?? []) g.set({ queue: q.queue }, q.oldestWaitingAgeSeconds);
    });
    gauge('switchyard_outbox_due', 'Outbox rows due and not done, by kind (the durable backlog behind the queues)', ['kind'], (g, s) => {
      for (const [kind, v] of Object.entries(s.outboxDue)) g.set({ kind }, v.count);
    });
    gauge('switchyard_outbox_oldest_due_age_seconds', 'How long the oldest due outbox row has been due, by kind', ['kind'], (g, s) => {
      for (const [kind, v] of Object.entries(s.outboxDue)) g.set({ kind }, v.oldestAgeSeconds);
    });
    gauge('switchyard_outbox_unpublishable_rows', 'Pending outbox rows of connector accounts not in the config, by account: no worker takes them; dead-lettered (account_not_configured) after SWITCHYARD_ORPHAN_GRACE', ['connector'], (g, s) => {
      for (const [connector, n] of Object.entries(s.outboxUnpublishable)) g.set({ connector }, n);
    });
    gauge('switchyard_dead_letters', 'Dead letters by kind (outbox rows past their retries; inbound_event: webhook events that could not be applied)', ['kind'], (g, s) => {
      for (const [kind, v] of Object.entries(s.deadLetters)) g.set({ kind }, v.count);
    });
    gauge('switchyard_dead_letter_oldest_age_seconds', 'Age of the oldest dead letter, by kind', ['kind'], (g, s) => {
      for (const [kind, v] of Object.entries(s.deadLetters)) g.set({ kind }, v.oldestAgeSeconds);
    });
    // Aggregates only: an endpoint or merchant id as a label would show every merchant's webhook
    // activity to whoever can scrape. The dashboard, behind an operator's token, has the per-endpoint view.
    gauge('switchyard_webhook_deliveries', 'Merchant event deliveries not yet delivered, by state (pending: not tried yet; failing: being retried) and age bucket', ['state', 'age'], (g, s) => {
      for (const state of ['pending', 'failing'] as const) for (const age of DELIVERY_AGE_BUCKETS) g.set({ state, age }, 0);
      for (const d of s.deliveryTotals.byAge) g.set({ state: d.state, age: d.age }, d.count);
    });
    gauge('switchyard_webhook_endpoints_failing', 'Webhook endpoints with failing deliveries, by how many they have (1_9, 10_49, 50_plus)', ['failing'], (g, s) => {
      for (const [failing, n] of Object.entries(s.deliveryTotals.endpointsFailing)) g.set({ failing }, n);
    });
    gauge('switchyard_discrepancies_open', 'Open reconciliation discrepancies by category', ['category'], (g, s) => {
      for (const [category, v] of Object.entries(s.discrepancies)) g.set({ category }, v.count);
    });
    gauge('switchyard_indicator_read_errors', 'Indicator sources that could not be read at this scrape (Postgres or Redis down)', [], (g, s) => {
      g.set(s.errors.length);
    });
  }

  /** Counts the holder's reloads and reports its snapshot at scrape time. */
  observeConfig(config: ObservedConfig): void {
    this.config = config;
    config.onReload((o) => this.configReloads.inc({ result: o.kind }));
  }

  /** The indicators snapshot (also what the dashboard shows). */
  indicators(): Promise<Indicators> {
    this.cached = null;
    return this.read();
  }

  transition(e: TransitionEvent): void {
    if (e.kind === 'applied') this.transitions.inc({ from: e.from, to: e.to, connector: e.connector ?? 'none', origin: e.origin });
    else this.ignoredTransitions.inc({ origin: e.origin, code: e.code ?? 'noop' });
    if (e.origin === 'webhook' && e.kind !== 'applied') this.webhookIgnored.inc({ connector: e.connector ?? 'none', reason: e.kind === 'noop' ? 'stale' : 'illegal' });
  }

  /** Wraps the worker's provider call (outermost: it sees what the core will see). */
  aroundCall<E extends ObservedEffect>(inner?: AroundCall<E>): AroundCall<E> {
    return async (effect, call) => {
      const started = performance.now();
      const outcome = inner === undefined ? await call() : await inner(effect, call);
      const labels = { connector: effect.connector, op: effect.op, outcome: outcomeLabel(outcome) };
      this.calls.inc({ ...labels, reason: outcomeReason(outcome) });
      this.callSeconds.observe(labels, (performance.now() - started) / 1000);
      return outcome;
    };
  }

  request(method: string, route: string, status: number, seconds: number, idempotency: string | null): void {
    this.requests.inc({ method, route, status: String(status) });
    this.requestSeconds.observe({ method, route }, seconds);
    if (idempotency !== null) this.idempotency.inc({ outcome: idempotency });
  }

  /** A request the limiter let through because Redis did not answer (src/api/shared-rate-limit.ts). */
  rateLimitFailedOpen(reason: 'timeout' | 'error'): void {
    this.rateLimitFailOpen.inc({ reason });
  }

  /** A request refused by these rate-limit policies. */
  rateLimited(policies: readonly string[]): void {
    for (const policy of policies) this.rateLimitedRequests.inc({ policy });
  }

  webhookIntake(connector: string, rejected: string | null): void {
    if (rejected === null) this.webhooksReceived.inc({ connector });
    else this.webhooksRejected.inc({ connector, reason: rejectionLabel(rejected) });
  }

  webhookJobDone(queue: string, result: unknown): void {
    const kind = (result as { kind?: unknown } | null)?.kind;
    this.webhookJobs.inc({ queue, result: typeof kind === 'string' ? kind : 'done' });
  }

  /** This process's counters since it started (the dashboard shows them beside the shared indicators). */
  async counters(): Promise<{ metric: string; labels: Record<string, string | number>; value: number }[]> {
    const out: { metric: string; labels: Record<string, string | number>; value: number }[] = [];
    for (const c of [this.calls, this.transitions, this.ignoredTransitions, this.idempotency, this.webhooksReceived, this.webhooksRejected, this.webhookIgnored, this.webhookJobs, this.rateLimitedRequests, this.rateLimitFailOpen]) {
      const { name, values } = await c.get();
      for (const v of values) if (v.value > 0) out.push({ metric: name, labels: { ...v.labels }, value: v.value });
    }
    return out;
  }

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
