// The runtime every gateway process shares: database, config, connectors (and in-process
// sandboxes), breakers, the relay and — for the worker role — the outbox workers. The API layer
// and the CLI build on it; src/main.ts is the composition root that starts it.

import type { Connector } from '../connectors/contract.ts';
import type { SandboxControl } from '../sandboxes/shared/control.ts';
import { ConnectorBreakers } from '../routing/breakers.ts';
import { ConfigHolder } from '../routing/config-holder.ts';
import { formatProblems } from '../routing/config-loader.ts';
import type { CorePolicy } from '../core/policy.ts';
import { createDatabase } from '../store/db.ts';
import type { Database } from '../store/db.ts';
import { RoutingSnapshotStore, saveRoutingSnapshot } from '../store/routing-snapshots.ts';
import type { ProcessorDeps, ProcessResult } from '../jobs/outbox-processor.ts';
import { OUTBOX_JOB_OPTIONS, QueueSet, TIMER_QUEUE, callQueueName, redisConnection } from '../jobs/queues.ts';
import { RecoverySweeper } from '../jobs/recovery.ts';
import { OutboxRelay } from '../jobs/relay.ts';
import type { RelaySeams } from '../jobs/relay.ts';
import { DEFAULT_ORPHAN_GRACE_MS } from '../jobs/unpublishable-rows.ts';
import type { AccountRows } from '../jobs/unpublishable-rows.ts';
import { StepEnvFactory } from '../jobs/step-env.ts';
import { WorkerPool } from '../jobs/workers.ts';
import { AccountBudget } from '../jobs/account-budget.ts';
import { LocalDispatcher } from '../jobs/local-dispatch.ts';
import { buildConnectorSet } from './connector-accounts.ts';
import { sandboxDatabaseUrl } from '../sandboxes/shared/database.ts';
import { PaymentWaits } from './payment-waits.ts';
import { RELAYED_WEBHOOK_KINDS, webhookQueueFor } from '../webhooks/webhook-jobs.ts';
import { webhookSettings } from '../webhooks/webhook-services.ts';
import type { WebhookOptions, WebhookServices } from '../webhooks/webhook-services.ts';
import { deadLetterOutboxRow, WebhookWorkers } from '../webhooks/webhook-workers.ts';
import { loadEndpointKeys } from '../webhooks/outbound/endpoint-keys.ts';
import { loadSigningKeys } from '../webhooks/outbound/signing-keys.ts';
import type { Redis } from 'ioredis';
import { SharedRateLimiter } from '../api/shared-rate-limit.ts';
import { createLogger, startObservability } from '../observability/index.ts';
import type { GatewayMetrics, Logger } from '../observability/index.ts';
import { DELIVERY_QUEUE, INBOUND_QUEUE, MERCHANT_EVENT_QUEUE } from '../webhooks/webhook-jobs.ts';
import { BreakerBoard } from '../observability/breaker-board.ts';
import type { TransitionSeams } from '../store/transition.ts';
import { startReconcileSchedule } from '../reconcile/schedule.ts';
import type { ReconcileScheduleOptions } from '../reconcile/schedule.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';
import { hostname } from 'node:os';
import { lazyVault } from '../vault/lazy.ts';
import type { ProcessVault } from '../vault/lazy.ts';
import type { CardVaultDeps } from '../jobs/card-reveal.ts';
import { createVaultClient, vaultClientSettingsFromEnv } from '../vault/client.ts';

/** Dependency-injection seams: production passes none; the chaos harness plants bugs through them. */
export interface GatewaySeams {
  readonly transition?: TransitionSeams;
  readonly aroundCall?: ProcessorDeps['aroundCall'];
  readonly mapEvent?: WebhookServices['mapEvent'];
  /** The worker's execution-time checks (key retention, how a refusal is judged against the claim). */
  readonly checks?: ProcessorDeps['checks'];
  /** How the relay reads the state of a row's BullMQ job. */
  readonly relay?: RelaySeams;
  /** Called with each vaulted card the worker is about to send (production: none; the harness plants a leak here). */
  readonly cardSent?: CardVaultDeps['sent'];
}

export type Role = 'api' | 'worker' | 'all';

export interface RuntimeOptions {
  readonly role: Role;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly configFile: string;
  /** BullMQ key prefix: tests give each file its own. */
  readonly queuePrefix?: string;
  /** The rate limits' Redis key prefix (SWITCHYARD_RATE_LIMIT_PREFIX); default the queue prefix. */
  readonly rateLimitPrefix?: string;
  readonly now?: () => Date;
  readonly core?: CorePolicy;
  readonly log?: (line: string) => void;
  /** Structured JSON logs (requests, transitions); default: pino lines written through `log`. */
  readonly logger?: Logger;
  /** Base URL of this gateway, where in-process sandboxes send webhooks (`${base}/webhooks/${account}`). */
  readonly webhookBaseUrl?: string;
  /**
   * Base URL where customers' browsers reach this gateway (authentication pages and returns);
   * default SWITCHYARD_PUBLIC_URL, else webhookBaseUrl. Absent: no customer authentication by redirect.
   */
  readonly publicUrl?: string;
  readonly relaySweepMs?: number;
  /** A published row still pending after this long is published again (its job may be gone with a Redis flush). */
  readonly relayRepublishMs?: number;
  readonly aroundCall?: ProcessorDeps['aroundCall'];
  readonly onProcessed?: (outboxId: number, result: ProcessResult) => void;
  /**
   * Dispatch at commit (src/jobs/local-dispatch.ts): the process that commits a provider call or a
   * due timer runs it. Default true; SWITCHYARD_DISPATCH_AT_COMMIT=false turns it off (every row
   * through the relay and BullMQ, as before).
   */
  readonly dispatchAtCommit?: boolean;
  readonly dbPoolMax?: number;
  /** Infrastructure retries of a job before its row is dead-lettered. */
  readonly jobAttempts?: number;
  readonly jobBackoffMs?: number;
  /** Recovery sweeper (worker role): how long a payment may sit untouched with nothing pending. */
  readonly recoveryStaleMs?: number;
  readonly recoveryIntervalMs?: number;
  readonly webhooks?: WebhookOptions;
  /** Where SWITCHYARD_SIGNING_JWKS is read from (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  readonly seams?: GatewaySeams;
  /** Daily and weekly reconciliation jobs (worker role; src/reconcile/schedule.ts); false: none. */
  readonly reconcileSchedule?: ReconcileScheduleOptions | false;
  /**
   * How long a connector account may be absent from the config before its outbox rows are
   * dead-lettered (account_not_configured); SWITCHYARD_ORPHAN_GRACE, default 15 min.
   */
  readonly orphanGraceMs?: number;
  /** The card vault (tests pass their own); default: the vault process at SWITCHYARD_VAULT_URL, else the embedded vault, opened on first use. */
  readonly vault?: ProcessVault;
}

export interface Runtime {
  readonly role: Role;
  readonly database: Database;
  readonly config: ConfigHolder;
  readonly connectors: ReadonlyMap<string, Connector>;
  readonly sandboxes: readonly SandboxControl[];
  readonly breakers: ConnectorBreakers;
  readonly envs: StepEnvFactory;
  readonly snapshots: RoutingSnapshotStore;
  readonly relay: OutboxRelay;
  /** After a commit that wrote outbox rows: runs what it can here (dispatch at commit), the relay publishes the rest. */
  readonly dispatch: (outboxIds?: readonly number[]) => void;
  readonly dispatcher: LocalDispatcher;
  readonly budget: AccountBudget;
  /** Wakes the API's waits when a payment changes: in this process, and over Redis pub/sub between split api/worker processes. */
  readonly waits?: PaymentWaits;
  readonly queues: QueueSet;
  readonly workers: WorkerPool | null;
  /** What the webhook routers take (src/webhooks: provider intake, merchant endpoints, JWKS). */
  readonly webhooks: WebhookServices;
  /** Prometheus metrics: this process's counters, shared state read at scrape time. */
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Where customers' browsers reach this gateway (RuntimeOptions.publicUrl), or null. */
  readonly publicUrl: string | null;
  /** The queue an outbox row of this kind and connector goes to (null: no consumer). */
  queueFor(kind: string, connector: string | null): string | null;
  /** Outbox rows that go to their account's queue, and the accounts this process has (the others' rows cannot be published). */
  readonly outboxAccounts: AccountRows;
  /** RuntimeOptions.orphanGraceMs as applied. */
  readonly orphanGraceMs: number;
  /** Tokenizes, describes and (for a provider call) reveals vaulted cards. */
  readonly vault: ProcessVault;
  /** The merchant API's rate-limit buckets, shared by every API process in Redis; null in a worker. */
  readonly rateLimiter: SharedRateLimiter | null;
  stop(): Promise<void>;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export async function startRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const aroundCall = opts.aroundCall ?? opts.seams?.aroundCall;
  const now = opts.now ?? (() => new Date());
  const publicUrl = (opts.publicUrl ?? (opts.env ?? process.env)['SWITCHYARD_PUBLIC_URL'] ?? opts.webhookBaseUrl)?.replace(/\/+$/, '');
  const logger = opts.logger ?? createLogger(log);
  // A rejected reload (and a lost file watch) is an error: the file on disk is not what is served.
  const holder = ConfigHolder.open(opts.configFile, { log: { info: (l) => logger.info(l), error: (l) => logger.error(l) } });
  if (!(holder instanceof ConfigHolder)) throw new ConfigError(formatProblems(holder));
  const { config, snapshot } = holder.current();

  // Refused (VaultSettingsError) before anything is opened: a URL without its token, or in the clear across the network.
  const remoteVault = opts.vault === undefined ? vaultClientSettingsFromEnv(opts.env ?? process.env) : null;
  const database = createDatabase(opts.databaseUrl, { max: opts.dbPoolMax ?? 20, onConnectionError: (e) => log(`postgres: ${safeErrorText(e)}`) });
  const snapshots = new RoutingSnapshotStore();
  const cleanups: (() => Promise<unknown>)[] = [() => database.close()];
  // A vault process (SWITCHYARD_VAULT_URL) or the embedded vault, loaded on first use: the encryption SDK costs a few hundred ms to load.
  const vault = opts.vault ?? (remoteVault !== null ? createVaultClient(remoteVault) : lazyVault(async () => (await import('../vault/index.ts')).openVault({
    gatewayDatabaseUrl: opts.databaseUrl, ...(opts.env === undefined ? {} : { env: opts.env }), log,
  })));
  cleanups.push(() => vault.close());
  try {
    await saveRoutingSnapshot(database.db, snapshot);
    snapshots.remember(snapshot);
    holder.onChange((s) => {
      snapshots.remember(s.snapshot);
      void saveRoutingSnapshot(database.db, s.snapshot).catch((e: unknown) => log(`routing snapshot not stored: ${safeErrorText(e)}`));
    });

    const set = await buildConnectorSet(config, {
      webhookUrl: (a) => (opts.webhookBaseUrl === undefined ? undefined : `${opts.webhookBaseUrl}/webhooks/${a}`),
      sandboxDatabaseUrl: sandboxDatabaseUrl(opts.databaseUrl, opts.env ?? process.env),
      log,
    });
    cleanups.unshift(() => set.close());
    const breakerSettings = Object.fromEntries(Object.entries(config.connectors).map(([n, c]) => [n, c.breaker]));
    const breakers = new ConnectorBreakers(breakerSettings, log);
    cleanups.unshift(() => Promise.resolve(breakers.shutdown()));
    // Routing's view of the breakers: this process's own, combined with the fleet's once the board runs (below).
    let openBreakers = (): ReadonlySet<string> => breakers.openAccounts();
    const envs = new StepEnvFactory({
      connectors: set.connectors, breakers, snapshots, openBreakers: () => openBreakers(),
      ...(opts.core === undefined ? {} : { core: opts.core }),
      ...(opts.seams?.transition === undefined ? {} : { seams: opts.seams.transition }),
    });

    const producer: Redis = redisConnection(opts.redisUrl, 'producer', log);
    cleanups.push(() => producer.quit().catch(() => producer.disconnect()));
    const prefix = opts.queuePrefix ?? 'sy';
    const queues = new QueueSet(producer, prefix);
    cleanups.unshift(() => queues.close());
    // Split roles: a worker's commits wake the API process's waits over Redis pub/sub (a hint; the
    // waits still re-read on a fallback interval). Role `all` wakes its own waits in-process only.
    const split = opts.role !== 'all';
    const waits = new PaymentWaits(database.db, {
      publisher: split ? producer : null,
      subscriber: opts.role === 'api' ? redisConnection(opts.redisUrl, 'worker', log) : null,
      channel: `${prefix}:payment-changed`, fallbackMs: split ? 250 : 100, log,
    });
    cleanups.unshift(() => waits.close());
    const accounts = new Set(Object.keys(config.connectors));
    const queueNames = [...[...accounts].map(callQueueName), TIMER_QUEUE, INBOUND_QUEUE, MERCHANT_EVENT_QUEUE, DELIVERY_QUEUE];
    // Every process shares its breaker states through Redis (API processes call providers too since
    // dispatch at commit), so any process can report the fleet's, and routing combines its own
    // breakers with the fleet's (src/routing/fleet-breakers.ts).
    const breakerBoard = new BreakerBoard(producer, `${prefix}:switchyard:breakers`, () => breakers.states(), { lastCalls: () => breakers.lastCalls() });
    breakers.onChange = () => breakerBoard.changed();
    breakerBoard.start();
    openBreakers = () => breakerBoard.openAccounts(breakers.openAccounts(), (a) => breakers.windowMs(a));
    cleanups.unshift(() => breakerBoard.stop());
    // Provider calls go to their account's queue: those of an account not in this config cannot be published.
    const outboxAccounts: AccountRows = { kinds: ['provider_call'], configured: [...accounts] };
    const orphanGraceMs = opts.orphanGraceMs ?? DEFAULT_ORPHAN_GRACE_MS;
    const observability = startObservability(logger, {
      db: database.db, now, queueNames: () => queueNames, queue: (n) => queues.get(n), breakers: () => breakers.states(), fleetBreakers: () => breakerBoard.read(),
      accountRows: outboxAccounts,
    });
    cleanups.push(() => Promise.resolve(observability.stop()));
    const metrics = observability.metrics;
    metrics.observeConfig(holder);
    // The API's rate limits (src/api/rate-limit.ts): buckets every API process shares, under this runtime's prefix.
    const rateLimiter = opts.role === 'worker' ? null : new SharedRateLimiter({ redisUrl: opts.redisUrl, prefix: opts.rateLimitPrefix ?? prefix, log });
    if (rateLimiter !== null) {
      rateLimiter.observer = { failedOpen: (reason) => metrics.rateLimitFailedOpen(reason), limited: (policies) => metrics.rateLimited(policies) };
      cleanups.push(() => rateLimiter.close());
    }
    const queueFor = (kind: string, connector: string | null): string | null =>
      webhookQueueFor(kind) ?? (kind === 'timer' ? TIMER_QUEUE : kind === 'provider_call' && connector !== null && accounts.has(connector) ? callQueueName(connector) : null);
    const relay = new OutboxRelay(
      database.pool,
      queues,
      (row) => queueFor(row.kind, row.connector),
      ['provider_call', 'timer', ...RELAYED_WEBHOOK_KINDS],
      {
        now, log,
        ...(opts.relaySweepMs === undefined ? {} : { sweepIntervalMs: opts.relaySweepMs }),
        ...(opts.relayRepublishMs === undefined ? {} : { republishAfterMs: opts.relayRepublishMs }),
        jobOptions: { ...OUTBOX_JOB_OPTIONS, attempts: opts.jobAttempts ?? OUTBOX_JOB_OPTIONS.attempts ?? 8, backoff: { type: 'exponential', delay: opts.jobBackoffMs ?? 500 } },
        // A failed job's row dead-lettered by the sweep: an inbound event goes to the dead letter with it.
        deadLetter: (row, reason) => deadLetterOutboxRow(database.db, now(), row, reason),
        ...(opts.seams?.relay === undefined ? {} : { seams: opts.seams.relay }),
        accountRows: outboxAccounts, orphanGraceMs,
      },
    );
    cleanups.unshift(() => relay.stop());
    // A commit may have written deliveries: this process's dispatcher (worker role) takes them now.
    let pokeDeliveries: () => void = () => undefined;
    const limits = Object.fromEntries(Object.entries(config.connectors).map(([n, c]) => [n, { concurrency: c.queue.concurrency, ratePerS: c.queue.rate_per_s }]));
    // One budget per connector account for the whole fleet and both triggers (the call at commit, the BullMQ worker).
    const budget = new AccountBudget(producer, prefix, limits);
    const env = opts.env ?? process.env;
    const dispatchAtCommit = opts.dispatchAtCommit ?? env['SWITCHYARD_DISPATCH_AT_COMMIT'] !== 'false';
    // Every process that commits provider calls runs them (an API process too): the same deps as a worker's.
    const processorDeps: ProcessorDeps = {
      db: database.db, connectors: set.connectors, breakers, envs, now, budget,
      kick: (ids) => kick(ids),
      aroundCall: metrics.aroundCall(aroundCall),
      cards: { vault, process: `${opts.role}@${hostname()}:${process.pid}`, log, ...(opts.seams?.cardSent === undefined ? {} : { sent: opts.seams.cardSent }) },
      ...(opts.seams?.checks === undefined ? {} : { checks: opts.seams.checks }),
    };
    const dispatcher = new LocalDispatcher(processorDeps, {
      relay: (ids) => relay.kick(ids), budget, enabled: dispatchAtCommit, log,
      ...(opts.onProcessed === undefined ? {} : { onProcessed: opts.onProcessed }),
    });
    const kick = (ids?: readonly number[]): void => {
      dispatcher.offer(ids);
      pokeDeliveries();
    };
    const webhooks: WebhookServices = {
      db: database.db, connectors: set.connectors, envs, now, log, kick,
      keys: await loadSigningKeys(database.db, opts.env ?? process.env, log), endpointKeys: await loadEndpointKeys(database.db, opts.env ?? process.env, log), settings: webhookSettings(opts.webhooks, opts.env ?? process.env), observe: metrics,
      ...(opts.seams?.mapEvent === undefined ? {} : { mapEvent: opts.seams.mapEvent }),
    };

    let workers: WorkerPool | null = null;
    if (opts.role !== 'api') {
      const workerConnection = redisConnection(opts.redisUrl, 'worker', log);
      cleanups.push(() => workerConnection.quit().catch(() => workerConnection.disconnect()));
      workers = new WorkerPool(
        processorDeps,
        { connection: workerConnection, prefix, accounts: limits, log, ...(opts.onProcessed === undefined ? {} : { onProcessed: opts.onProcessed }) },
      );
      cleanups.unshift(() => workers!.close());
      await workers.waitUntilReady();
      const webhookWorkers = new WebhookWorkers(webhooks, { connection: workerConnection, prefix, onProcessed: (q, _id, r) => metrics.webhookJobDone(q, r) });
      cleanups.unshift(() => webhookWorkers.close());
      await webhookWorkers.waitUntilReady();
      pokeDeliveries = () => webhookWorkers.pokeDeliveries();
      const recovery = new RecoverySweeper(
        { db: database.db, envs, kick },
        { staleMs: opts.recoveryStaleMs ?? 5 * 60_000, intervalMs: opts.recoveryIntervalMs ?? 30_000, perConnectorPerSweep: 50, now, log },
      );
      recovery.start();
      cleanups.unshift(() => Promise.resolve(recovery.stop()));
      if (opts.reconcileSchedule !== false) {
        const reconcileJobs = await startReconcileSchedule({ db: database.db, connectors: set.connectors, envs, now, log, onApplied: () => relay.kick() }, { connection: workerConnection, prefix }, opts.reconcileSchedule);
        cleanups.unshift(() => reconcileJobs.close());
      }
    }
    relay.start();
    // Stops first: rows running here finish (or give their claim back) before the pools close.
    cleanups.unshift(() => dispatcher.stop());

    let stopped = false;
    return {
      role: opts.role, database, config: holder, connectors: set.connectors, sandboxes: set.sandboxes, breakers, envs, snapshots, relay, waits, queues, workers, webhooks, metrics, logger, now, queueFor,
      dispatch: kick, dispatcher, budget, outboxAccounts, orphanGraceMs, vault, rateLimiter,
      publicUrl: publicUrl ?? null,
      async stop() {
        if (stopped) return;
        stopped = true;
        holder.close();
        for (const c of cleanups) await c().catch((e: unknown) => log(`shutdown: ${safeErrorText(e)}`));
      },
    };
  } catch (err) {
    for (const c of cleanups) await c().catch(() => undefined);
    throw err;
  }
}
