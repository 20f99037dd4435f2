// A second gateway process inside the harness, for the faults that need one outbox row in two
// places at once: the gateway's own runtime (role api: connectors, breakers, the relay, its own
// database pool and Redis queues), started on the run's config, executing rows with the worker's
// own code (processOutboxRow) as a stalled job's twin or an operator's DLQ replay would.

import { sql } from 'drizzle-orm';
import { startRuntime } from '../src/app/runtime.ts';
import type { Runtime } from '../src/app/runtime.ts';
import { replayDeadLetter } from '../src/jobs/dlq.ts';
import { processOutboxRow } from '../src/jobs/outbox-processor.ts';
import type { ProcessResult } from '../src/jobs/outbox-processor.ts';
import type { Topology } from './topology.ts';

export interface OutboxRowState {
  readonly id: number;
  readonly status: string;
  readonly connector: string | null;
  readonly claimedUntil: Date | null;
  readonly attempts: number;
}

export class SecondProcess {
  private runtime: Promise<Runtime> | null = null;

  constructor(
    private readonly topology: Topology,
    private readonly databaseUrl: string,
    private readonly log: (line: string) => void,
  ) {}

  private started(): Promise<Runtime> {
    this.runtime ??= startRuntime({
      role: 'api', databaseUrl: this.databaseUrl, redisUrl: this.topology.redis.url, configFile: this.topology.configFile,
      // Its transitions show in the database; only its warnings and errors reach the harness's log.
      // The run's vault: its own process when the topology has one, else embedded as the gateway's processes embed it.
      ...(this.topology.vault === null ? {} : { env: { ...process.env, ...this.topology.vault.env } }),
      reconcileSchedule: false, dbPoolMax: 4, log: (l) => {
        if (!/"level":"(info|debug|trace)"/.test(l)) this.log(`second process: ${l}`);
      },
    });
    return this.runtime;
  }

  /** The newest outbox row carrying this provider key. */
  async rowWithKey(key: string): Promise<OutboxRowState | null> {
    const rt = await this.started();
    const res = await rt.database.db.execute<{ id: string; status: string; connector: string | null; claimed_until: Date | null; attempts: number }>(sql`
      SELECT id, status, connector, claimed_until, attempts FROM outbox
       WHERE kind = 'provider_call' AND payload->>'providerKey' = ${key} ORDER BY id DESC LIMIT 1`);
    const r = res.rows[0];
    return r === undefined ? null : { id: Number(r.id), status: r.status, connector: r.connector, claimedUntil: r.claimed_until === null ? null : new Date(r.claimed_until), attempts: r.attempts };
  }

  /** What a stalled process suffers: its claim's lease runs out while its call is still in flight. */
  async expireLease(id: number): Promise<boolean> {
    const rt = await this.started();
    const res = await rt.database.db.execute(sql`UPDATE outbox SET claimed_until = now() - interval '1 second' WHERE id = ${id} AND status = 'pending' AND claimed_until IS NOT NULL RETURNING id`);
    return res.rows.length === 1;
  }

  /**
   * Executes the row as a second execution would (its own claim token), holding the provider's
   * answer for `holdMs` before applying it: the first execution's answer is applied in between.
   */
  async executeTwin(id: number, holdMs: number): Promise<ProcessResult> {
    const rt = await this.started();
    return processOutboxRow(
      {
        db: rt.database.db, connectors: rt.connectors, breakers: rt.breakers, envs: rt.envs, kick: (ids) => rt.relay.kick(ids), now: rt.now,
        cards: { vault: rt.vault, process: 'chaos-twin', log: (l) => this.log(`second process: ${l}`) },
        aroundCall: async (_effect, call) => {
          const answer = await call();
          await new Promise((r) => setTimeout(r, holdMs));
          return answer;
        },
      },
      id,
      'chaos-twin',
    );
  }

  /** A row whose jobs exhausted their retries, as the worker marks it; false when it was claimed or done first. */
  async deadLetter(id: number): Promise<boolean> {
    const rt = await this.started();
    const res = await rt.database.db.execute(sql`
      UPDATE outbox SET status = 'dead', claimed_until = NULL, last_error = 'chaos key_expiry: retries exhausted'
       WHERE id = ${id} AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < now()) RETURNING id`);
    return res.rows.length === 1;
  }

  /** `switchyard dlq replay`: the row goes back to pending and the relay publishes it again. */
  async replay(id: number, connector: string): Promise<boolean> {
    const rt = await this.started();
    const queue = rt.queueFor('provider_call', connector);
    if (queue === null) return false;
    const replayed = await replayDeadLetter(rt.database.db, rt.queues, queue, id);
    rt.relay.kick([id]);
    return replayed;
  }

  async close(): Promise<void> {
    if (this.runtime === null) return;
    const rt = await this.runtime.catch(() => null);
    await rt?.stop();
    this.runtime = null;
  }
}
