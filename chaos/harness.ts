// One chaos run: stand the gateway up (or reuse a running topology), create the run's merchants,
// drive the seeded lifecycles while the faults fire, stop the faults, wait for quiescence, and
// check every invariant against the database and the sandboxes' ledgers.

import { randomBytes } from 'node:crypto';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { createMerchant } from '../src/store/merchants.ts';
import * as schema from '../src/store/schema.ts';
import { CustomerDeadlineWatch } from './customer-deadline.ts';
import { Driver } from './driver.ts';
import { FaultInjector } from './faults.ts';
import type { ExecutedFault } from './faults.ts';
import { checkInvariants, INVARIANTS } from './invariants.ts';
import type { Invariant, Violation } from './invariants.ts';
import { cardDataViolations } from './card-data.ts';
import { FAULT_KINDS, KEY_EXPIRY_RETENTION_S, makePlan, VAULTED_SHARE } from './plan.ts';
import { needsReviewByReason } from './review-reasons.ts';
import type { FaultEvent, FaultKind, PaymentPlan, ProviderOp } from './plan.ts';
import type { PlantedBug } from './planted-bugs.ts';
import { total, waitForQuiescence } from './quiesce.ts';
import { loadRunData } from './run-data.ts';
import { SecondProcess } from './second-process.ts';
import { ACCOUNTS, GATEWAY_QUEUE_PREFIX, MAIN_ACCOUNTS, SHORT_KEYS_ACCOUNT_OF, Topology } from './topology.ts';
import { controlFetch } from './control-fetch.ts';

export interface ChaosOptions {
  readonly payments: number;
  readonly seed: number;
  readonly processes: number;
  readonly databaseUrl: string;
  readonly runDir: string;
  readonly concurrency?: number;
  /** Faults per planned operation (default 0.25: one per four operations). */
  readonly faultRate?: number;
  readonly kinds?: readonly FaultKind[];
  /** Faults only at these sandbox accounts and operations (a planted bug's test aims them; default all). */
  readonly faultAccounts?: readonly string[];
  readonly faultOps?: readonly ProviderOp[];
  /** release_failure faults of this variant only (a planted bug's test aims them; default both). */
  readonly releaseMode?: 'refused' | 'fail_later';
  /** With key_expiry faults: the share of payments with a refund sent to the short-keys accounts (plan.ts). */
  readonly shortKeysShare?: number;
  /** Of the approved payments without authentication, the share paid with a vaulted card (default VAULTED_SHARE). */
  readonly vaultedShare?: number;
  /** The vault as its own process (a topology this run boots), with kill_vault faults. */
  readonly vaultProcess?: boolean;
  /** Only the lifecycles this keeps (plan.ts `keep`): `payments` of them. */
  readonly keep?: (p: PaymentPlan) => boolean;
  /** Provider webhooks delayed this long for the whole run (besides the planned webhook_delay faults). */
  readonly webhookDelayMs?: number;
  /** A recorded schedule to run instead of the seeded one. */
  readonly replay?: readonly FaultEvent[];
  readonly plant?: PlantedBug | null;
  readonly quiesceMs?: number;
  /** How long the driver waits for a payment or refund to settle before moving on (default 30 s). */
  readonly settleTimeoutMs?: number;
  readonly clientTimeoutMs?: number;
  readonly merchants?: number;
  readonly onProgress?: (p: Progress) => void;
  readonly log?: (line: string) => void;
}

export interface Progress {
  readonly phase: 'starting' | 'driving' | 'settling' | 'checking';
  readonly paymentsDone: number;
  readonly payments: number;
  readonly operations: number;
  readonly faults: number;
  readonly inFlight?: number;
}

export interface ChaosReport {
  readonly seed: number;
  readonly payments: number;
  readonly operations: number;
  readonly faults: number;
  readonly faults_by_kind: Record<FaultKind, number>;
  readonly kills: number;
  /** Payments the plan paid with a vaulted card (issue 44). */
  readonly vaulted_payments: number;
  readonly violations: number;
  readonly violations_by_invariant: Record<Invariant, number>;
  readonly in_flight: number;
  readonly needs_review: number;
  /** The parked payments by why: `needs_review: <reason>` or `discrepancy: <kind>` (chaos/review-reasons.ts). */
  readonly needs_review_by_reason: Readonly<Record<string, number>>;
  /** Gateway processes that exited during start (and were started again, as a supervisor would). */
  readonly start_failures: number;
  /** Gateway processes not ready at the checks: a run passes only with none. */
  readonly processes_down: number;
  readonly duration_s: number;
  /** How the simulated customers' walks ended, per authentication lifecycle (e.g. complete.returned). */
  readonly customers: Readonly<Record<string, number>>;
  /** Not in the JSON line: the details for the text report and --record. */
  readonly details: { readonly violations: readonly Violation[]; readonly executed: readonly ExecutedFault[]; readonly plant: PlantedBug | null };
}

async function createMerchants(databaseUrl: string, n: number, tag: string): Promise<{ ids: string[]; keys: string[]; publishableKeys: string[] }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2, application_name: 'chaos-harness' });
  try {
    const db = drizzle(pool, { schema });
    const ids: string[] = [];
    const keys: string[] = [];
    const publishableKeys: string[] = [];
    for (let i = 0; i < n; i++) {
      const { merchant, apiKey, publishableKey } = await createMerchant(db, { name: `chaos ${tag} #${i}` });
      ids.push(merchant.id);
      keys.push(apiKey);
      publishableKeys.push(publishableKey);
    }
    return { ids, keys, publishableKeys };
  } finally {
    await pool.end();
  }
}

export async function runChaos(o: ChaosOptions, shared?: Topology): Promise<ChaosReport> {
  const started = Date.now();
  const log = o.log ?? (() => undefined);
  const clientTimeoutMs = o.clientTimeoutMs ?? 1_500;
  const plan = makePlan({
    seed: o.seed, payments: o.payments, merchants: o.merchants ?? 6, accounts: o.faultAccounts ?? MAIN_ACCOUNTS, keyExpiryAccount: (a) => SHORT_KEYS_ACCOUNT_OF[a] ?? a, faultRate: o.faultRate ?? 0.25, kills: true, clientTimeoutMs,
    ...(o.kinds === undefined ? {} : { kinds: o.kinds }),
    ...(o.faultOps === undefined ? {} : { ops: o.faultOps }),
    ...(o.releaseMode === undefined ? {} : { releaseMode: o.releaseMode }),
    ...(o.shortKeysShare === undefined ? {} : { shortKeysShare: o.shortKeysShare }),
    vaultedShare: o.vaultedShare ?? VAULTED_SHARE,
    vaultProcess: (shared?.vault ?? null) !== null || o.vaultProcess === true,
    ...(o.keep === undefined ? {} : { keep: o.keep }),
  });
  const faults = o.replay ?? plan.faults;
  const progress = { paymentsDone: 0, payments: o.payments, operations: 0, faults: 0 };
  o.onProgress?.({ phase: 'starting', ...progress });

  let second: SecondProcess | undefined;
  let watch: CustomerDeadlineWatch | undefined;
  const topology = shared ?? (await Topology.boot({ databaseUrl: o.databaseUrl, processes: o.processes, runDir: o.runDir, clientTimeoutMs, apiWaitMs: 2_000, vaultProcess: o.vaultProcess === true }));
  try {
    // Accounts keep keys for seconds only when the run has key_expiry faults to reach past them.
    await topology.startGateway(o.plant ?? null, faults.some((f) => f.kind === 'key_expiry') ? KEY_EXPIRY_RETENTION_S : null);
    // A shared topology's sandboxes may still queue faults an earlier run scheduled and never met.
    for (const account of ACCOUNTS) await controlFetch(`${topology.controlUrl}/_sandbox/${account}/faults`, { method: 'DELETE' });
    if (o.webhookDelayMs !== undefined) {
      for (const account of ACCOUNTS) {
        await controlFetch(`${topology.controlUrl}/_sandbox/${account}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ delay_ms: o.webhookDelayMs }) });
      }
    }
    const merchants = await createMerchants(o.databaseUrl, o.merchants ?? 6, `${o.seed}-${randomBytes(3).toString('hex')}`);
    second = new SecondProcess(topology, o.databaseUrl, log);
    const injector = new FaultInjector(topology, faults, o.databaseUrl, started, log, second);
    const driver = new Driver({
      baseUrl: topology.url, apiKeys: merchants.keys, publishableKeys: merchants.publishableKeys, seed: o.seed, concurrency: o.concurrency ?? 24,
      // A careful client retries a 409 "in progress" with the same key until it gets an answer. The
      // key is held for the API wait + 20 s by the process that took it, and a kill_api during a
      // takeover holds it for another lease: with kills seconds apart (seen in the quick pass after
      // issue 25) three leases outlast 60 s without anything being wrong. 150 s still finds a key
      // that is never released.
      settleTimeoutMs: o.settleTimeoutMs ?? 30_000, requestTimeoutMs: 150_000, customerCa: topology.sandboxCa(),
      onOperation: (op) => {
        progress.operations = op;
        injector.onOperation(op);
        progress.faults = injector.executed.length;
      },
      onPaymentDone: () => {
        progress.paymentsDone += 1;
        o.onProgress?.({ phase: 'driving', ...progress, faults: injector.executed.length });
      },
    });
    watch = new CustomerDeadlineWatch(o.databaseUrl, merchants.ids);
    await watch.start();
    const driven = await driver.run(plan.payments);
    injector.fireRemaining();
    o.onProgress?.({ phase: 'settling', ...progress, faults: injector.executed.length });
    await injector.settle();
    const left = await waitForQuiescence(o.databaseUrl, merchants.ids, o.quiesceMs ?? 120_000, (f) =>
      o.onProgress?.({ phase: 'settling', ...progress, faults: injector.executed.length, inFlight: total(f) }),
    );
    const overdue = await watch.stop();
    o.onProgress?.({ phase: 'checking', ...progress, faults: injector.executed.length });
    const down = await topology.down();
    if (down.length > 0) log(`not ready at the checks: ${down.join(', ')}`);
    const data = await loadRunData(o.databaseUrl, merchants.ids, topology.controlUrl, ACCOUNTS, new Date(started), { redisUrl: topology.redis.url, prefix: GATEWAY_QUEUE_PREFIX });
    const violations = [...checkInvariants(data, driven, overdue), ...(await cardDataViolations(o.databaseUrl, topology.redis.url, GATEWAY_QUEUE_PREFIX, topology.opts.runDir))];

    const byKind = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
    for (const [k, n] of Object.entries(injector.countsByKind())) byKind[k as FaultKind] = n;
    const byInvariant = Object.fromEntries(INVARIANTS.map((k) => [k, 0])) as Record<Invariant, number>;
    for (const v of violations) byInvariant[v.invariant] += 1;
    return {
      seed: o.seed,
      payments: o.payments,
      operations: driven.operations,
      faults: injector.executed.length,
      faults_by_kind: byKind,
      kills: injector.kills,
      vaulted_payments: plan.payments.filter((p) => p.vaulted === true).length,
      violations: violations.length,
      violations_by_invariant: byInvariant,
      in_flight: left.payments + left.modifications,
      needs_review: data.payments.filter((p) => p.state === 'needs_review' || data.openDiscrepancies.has(p.id)).length,
      needs_review_by_reason: needsReviewByReason(data.payments, data.reviewReasons, data.openDiscrepancyKinds),
      start_failures: topology.startFailures(),
      processes_down: down.length,
      duration_s: Math.round((Date.now() - started) / 100) / 10,
      customers: driven.customers,
      details: { violations, executed: [...injector.executed].sort((a, b) => a.firedAtMs - b.firedAtMs), plant: o.plant ?? null },
    };
  } finally {
    await watch?.stop();
    await second?.close();
    if (shared === undefined) await topology.close();
    else await topology.endRun();
  }
}

/** A run passes with no violation, nothing in flight and every process up at the checks. */
export function passed(r: ChaosReport): boolean {
  return r.violations === 0 && r.in_flight === 0 && r.processes_down === 0;
}

/** The one JSON object of `--json` (the details stay out). */
/** The report as one JSON line; the first 50 violations' details are in it, so a --json run can be looked into afterwards. */
export function reportJson(r: ChaosReport): string {
  const { details, ...line } = r;
  return JSON.stringify({ ...line, violation_details: details.violations.slice(0, 50) });
}
