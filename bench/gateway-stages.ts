// Stages against the gateway over HTTP: lifecycle throughput (create manual-capture -> capture ->
// read, several merchants at once), the gateway's slices of the added-latency stage (at a fixed
// provider delay; bench/direct.ts is the other side), and fail-fast with every breaker open.

import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { closedLoop, openLoop, percentile, sleep } from './lib.ts';
import type { Http, HttpClient } from './lib.ts';

export interface Counters {
  readonly xactCommit: number;
  /** The next transaction id: only transactions that write get one (cluster-wide: other databases' writers count too). */
  readonly nextXid: number;
  readonly transitions: number;
}

export async function counters(db: pg.Client): Promise<Counters> {
  const r = await db.query<{ c: string; x: string; t: string }>(
    `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())::text AS c,
            pg_snapshot_xmax(pg_current_snapshot())::text AS x,
            (SELECT count(*) FROM payment_transitions)::text AS t`,
  );
  return { xactCommit: Number(r.rows[0]!.c), nextXid: Number(r.rows[0]!.x), transitions: Number(r.rows[0]!.t) };
}

export const card = { type: 'card', test_card: '4242424242424242' };

async function payOnce(http: Http, key: string, capture: boolean, onCreated?: (id: string, ms: number) => void, onCaptured?: (ms: number) => void): Promise<number | null> {
  const auth = { authorization: `Bearer ${key}` };
  const started = performance.now();
  const created = await http.json('POST', '/v1/payments', { ...auth, 'idempotency-key': randomBytes(8).toString('hex') }, {
    amount: 1000, currency: 'EUR', reference: `bench-${randomBytes(4).toString('hex')}`, capture_method: 'manual', payment_method: card,
  });
  if (created.status !== 201 || created.json['status'] !== 'authorized') throw new Error(`create answered ${created.status} ${JSON.stringify(created.json).slice(0, 200)}`);
  const id = String(created.json['id']);
  if (!capture) {
    onCreated?.(id, created.ms);
    return created.ms;
  }
  const captured = await http.json('POST', `/v1/payments/${id}/capture`, { ...auth, 'idempotency-key': randomBytes(8).toString('hex') }, {});
  if (captured.status !== 200 && captured.status !== 202) throw new Error(`capture answered ${captured.status}`);
  if (onCaptured !== undefined) {
    // The added-latency stage: authorization and capture timed apart, no read.
    onCreated?.(id, created.ms);
    onCaptured(captured.ms);
    return created.ms;
  }
  const read = await http.json('GET', `/v1/payments/${id}`, auth);
  if (read.status !== 200) throw new Error(`read answered ${read.status}`);
  return performance.now() - started;
}

export interface LifecycleResult {
  readonly paymentsPerS: number;
  readonly transitionsPerS: number;
  readonly commitsPerPayment: number;
  /** Transactions that wrote (got a transaction id) per payment; the rest of commitsPerPayment are read-only. */
  readonly writeCommitsPerPayment: number;
  readonly payments: number;
  readonly errors: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly firstError: string | null;
}

/** Called right before the measured loops start and after their tail has settled (CPU, provider requests). */
export interface StageProbe {
  start(): Promise<void>;
  end(): Promise<void>;
}

/** `merchants` merchants with `perMerchant` loops each, for `seconds`. */
export async function lifecycle(http: Http, db: pg.Client, keys: readonly string[], perMerchant: number, seconds: number, probe?: StageProbe): Promise<LifecycleResult> {
  await closedLoop(keys.length, Math.min(1, seconds / 2), (w) => payOnce(http, keys[w]!, true)); // warm-up
  // pg_stat_database is flushed by each backend at most once a second: let it settle at both ends.
  await sleep(1_100);
  const before = await counters(db);
  await probe?.start();
  const stats = await closedLoop(keys.length * perMerchant, seconds, (w) => payOnce(http, keys[w % keys.length]!, true));
  await sleep(1_100);
  await probe?.end();
  const after = await counters(db);
  const payments = stats.ok;
  return {
    paymentsPerS: payments / stats.seconds,
    transitionsPerS: (after.transitions - before.transitions) / stats.seconds,
    // Includes the bench's own two counter reads and everything the workers, relay and intake committed meanwhile.
    commitsPerPayment: payments === 0 ? 0 : (after.xactCommit - before.xactCommit - 1) / payments,
    writeCommitsPerPayment: payments === 0 ? 0 : (after.nextXid - before.nextXid) / payments,
    payments, errors: stats.errors, p50Ms: percentile(stats.latencies, 50), p99Ms: percentile(stats.latencies, 99), firstError: stats.firstError,
  };
}

/** A POST to the sandbox control API (its own process and port). */
export async function control(sandbox: HttpClient, path: string, body: unknown, method = 'POST'): Promise<Record<string, unknown>> {
  const r = await sandbox.json(method, path, {}, body);
  if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${JSON.stringify(r.json).slice(0, 200)}`);
  return r.json;
}

/** Every sandbox account's latency: each call waits `delayMs` before executing (process: after), so no webhook tells the outcome early. */
export async function providerLatency(sandbox: HttpClient, accounts: readonly string[], delayMs: number): Promise<void> {
  for (const a of accounts) {
    await control(sandbox, `/_sandbox/${a}/faults`, undefined, 'DELETE');
    await control(sandbox, `/_sandbox/${a}/faults`, { op: 'any', mode: 'latency', latency_ms: delayMs, count: 1_000_000, process: 'after' });
  }
}

export interface GatewaySlice {
  /** Authorization (POST /v1/payments) latency of each payment. */
  readonly authMs: number[];
  readonly captureMs: number[];
  /** Per payment: authorization latency minus delayMs times the provider calls its authorization made (the round-2 figure). */
  readonly minusProviderMs: number[];
  /** Provider calls an authorization made on average (one since issue 26: PaymentIntent create with confirm: true; more only after a lost answer). */
  readonly callsPerCreate: number;
  readonly requests: number;
  readonly errors: number;
  readonly firstError: string | null;
}

/**
 * Manual-capture payments through the gateway at `ratePerS` (open loop): create (timed: what the
 * shopper waits for), then capture (timed apart). The provider latency is set by the caller.
 * `minusProviderMs` is the round-2 "added latency": the create's latency minus `delayMs` times its
 * provider calls (prepare and authorize outbox rows; a Stripe create is one since issue 26, two before).
 */
export async function gatewaySlice(http: Http, db: pg.Client, keys: readonly string[], ratePerS: number, seconds: number, delayMs: number): Promise<GatewaySlice> {
  let i = 0;
  const created: { id: string; ms: number }[] = [];
  const captureMs: number[] = [];
  const stats = await openLoop(ratePerS, seconds, () => payOnce(http, keys[i++ % keys.length]!, true, (id, ms) => created.push({ id, ms }), (ms) => captureMs.push(ms)));
  const calls = await db.query<{ id: string; n: number }>(
    `SELECT payment_id AS id, count(*)::int AS n FROM outbox
      WHERE kind = 'provider_call' AND payload->>'op' IN ('prepare', 'authorize') AND payment_id = ANY($1::text[]) GROUP BY payment_id`,
    [created.map((c) => c.id)],
  );
  const callsOf = new Map(calls.rows.map((r) => [r.id, r.n]));
  const minusProviderMs = created.map((c) => c.ms - delayMs * (callsOf.get(c.id) ?? 1));
  const callsPerCreate = created.length === 0 ? 0 : created.reduce((t, c) => t + (callsOf.get(c.id) ?? 1), 0) / created.length;
  return { authMs: created.map((c) => c.ms), captureMs, minusProviderMs, callsPerCreate, requests: stats.ok, errors: stats.errors, firstError: stats.firstError };
}

/**
 * Waits (at most `maxMs`) until no outbox work is due: the webhooks, merchant events and calls an
 * earlier stage left behind would otherwise be measured as this stage's latency. Returns the wait.
 */
export async function settle(db: pg.Client, maxMs = 60_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    const r = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE status = 'pending' AND run_at <= now()`);
    if (r.rows[0]!.n === 0 || performance.now() - started > maxMs) return performance.now() - started;
    await sleep(200);
  }
}

export interface FailFastResult {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly requests: number;
  readonly statuses: Record<string, number>;
}

/** Takes every sandbox down, drives payments until every breaker of every gateway process is open, then times the API's answers. */
export async function failFast(http: Http, processes: readonly HttpClient[], sandbox: HttpClient, keys: readonly string[], seconds: number): Promise<FailFastResult> {
  const accounts = ['stripe_eu', 'adyen_eu'];
  for (const a of accounts) await control(sandbox, `/_sandbox/${a}/outage`, { seconds: 120 });
  const deadline = Date.now() + 60_000;
  let states = '';
  const allOpen = async (): Promise<boolean> => {
    const seen = await Promise.all(processes.map((p) => p.json('GET', '/_bench/breakers')));
    states = JSON.stringify(seen.map((r) => r.json));
    return seen.every((r) => accounts.every((a) => r.json[a] === 'open'));
  };
  // Payments keep going out without waiting for their answers (each may wait for retries and
  // failover): every process's workers must see enough failures within the breakers' window.
  let outstanding = 0;
  let n = 0;
  while (!(await allOpen())) {
    if (Date.now() > deadline) throw new Error(`breakers did not open within 60 s: ${states}`);
    // Large EUR amounts try Adyen first, small ones Stripe: both see failures.
    for (const key of keys) {
      for (const amount of [1000, 150_000]) {
        if (outstanding >= 64) continue;
        outstanding++;
        void http.json('POST', '/v1/payments', { authorization: `Bearer ${key}`, 'idempotency-key': randomBytes(8).toString('hex') }, {
          amount, currency: 'EUR', reference: `ff-${n++}`, capture_method: 'manual', payment_method: card,
        }).catch(() => undefined).finally(() => outstanding--);
      }
    }
    await sleep(250);
  }
  // What is still waiting must not be timed with the fail-fast answers.
  while (outstanding > 0 && Date.now() < deadline + 30_000) await sleep(50);
  const statuses: Record<string, number> = {};
  const stats = await closedLoop(4, seconds, async (w) => {
    const r = await http.json('POST', '/v1/payments', { authorization: `Bearer ${keys[w % keys.length]!}`, 'idempotency-key': randomBytes(8).toString('hex') }, {
      amount: 1000, currency: 'EUR', reference: 'ff', capture_method: 'manual', payment_method: card,
    });
    const s = `${r.status} ${typeof r.json['status'] === 'string' ? r.json['status'] : ''}`.trim();
    statuses[s] = (statuses[s] ?? 0) + 1;
    return r.ms;
  });
  return { p50Ms: percentile(stats.latencies, 50), p99Ms: percentile(stats.latencies, 99), requests: stats.ok, statuses };
}
