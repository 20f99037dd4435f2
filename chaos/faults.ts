// Fires the planned faults as the driver's operation counter passes them, and records what was
// actually executed and when (the seed fixes the plan; process timing does not).

import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { callQueueName, TIMER_QUEUE } from '../src/jobs/queues.ts';
import { databaseName, withDatabase } from '../src/store/database-url.ts';
import { INBOUND_QUEUE, MERCHANT_EVENT_QUEUE } from '../src/webhooks/webhook-jobs.ts';
import type { FaultEvent, FaultKind, ProviderOp } from './plan.ts';
import type { SecondProcess } from './second-process.ts';
import { ACCOUNTS, GATEWAY_QUEUE_PREFIX } from './topology.ts';
import type { Topology } from './topology.ts';
import { controlFetch } from './control-fetch.ts';

/** How long the harness's operator keeps retrying a dead-letter replay that fails (longer than any pg_outage_long). */
const REPLAY_PATIENCE_MS = 120_000;
/** How long after the workload ends a fault still waits for a provider call to hit it. */
const AFTER_WORKLOAD_HIT_MS = 5_000;

export interface ExecutedFault extends FaultEvent {
  /** Milliseconds since the run started. */
  readonly firedAtMs: number;
  readonly result: string;
}

interface SandboxFault {
  readonly id: number;
  readonly op: string;
  readonly mode: string;
  readonly remaining: number;
  readonly hit_keys: string[];
}

type WebhookKnob = 'duplicate' | 'reorder' | 'delay_ms';

export class FaultInjector {
  readonly executed: ExecutedFault[] = [];
  private readonly background = new Set<Promise<unknown>>();
  private readonly windows: { account: string; knob: WebhookKnob; untilOp: number }[] = [];
  private cursor = 0;
  /** When the workload ended (fireRemaining): a fault still waiting for its call to come gives up soon after. */
  private workloadEndedAt: number | null = null;
  /** Adyen accounts authorise_after_cancel switched to completing in-flight authorizations after a technical cancel. */
  private readonly inFlightAuthorised = new Set<string>();
  /** Database outages one after the other: the second would end the first (and ALTER DATABASE twice at once fails). */
  private outages: Promise<unknown> = Promise.resolve();
  kills = 0;

  constructor(
    private readonly topology: Topology,
    private readonly faults: readonly FaultEvent[],
    private readonly databaseUrl: string,
    private readonly startedAt: number,
    private readonly log: (line: string) => void,
    /** The harness's own gateway process (duplicate_execution, key_expiry). */
    private readonly second: SecondProcess,
  ) {}

  /** Called by the driver as operation `op` starts: fires every fault planned up to it. */
  onOperation(op: number): void {
    while (this.cursor < this.faults.length && this.faults[this.cursor]!.atOp <= op) {
      const f = this.faults[this.cursor++]!;
      this.track(this.fire(f).then(
        (result) => this.executed.push({ ...f, firedAtMs: Date.now() - this.startedAt, result }),
        (err: unknown) => {
          // A database error's own words are in its cause (drizzle's message is the query).
          const e = err as Error & { cause?: Error };
          const why = e.cause?.message ?? e.message.slice(0, 300);
          this.log(`fault ${f.kind} at op ${f.atOp} failed: ${why}`);
          this.executed.push({ ...f, firedAtMs: Date.now() - this.startedAt, result: `error: ${why}` });
        },
      ));
    }
    for (const w of this.windows.filter((x) => x.untilOp <= op)) {
      this.windows.splice(this.windows.indexOf(w), 1);
      if (!this.windows.some((x) => x.account === w.account && x.knob === w.knob)) this.track(this.webhooks(w.account, { [w.knob]: w.knob === 'reorder' ? false : 0 }));
    }
  }

  /** Fires what is left of the plan (a short workload may end before its last faults). */
  fireRemaining(): void {
    this.workloadEndedAt = Date.now();
    this.onOperation(Number.MAX_SAFE_INTEGER);
  }

  /** Ends every fault: waits for kills and restarts, ends outages, and puts webhooks back to normal. */
  async settle(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
    this.windows.length = 0;
    // Back to the sandbox's default for the next run on a shared topology (this run's held /payments have completed).
    for (const account of this.inFlightAuthorised) await this.control(`/_sandbox/${account}/technical-cancel`, { in_flight: 'cancelled' });
    this.inFlightAuthorised.clear();
    for (const account of await this.accounts()) {
      await this.control(`/_sandbox/${account}/outage`, { seconds: 0 });
      await this.webhooks(account, { enabled: true, duplicate: 0, reorder: false, delay_ms: 0 });
    }
    await this.topology.allUp(this.log);
  }

  countsByKind(): Record<FaultKind, number> {
    const counts = {} as Record<FaultKind, number>;
    for (const f of this.executed) counts[f.kind] = (counts[f.kind] ?? 0) + 1;
    return counts;
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.catch(() => undefined).finally(() => this.background.delete(tracked));
    this.background.add(tracked);
  }

  private async accounts(): Promise<string[]> {
    const res = await controlFetch(`${this.topology.controlUrl}/_sandbox`);
    const body = (await res.json()) as { sandboxes: { account: string }[] };
    return body.sandboxes.map((s) => s.account);
  }

  private async control(path: string, body: unknown): Promise<string> {
    const res = await controlFetch(`${this.topology.controlUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`control ${path}: ${res.status} ${text}`);
    return text;
  }

  private webhooks(account: string, settings: Record<string, unknown>): Promise<string> {
    return this.control(`/_sandbox/${account}/webhooks`, settings);
  }

  private sandboxOp(op: ProviderOp): string {
    // Neither provider has a separate create any more: Adyen's authorize makes the payment, and
    // Stripe's create confirms (issue 26), so a fault on it is an authorize fault.
    return op === 'create' ? 'authorize' : op;
  }

  private async fire(f: FaultEvent): Promise<string> {
    const account = f.account ?? '';
    switch (f.kind) {
      case 'error_503':
      case 'reset_before_processing':
      case 'accept_then_drop':
        return this.control(`/_sandbox/${account}/faults`, { op: this.sandboxOp(f.op ?? 'authorize'), mode: f.kind, count: f.count ?? 1 });
      case 'latency_before':
      case 'latency_after':
        return this.control(`/_sandbox/${account}/faults`, {
          op: this.sandboxOp(f.op ?? 'authorize'), mode: 'latency', count: f.count ?? 1, latency_ms: f.latencyMs ?? 3000,
          process: f.kind === 'latency_before' ? 'before' : 'after',
        });
      case 'release_failure':
        // Only requests whose key names a release (the gateway's …:release:<n>) meet it.
        return this.control(`/_sandbox/${account}/faults`, { op: 'release', mode: f.release === 'fail_later' ? 'release_fail_later' : 'release_refused', count: f.count ?? 1 });
      case 'release_reversed_first':
        // The next release refunds (keys naming a release): performed, reversed, the answer lost.
        return this.control(`/_sandbox/${account}/faults`, { op: 'release', mode: 'reverse_before_then_drop', count: f.count ?? 1 });
      case 'authorise_after_cancel':
        return this.authoriseAfterCancel(account, f.latencyMs ?? 21_500);
      case 'late_reversal':
        return this.control(`/_sandbox/${account}/faults`, { op: f.op ?? 'refund', mode: `reverse_${f.order ?? 'after'}`, count: f.count ?? 1 });
      case 'already_done':
        // The first request only: the resend (the SDK's own, or the gateway's) meets the refusal.
        return this.control(`/_sandbox/${account}/faults`, { op: f.op ?? 'void', mode: 'already_done', count: 1 });
      case 'outage': {
        const seconds = f.seconds ?? 1;
        const r = await this.control(`/_sandbox/${account}/outage`, { seconds });
        return r;
      }
      case 'webhook_duplicate':
      case 'webhook_reorder':
      case 'webhook_delay': {
        const knob: WebhookKnob = f.kind === 'webhook_duplicate' ? 'duplicate' : f.kind === 'webhook_reorder' ? 'reorder' : 'delay_ms';
        const value = knob === 'duplicate' ? 0.5 : knob === 'reorder' ? true : (f.latencyMs ?? 500);
        this.windows.push({ account, knob, untilOp: f.atOp + (f.windowOps ?? 20) });
        return this.webhooks(account, { [knob]: value });
      }
      case 'kill_api':
      case 'kill_worker': {
        const pool = f.kind === 'kill_api' ? this.topology.apis : this.topology.workers;
        if (pool.length === 0) return 'no process';
        const p = pool[(f.processIndex ?? 0) % pool.length]!;
        if (!p.alive) return `${p.spec.name} already down`;
        this.kills += 1;
        await p.kill();
        // Back after a short while, like a supervisor would restart it.
        await new Promise((r) => setTimeout(r, 300));
        await p.start();
        return `${p.spec.name} killed (-9) and restarted`;
      }
      case 'kill_vault': {
        const vault = this.topology.vault?.process;
        if (vault === undefined) return 'no vault process';
        if (!vault.alive) return 'vault already down';
        this.kills += 1;
        await vault.kill();
        // Back after a short while, like a supervisor would restart it.
        await new Promise((r) => setTimeout(r, 300));
        await vault.start();
        return 'vault killed (-9) and restarted';
      }
      case 'redis_restart':
        await this.topology.redis.restart();
        return 'redis-server killed (-9) and started again, empty';
      case 'duplicate_execution':
        return this.duplicateExecution(account, this.sandboxOp(f.op ?? 'authorize'), f.latencyMs ?? 1_000);
      case 'key_expiry':
        return this.keyExpiry(account, f.seconds ?? 30);
      case 'pg_outage_long': {
        const outage = this.outages.then(() => this.pgOutage(f.seconds ?? 4));
        this.outages = outage.catch(() => undefined);
        return outage;
      }
      case 'pg_terminate': {
        const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'chaos-terminator' });
        await client.connect();
        try {
          const r = await client.query<{ n: string }>(
            // Not the harness's own connections (a concurrent terminator, the checks).
            "SELECT count(pg_terminate_backend(pid))::text AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name NOT LIKE 'chaos-%'",
          );
          return `${r.rows[0]?.n ?? 0} backends terminated`;
        } finally {
          await client.end();
        }
      }
    }
  }

  /**
   * The run's database refuses every new connection and its open ones are cut (the harness's own,
   * `chaos-*`, excepted, as for pg_terminate), for `seconds` — longer than the gateway processes'
   * job retry budget — then takes connections again. Only this database: the sandboxes' database
   * on the same server stays up. Issued from a connection to `postgres`, as the refused database
   * cannot be used to let itself back in.
   */
  private async pgOutage(seconds: number): Promise<string> {
    // Begins while the workers have jobs in hand (or within 5 s): those are what must outlive it.
    const busy = await this.jobsInHand(5_000);
    const name = pg.escapeIdentifier(databaseName(this.databaseUrl));
    const admin = new pg.Client({ connectionString: withDatabase(this.databaseUrl, 'postgres'), application_name: 'chaos-outage' });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      try {
        const r = await admin.query<{ n: string }>(
          "SELECT count(pg_terminate_backend(pid))::text AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name NOT LIKE 'chaos-%'",
          [databaseName(this.databaseUrl)],
        );
        await sleep(seconds * 1000);
        return `database refused connections for ${seconds} s (${r.rows[0]?.n ?? 0} backends terminated; ${busy ? 'jobs were in hand' : 'no job was in hand'})`;
      } finally {
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      }
    } finally {
      await admin.end();
    }
  }

  /** Waits until a gateway queue (in the run's private Redis) has a job running or waiting; false after `timeoutMs`. */
  private async jobsInHand(timeoutMs: number): Promise<boolean> {
    const connection = new Redis(this.topology.redis.url, { maxRetriesPerRequest: 1 });
    connection.on('error', () => undefined);
    const queues = [...ACCOUNTS.map(callQueueName), TIMER_QUEUE, INBOUND_QUEUE, MERCHANT_EVENT_QUEUE].map((n) => new Queue(n, { connection, prefix: GATEWAY_QUEUE_PREFIX }));
    try {
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(20)) {
        const counts = await Promise.all(queues.map((q) => q.getJobCounts('active', 'waiting', 'prioritized')));
        if (counts.some((c) => (c['active'] ?? 0) + (c['waiting'] ?? 0) + (c['prioritized'] ?? 0) > 0)) return true;
      }
      return false;
    } catch {
      return false; // Redis restarting: begin anyway
    } finally {
      await Promise.all(queues.map((q) => q.close().catch(() => undefined)));
      connection.disconnect();
    }
  }

  /** The account's queued faults (fired ones too), oldest first. */
  private async faultsAt(account: string): Promise<SandboxFault[]> {
    const res = await controlFetch(`${this.topology.controlUrl}/_sandbox/${account}/faults`);
    return ((await res.json()) as { faults: SandboxFault[] }).faults;
  }

  /** Schedules a fault and waits until a request carrying an idempotency key hits it; that key, or null on timeout. */
  private async faultHit(account: string, spec: Record<string, unknown>, timeoutMs: number): Promise<string | null> {
    const { id } = JSON.parse(await this.control(`/_sandbox/${account}/faults`, spec)) as { id: number };
    const deadline = Date.now() + timeoutMs;
    // Once the workload has ended only its stragglers (resends, recoveries) can still hit: waiting
    // the full bound for them made every planted run with such a fault settle for 30 s.
    while (Date.now() < Math.min(deadline, (this.workloadEndedAt ?? Infinity) + AFTER_WORKLOAD_HIT_MS)) {
      const mine = (await this.faultsAt(account)).find((x) => x.id === id);
      const key = mine?.hit_keys.find((k) => k !== '');
      if (key !== undefined) return key;
      await sleep(20);
    }
    return null;
  }

  /**
   * The account completes an authorization in flight when a technical cancel of its reference
   * arrives; the next /payments is held (its key in flight) for `holdMs`, past the client's timeout
   * and the resends, so the gateway fences it by reference and fails over meanwhile. Resolves once
   * the held /payments has run and the gateway holds its AUTHORISATION notification, so the checks
   * after quiescence see what the gateway made of it.
   */
  private async authoriseAfterCancel(account: string, holdMs: number): Promise<string> {
    const res = await controlFetch(`${this.topology.controlUrl}/_sandbox/${account}/technical-cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ in_flight: 'authorised' }) });
    if (res.status === 404) return `${account} has no cancel by merchant reference`;
    if (res.status !== 200) throw new Error(`control technical-cancel: ${res.status} ${await res.text()}`);
    this.inFlightAuthorised.add(account);
    const key = await this.faultHit(account, { op: 'authorize', mode: 'latency', count: 1, latency_ms: holdMs, process: 'after' }, 60_000);
    if (key === null) return 'no authorization hit the hold';
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'chaos-authorise-after-cancel' });
    await client.connect();
    try {
      const heard = async (): Promise<{ attempt: string | null; event: string | null }> => {
        const r = await client.query<{ attempt: string | null; event: string | null }>(
          `SELECT a.id AS attempt,
                  (SELECT i.event->'outcome'->>'kind' FROM inbound_events i WHERE i.event->>'attemptId' = a.id AND i.event->>'kind' = 'authorization' LIMIT 1) AS event
             FROM payment_attempts a WHERE a.auth_key = $1`, [key]);
        return r.rows[0] ?? { attempt: null, event: null };
      };
      for (const deadline = Date.now() + holdMs + 30_000; Date.now() < deadline; await sleep(250)) {
        const h = await heard();
        if (h.event !== null) return `authorization of attempt ${h.attempt ?? '?'} (key ${key}) held ${holdMs} ms; the gateway heard it ${h.event}`;
      }
      return `authorization (key ${key}) held ${holdMs} ms; its notification not heard yet`;
    } finally {
      await client.end();
    }
  }

  /**
   * One outbox row executed twice at once, answered differently: the first execution's request is
   * held and then refused (429, nothing processed); meanwhile its lease runs out, as a stalled
   * process's would, and a second execution (the harness's own gateway process) claims the row and
   * gets the provider's real answer, which it applies only after the refusal has been applied.
   * The refusal then proves nothing: another execution claimed the row since.
   */
  private async duplicateExecution(account: string, op: string, holdMs: number): Promise<string> {
    const key = await this.faultHit(account, { op, mode: 'rate_limited', count: 1, latency_ms: holdMs }, 30_000);
    if (key === null) return `no ${op} hit the refusal`;
    const row = await this.second.rowWithKey(key);
    if (row === null || row.status !== 'pending') return `row of key ${key} already ${row?.status ?? 'gone'}`;
    if (!(await this.second.expireLease(row.id))) return `row ${row.id} not claimed`;
    const result = await this.second.executeTwin(row.id, holdMs + 1_000);
    return `row ${row.id} (${op}) executed twice: the first refused after ${holdMs} ms, the second ${result.kind}${'outcome' in result && result.outcome !== undefined ? ` (${result.outcome})` : ''}`;
  }

  /**
   * A refund's answer is lost after the provider refunded; the same-key resend the gateway decides
   * dead-letters, and an operator replays it once the key is past the account's retention (which the
   * sandbox then no longer keeps). The account's webhooks are held meanwhile, so the lost refund is
   * not settled by its notification before the replay runs.
   */
  private async keyExpiry(account: string, retentionS: number): Promise<string> {
    const stripe = account.startsWith('stripe');
    const holdMs = (retentionS + 12) * 1000;
    await this.webhooks(account, { delay_ms: holdMs });
    // Stripe's SDK retries a dropped connection once with the same key: both answers are lost.
    const key = await this.faultHit(account, { op: 'refund', mode: 'accept_then_drop', count: stripe ? 2 : 1 }, 60_000).finally(() => {
      if (!this.windows.some((w) => w.account === account && w.knob === 'delay_ms')) this.track(this.webhooks(account, { delay_ms: 0 }));
    });
    const firstSeen = Date.now();
    if (key === null) return 'no refund hit the lost answer';
    // The resend the core decides after the unknown answer: caught before a worker runs it.
    let dead: { id: number; connector: string } | null = null;
    for (const deadline = Date.now() + 15_000; dead === null && Date.now() < deadline; ) {
      const row = await this.second.rowWithKey(key);
      if (row !== null && row.status === 'pending' && row.attempts === 0 && row.connector !== null && (await this.second.deadLetter(row.id))) dead = { id: row.id, connector: row.connector };
      else await sleep(25);
    }
    if (dead === null) return `the resend of ${key} was not caught before it ran`;
    await sleep(Math.max(0, firstSeen + (retentionS + 2) * 1000 - Date.now()));
    const replayed = await this.replayLikeAnOperator(dead.id, dead.connector);
    return `refund row ${dead.id} dead-lettered and replayed ${Math.round((Date.now() - firstSeen) / 1000)} s after its key was first used (retention ${retentionS} s): ${replayed}`;
  }

  /**
   * `switchyard dlq replay` as a person runs it: when the command fails (the database refusing
   * connections under `pg_outage_long`, seen in a 1,000-payment run: the row stayed dead and the
   * outbox invariant, rightly, called it lost), they run it again a little later.
   */
  private async replayLikeAnOperator(id: number, connector: string): Promise<string> {
    let lastError = '';
    for (let tries = 1, deadline = Date.now() + REPLAY_PATIENCE_MS; ; tries += 1) {
      try {
        return (await this.second.replay(id, connector)) ? `replayed (try ${tries})` : 'not replayed (no longer dead)';
      } catch (err) {
        lastError = (err as Error).message;
      }
      if (Date.now() >= deadline) return `not replayed after ${tries} tries: ${lastError}`;
      await sleep(2_000);
    }
  }
}
