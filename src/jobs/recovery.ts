// The recovery sweeper: payments still being authorized long after their last change, with no
// outbox work left to move them, are nudged oldest first through the same transition() as
// everything else. A per-connector cap per sweep keeps a restart after an incident from
// flooding a provider.

import { sql } from 'drizzle-orm';
import type { Db } from '../store/db.ts';
import { transition } from '../store/transition.ts';
import type { StepEnvFactory } from './step-env.ts';

export interface RecoveryOptions {
  /** A payment untouched this long with nothing pending is stuck. */
  readonly staleMs: number;
  readonly perConnectorPerSweep: number;
  readonly now: () => Date;
}

export interface RecoveryDeps {
  readonly db: Db;
  readonly envs: StepEnvFactory;
  readonly kick: () => void;
}

export interface StuckPayment {
  readonly id: string;
  readonly snapshot: string;
  readonly attemptId: string;
  readonly connector: string;
}

export async function findStuckPayments(db: Db, opts: RecoveryOptions, limit: number): Promise<StuckPayment[]> {
  const stale = new Date(opts.now().getTime() - opts.staleMs);
  const res = await db.execute<{ id: string; routing_snapshot: string; attempt_id: string; connector: string }>(sql`
    SELECT p.id, p.routing_snapshot, a.id AS attempt_id, a.connector
      FROM payments p
      JOIN LATERAL (SELECT id, connector FROM payment_attempts WHERE payment_id = p.id ORDER BY no DESC LIMIT 1) a ON true
     WHERE p.state IN ('authorizing', 'auth_unknown', 'requires_action')
       AND p.updated_at < ${stale}
       AND NOT EXISTS (
         SELECT 1 FROM outbox o
          WHERE o.payment_id = p.id AND o.status = 'pending'
            AND (o.kind = 'provider_call' OR (o.kind = 'timer' AND o.payload->>'timer' <> 'max_lifetime')))
     ORDER BY p.created_at
     LIMIT ${limit}`);
  return res.rows.map((r) => ({ id: r.id, snapshot: r.routing_snapshot, attemptId: r.attempt_id, connector: r.connector }));
}

/** One sweep; returns how many payments were nudged. */
export async function sweepStuckPayments(deps: RecoveryDeps, opts: RecoveryOptions): Promise<number> {
  const stuck = await findStuckPayments(deps.db, opts, opts.perConnectorPerSweep * 20);
  const perConnector = new Map<string, number>();
  let nudged = 0;
  for (const p of stuck) {
    const n = perConnector.get(p.connector) ?? 0;
    if (n >= opts.perConnectorPerSweep) continue;
    perConnector.set(p.connector, n + 1);
    const env = await deps.envs.forSnapshot(deps.db, p.snapshot);
    const r = await transition(deps.db, p.id, { type: 'timer_fired', timer: 'query', attemptId: p.attemptId }, 'poll', env, { now: opts.now, onCommitted: () => deps.kick() });
    if (r.kind === 'applied') nudged++;
  }
  return nudged;
}

export class RecoverySweeper {
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(
    private readonly deps: RecoveryDeps,
    private readonly opts: RecoveryOptions & { readonly intervalMs: number; readonly log: (line: string) => void },
  ) {}

  start(): void {
    const tick = (): void => {
      this.timer = setTimeout(() => {
        if (this.running) return tick();
        this.running = true;
        sweepStuckPayments(this.deps, this.opts)
          .then((n) => {
            if (n > 0) this.opts.log(`recovery: nudged ${n} stuck payment(s)`);
          })
          .catch((err: unknown) => this.opts.log(`recovery: sweep failed: ${(err as Error).message}`))
          .finally(() => {
            this.running = false;
            if (this.timer !== null) tick();
          });
      }, this.opts.intervalMs);
    };
    tick();
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
