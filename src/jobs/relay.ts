// The outbox relay: moves due outbox rows from Postgres to BullMQ. Kicked after each commit; a
// sweep on an interval is the safety net (a kick lost in a crash, a Redis flush, a row whose
// job vanished, a job that failed). Rows are read with FOR UPDATE SKIP LOCKED so several relays
// share the work.
//
// Rows of a connector account not in the config (unpublishable-rows.ts) are left out of the sweep's
// batches, which page on (run_at, id): nothing the relay cannot publish ever stops it from reaching
// the rows behind. Past the orphan grace they are dead-lettered (account_not_configured).
//
// A row published long ago and still pending has its job looked at before it is published again:
// BullMQ ignores a job added under an id it already holds, so a failed job (kept under the row's
// id) would otherwise hold the row for ever. A failed job is re-run or dead-lettered as
// failedJobFate() decides (job-failure.ts); a job that is waiting, delayed or running is left alone.

import type { JobsOptions, Queue } from 'bullmq';
import type pg from 'pg';
import { failedJobFate, maxExecutionsFor } from './job-failure.ts';
import { OUTBOX_JOB_OPTIONS, outboxJobId } from './queues.ts';
import type { OutboxJobData, QueueSet } from './queues.ts';
import { ACCOUNT_NOT_CONFIGURED, DEFAULT_ORPHAN_GRACE_MS } from './unpublishable-rows.ts';
import type { AccountRows } from './unpublishable-rows.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

export interface RelayRow {
  readonly id: number;
  readonly kind: string;
  readonly connector: string | null;
  readonly runAt: Date;
}

export interface RelayOptions {
  /** Rows due within this horizon are published as delayed jobs; later ones wait in Postgres. */
  readonly horizonMs?: number;
  /** A row published this long ago and still pending is published again (its job may be gone). */
  readonly republishAfterMs?: number;
  readonly batchSize?: number;
  readonly sweepIntervalMs?: number;
  readonly now?: () => Date;
  readonly log?: (line: string) => void;
  /** BullMQ options for published jobs (infrastructure retries). */
  readonly jobOptions?: JobsOptions;
  /** Executions of a row past which a job failed on infrastructure dead-letters it (default maxExecutionsFor(attempts)). */
  readonly maxExecutions?: number;
  /** Marks a row dead (default: the outbox row only; the runtime also takes an inbound event's event to the dead letter). */
  readonly deadLetter?: (row: { readonly id: number; readonly kind: string }, reason: string) => Promise<void>;
  readonly seams?: RelaySeams;
  /** Rows that go to their account's queue, and the accounts configured: the others are never selected. */
  readonly accountRows?: AccountRows;
  /**
   * How long an account must have been absent from the config before its rows are dead-lettered.
   * This process knows only its own config, which it read at start: a restart starts the grace again.
   */
  readonly orphanGraceMs?: number;
}

/** Test seams (the chaos harness plants a broken relay through them). */
export interface RelaySeams {
  /** How the relay reads the state of a row's job (default: BullMQ's getJobState). */
  readonly jobState?: (queue: Queue<OutboxJobData>, jobId: string) => Promise<string>;
}

interface SweptRow {
  readonly id: string;
  readonly kind: string;
  readonly connector: string | null;
  readonly run_at: Date;
  readonly published_at: Date | null;
  readonly attempts: number;
}

/** What the sweep does with a row published before: publish it (again), leave its live job, or decide its failed job. */
interface Checked {
  readonly publish: SweptRow[];
  /** Rows whose job is live, or whose failed job was put back to wait: stamped, not published. */
  readonly stamp: number[];
  readonly dead: { readonly id: number; readonly kind: string; readonly reason: string }[];
}

const LIVE_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children', 'paused']);

export class OutboxRelay {
  private running: Promise<number> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly direct = new Set<number>();
  private directRunning: Promise<void> | null = null;
  private readonly horizonMs: number;
  private readonly republishAfterMs: number;
  private readonly batchSize: number;
  private readonly sweepIntervalMs: number;
  private readonly now: () => Date;
  private readonly log: (line: string) => void;
  private readonly jobOptions: JobsOptions;
  private readonly maxExecutions: number;
  private readonly deadLetter: (row: { readonly id: number; readonly kind: string }, reason: string) => Promise<void>;
  private readonly seams: RelaySeams;
  private readonly accountRows: AccountRows;
  private readonly orphanGraceMs: number;
  /** When this process's config (without the absent accounts) began to apply. */
  private readonly configSince: Date;

  constructor(
    private readonly pool: pg.Pool,
    private readonly queues: QueueSet,
    /** The queue for a row, or null when no consumer exists for its kind yet. */
    private readonly queueFor: (row: RelayRow) => string | null,
    private readonly kinds: readonly string[],
    opts: RelayOptions = {},
  ) {
    this.horizonMs = opts.horizonMs ?? 60_000;
    this.republishAfterMs = opts.republishAfterMs ?? 30_000;
    this.batchSize = opts.batchSize ?? 500;
    this.sweepIntervalMs = opts.sweepIntervalMs ?? 2_000;
    this.now = opts.now ?? (() => new Date());
    this.log = opts.log ?? ((l) => console.error(l));
    this.jobOptions = opts.jobOptions ?? OUTBOX_JOB_OPTIONS;
    this.maxExecutions = opts.maxExecutions ?? maxExecutionsFor(this.jobOptions.attempts ?? 1);
    this.deadLetter = opts.deadLetter ?? (async (row, reason) => {
      await this.pool.query("UPDATE outbox SET status = 'dead', claimed_until = NULL, last_error = $2 WHERE id = $1 AND status = 'pending'", [row.id, reason.slice(0, 500)]);
    });
    this.seams = opts.seams ?? {};
    this.accountRows = opts.accountRows ?? { kinds: [], configured: [] };
    this.orphanGraceMs = opts.orphanGraceMs ?? DEFAULT_ORPHAN_GRACE_MS;
    this.configSince = this.now();
  }

  /**
   * After a commit. With the new rows' ids, publishes exactly those (batched with other commits
   * that arrive while a publish runs: one SELECT by id, one addBulk per queue, one UPDATE); with
   * none, runs a pass over everything due. Either way the sweep covers what this misses (a crash
   * between COMMIT and the publish, Redis down).
   */
  kick(outboxIds?: readonly number[]): void {
    if (this.stopped) return;
    if (outboxIds !== undefined && outboxIds.length > 0) {
      for (const id of outboxIds) this.direct.add(id);
      if (this.directRunning === null) this.directRunning = this.drainDirect();
      return;
    }
    if (this.running !== null) {
      this.again = true;
      return;
    }
    void this.publishDue().catch((err: unknown) => this.log(`relay: publish failed (the sweep will retry): ${safeErrorText(err)}`));
  }

  /** Settles when the direct publishes queued so far are done (tests). */
  async idle(): Promise<void> {
    while (this.directRunning !== null) await this.directRunning;
  }

  private async drainDirect(): Promise<void> {
    try {
      // Let the commits finishing in this turn of the event loop join the batch.
      await new Promise<void>((r) => setImmediate(r));
      while (this.direct.size > 0 && !this.stopped) {
        const ids = [...this.direct].slice(0, this.batchSize);
        for (const id of ids) this.direct.delete(id);
        await this.publishIds(ids).catch((err: unknown) => this.log(`relay: direct publish failed (the sweep will retry): ${safeErrorText(err)}`));
      }
    } finally {
      this.directRunning = null;
    }
  }

  /**
   * Stamps the rows first and publishes what the stamp returned: one statement before the jobs
   * instead of a SELECT before and an UPDATE after. A publish that fails takes its stamp back, so
   * the next sweep publishes the rows; a process killed between the two leaves rows stamped without
   * a job, which the sweep publishes again once `republishAfterMs` has passed (late, not lost).
   */
  private async publishIds(ids: readonly number[]): Promise<void> {
    const now = this.now();
    const { rows } = await this.pool.query<{ id: string; kind: string; connector: string | null; run_at: Date }>(
      `UPDATE outbox SET published_at = $4
        WHERE id = ANY($1::bigint[]) AND status = 'pending' AND kind = ANY($2::text[]) AND run_at <= $3 AND published_at IS NULL
        RETURNING id, kind, connector, run_at`,
      [ids, this.kinds, new Date(now.getTime() + this.horizonMs), now],
    );
    if (rows.length === 0) return;
    try {
      const published = await this.addJobs(rows, now);
      const unpublished = rows.map((r) => Number(r.id)).filter((id) => !published.includes(id));
      if (unpublished.length > 0) await this.unstamp(unpublished, now);
    } catch (err) {
      await this.unstamp(rows.map((r) => Number(r.id)), now).catch(() => undefined);
      throw err;
    }
  }

  private async unstamp(ids: readonly number[], stamp: Date): Promise<void> {
    await this.pool.query('UPDATE outbox SET published_at = NULL WHERE id = ANY($1::bigint[]) AND published_at = $2', [ids, stamp]);
  }

  /** Adds one job per row (its delay until run_at) to the row's queue; returns the ids published. */
  private async addJobs(rows: readonly { id: string; kind: string; connector: string | null; run_at: Date }[], now: Date): Promise<number[]> {
    const byQueue = new Map<string, { name: string; data: { outboxId: number }; opts: JobsOptions }[]>();
    const published: number[] = [];
    for (const r of rows) {
      const row: RelayRow = { id: Number(r.id), kind: r.kind, connector: r.connector, runAt: r.run_at };
      const queue = this.queueFor(row);
      if (queue === null) continue;
      const delay = Math.max(0, row.runAt.getTime() - now.getTime());
      const jobs = byQueue.get(queue) ?? [];
      jobs.push({ name: row.kind, data: { outboxId: row.id }, opts: { ...this.jobOptions, jobId: outboxJobId(row.id), delay } });
      byQueue.set(queue, jobs);
      published.push(row.id);
    }
    await Promise.all([...byQueue].map(([queue, jobs]) => this.queues.get(queue).addBulk(jobs)));
    return published;
  }

  async publishDue(): Promise<number> {
    if (this.running !== null) {
      this.again = true;
      return this.running;
    }
    this.running = this.drain();
    try {
      return await this.running;
    } finally {
      this.running = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.kick();
      }
    }
  }

  private async drain(): Promise<number> {
    let total = await this.deadLetterOrphans();
    let after: { runAt: Date; id: string } | null = null;
    for (;;) {
      const { seen, published, last } = await this.publishBatch(after);
      total += published;
      // Paging on: a full batch of rows it could not publish does not stop the sweep short of the rows behind it.
      if (seen < this.batchSize || last === null) return total;
      after = last;
    }
  }

  /** Rows of accounts absent from the config past the grace: dead letters (replayable once the account is back). */
  private async deadLetterOrphans(): Promise<number> {
    const now = this.now();
    if (this.accountRows.kinds.length === 0 || now.getTime() - this.configSince.getTime() < this.orphanGraceMs) return 0;
    const minutes = Math.round(this.orphanGraceMs / 60_000);
    const { rows } = await this.pool.query<{ id: string; connector: string | null }>(
      `UPDATE outbox SET status = 'dead', claimed_until = NULL,
              last_error = $4 || ': connector account ' || coalesce(connector, '(none)') || ' is not in the config (absent for more than ' || $5 || ' min); replay it once the account is back'
        WHERE status = 'pending' AND kind = ANY($1::text[]) AND coalesce(connector, '') <> ALL($2::text[]) AND run_at <= $3
          AND (claimed_until IS NULL OR claimed_until < $3)
        RETURNING id, connector`,
      [this.accountRows.kinds, this.accountRows.configured, now, ACCOUNT_NOT_CONFIGURED, String(minutes)],
    );
    if (rows.length > 0) this.log(`relay: ${rows.length} outbox row(s) of connector accounts not in the config dead-lettered (${ACCOUNT_NOT_CONFIGURED}): ${[...new Set(rows.map((r) => r.connector))].join(', ')}`);
    return rows.length;
  }

  private async publishBatch(after: { runAt: Date; id: string } | null): Promise<{ seen: number; published: number; last: { runAt: Date; id: string } | null }> {
    const now = this.now();
    const client = await this.pool.connect();
    let dead: Checked['dead'] = [];
    let result: { seen: number; published: number; last: { runAt: Date; id: string } | null };
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<SweptRow>(
        `SELECT id, kind, connector, run_at, published_at, attempts FROM outbox
          WHERE status = 'pending' AND kind = ANY($1::text[]) AND run_at <= $2
            AND (published_at IS NULL OR published_at < $3)
            AND (NOT (kind = ANY($5::text[])) OR connector = ANY($6::text[]))
            AND ($7::timestamptz IS NULL OR (run_at, id) > ($7::timestamptz, $8::bigint))
          ORDER BY run_at, id LIMIT $4 FOR UPDATE SKIP LOCKED`,
        [
          this.kinds, new Date(now.getTime() + this.horizonMs), new Date(now.getTime() - this.republishAfterMs), this.batchSize,
          this.accountRows.kinds, this.accountRows.configured, after?.runAt ?? null, after?.id ?? '0',
        ],
      );
      const checked = await this.checkPublished(rows.filter((r) => r.published_at !== null));
      dead = checked.dead;
      const published = await this.addJobs([...rows.filter((r) => r.published_at === null), ...checked.publish], now);
      const stamped = [...published, ...checked.stamp];
      if (stamped.length > 0) await client.query('UPDATE outbox SET published_at = $1 WHERE id = ANY($2::bigint[])', [now, stamped]);
      await client.query('COMMIT');
      const tail = rows[rows.length - 1];
      result = { seen: rows.length, published: stamped.length + dead.length, last: tail === undefined ? null : { runAt: tail.run_at, id: tail.id } };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    // After the commit, one by one: a write lost here leaves the failed job where the next sweep finds it.
    for (const d of dead) {
      this.log(`relay: outbox row ${d.id} (${d.kind}) dead-lettered: ${d.reason}`);
      await this.deadLetter(d, d.reason).catch((err: unknown) => this.log(`relay: dead letter of row ${d.id} not written (the next sweep decides again): ${safeErrorText(err)}`));
    }
    return result;
  }

  /**
   * Rows published before and still pending: their jobs, looked at. None (lost with a Redis flush,
   * or finished without finishing the row): publish again. Failed: failedJobFate() decides — put
   * back to wait with a fresh budget under its id, or dead-lettered. Live: left alone.
   */
  private async checkPublished(rows: readonly SweptRow[]): Promise<Checked> {
    const out: Checked = { publish: [], stamp: [], dead: [] };
    const jobState = this.seams.jobState ?? ((q: Queue<OutboxJobData>, id: string) => q.getJobState(id));
    await Promise.all(rows.map(async (r) => {
      const name = this.queueFor({ id: Number(r.id), kind: r.kind, connector: r.connector, runAt: r.run_at });
      if (name === null) return;
      const queue = this.queues.get(name);
      const jobId = outboxJobId(Number(r.id));
      const state = await jobState(queue, jobId);
      if (LIVE_STATES.has(state)) {
        out.stamp.push(Number(r.id));
        return;
      }
      if (state === 'failed') {
        const job = await queue.getJob(jobId);
        const fate = failedJobFate(job?.failedReason, Number(r.attempts), this.maxExecutions);
        if (fate.kind === 'dead') {
          out.dead.push({ id: Number(r.id), kind: r.kind, reason: fate.reason });
          return;
        }
        if (job !== undefined) {
          // Moved back to wait only if it is still failed (a concurrent retry or replay wins; the next sweep looks again).
          const retried = await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true }).then(() => true, () => false);
          if (retried) out.stamp.push(Number(r.id));
          return;
        }
      }
      // A finished job still under the row's id would swallow the new one.
      if (state === 'completed') await queue.remove(jobId);
      out.publish.push(r);
    }));
    return out;
  }

  start(): void {
    this.stopped = false;
    const tick = (): void => {
      this.timer = setTimeout(() => {
        this.publishDue()
          .catch((err: unknown) => this.log(`relay: sweep failed: ${safeErrorText(err)}`))
          .finally(() => {
            if (!this.stopped) tick();
          });
      }, this.sweepIntervalMs);
    };
    tick();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.running !== null) await this.running.catch(() => undefined);
    if (this.directRunning !== null) await this.directRunning.catch(() => undefined);
  }
}
