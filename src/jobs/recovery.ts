// The recovery sweeper: work in flight long past its state's normal lifetime, with no outbox work
// left to move it, is nudged through the same transition() as everything else. It covers every
// kind by state (recovery-cadences.ts): payments being authorized, captures, refunds, voids and
// releases; oldest first, and at most `perConnectorPerSweep` per connector account per sweep, so a
// restart after an incident does not flood a provider. A nudge is an `unknown{stalled}` answer (or,
// for an authorization, a query timer): silence is resolved like any unknown — look it up, resend
// with the same key inside retention (the worker checks retention again when it sends), fence or park.
// A payment parked for review is not stalled but waiting for a person: it is asked about again
// (`parked_recheck`, core/step-parked.ts) on the same growing interval, so a provider that answers
// later un-parks it without anyone's time (issue 41 §6).

import { sql } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { PaymentInput } from '../core/inputs.ts';
import type { Db } from '../store/db.ts';
import { transition } from '../store/transition.ts';
import { sweeperCadences } from './recovery-cadences.ts';
import type { Cadence, SweptKind } from './recovery-cadences.ts';
import type { StepEnvFactory } from './step-env.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

export interface RecoveryOptions {
  /** A payment being authorized untouched this long with nothing pending is stuck (the base of its cadence). */
  readonly staleMs: number;
  readonly perConnectorPerSweep: number;
  readonly now: () => Date;
  /** Overrides the cadences (tests). */
  readonly cadences?: readonly Cadence[];
}

export interface RecoveryDeps {
  readonly db: Db;
  readonly envs: StepEnvFactory;
  readonly kick: () => void;
}

export interface StuckItem {
  readonly kind: SweptKind;
  readonly id: string;
  readonly snapshot: string;
  readonly attemptId: string;
  readonly connector: string;
  /** The item's own id (capture, refund) when it has one. */
  readonly itemId: string | null;
  readonly createdAt: Date;
}

/** Back-compatible name: a stuck item of any kind. */
export type StuckPayment = StuckItem;

// The deadline and the hold's expiry are far-off timers that move nothing in flight now.
const NOTHING_PENDING = sql`NOT EXISTS (
  SELECT 1 FROM outbox o
   WHERE o.payment_id = p.id AND o.status = 'pending'
     AND (o.kind = 'provider_call' OR (o.kind = 'timer' AND o.payload->>'timer' NOT IN ('max_lifetime', 'hold_expiry'))))`;

/** Due: untouched (the payment's last change) for a quarter of the item's age, within [base, cap]. */
function due(c: Cadence, created: SQL, now: Date): SQL {
  return sql`p.updated_at < ${now}::timestamptz - make_interval(secs => LEAST(${c.capMs / 1000}::float8, GREATEST(${c.baseMs / 1000}::float8, extract(epoch FROM (${now}::timestamptz - ${created})) / 4)))`;
}

const LATEST_ATTEMPT = sql`JOIN LATERAL (SELECT id, connector FROM payment_attempts WHERE payment_id = p.id ORDER BY no DESC LIMIT 1) a ON true`;

function query(c: Cadence, now: Date, limit: number): SQL {
  const states = sql.join(c.states.map((s) => sql`${s}`), sql`, `);
  switch (c.kind) {
    case 'authorization':
    case 'void':
    case 'parked':
      return sql`SELECT p.id, p.routing_snapshot, a.id AS attempt_id, a.connector, NULL::text AS item_id, p.created_at FROM payments p ${LATEST_ATTEMPT}
        WHERE p.state IN (${states}) AND ${due(c, sql`p.created_at`, now)} AND ${NOTHING_PENDING} ORDER BY p.created_at LIMIT ${limit}`;
    case 'release':
      return sql`SELECT p.id, p.routing_snapshot, a.id AS attempt_id, a.connector, NULL::text AS item_id, a.created_at FROM payment_attempts a JOIN payments p ON p.id = a.payment_id
        WHERE a.status IN (${states}) AND ${due(c, sql`a.created_at`, now)} AND ${NOTHING_PENDING} ORDER BY a.created_at LIMIT ${limit}`;
    case 'capture':
    case 'refund': {
      const table = c.kind === 'capture' ? sql`captures` : sql`refunds`;
      return sql`SELECT p.id, p.routing_snapshot, a.id AS attempt_id, a.connector, x.id AS item_id, x.created_at FROM ${table} x JOIN payments p ON p.id = x.payment_id
          JOIN LATERAL (SELECT id, connector FROM payment_attempts WHERE payment_id = p.id AND status IN ('authorized', 'releasing', 'released') ORDER BY no DESC LIMIT 1) a ON true
        WHERE x.status IN (${states}) AND ${due(c, sql`x.created_at`, now)} AND ${NOTHING_PENDING} ORDER BY x.created_at LIMIT ${limit}`;
    }
  }
}

/** Every kind's due items, oldest first across kinds. */
export async function findStuckPayments(db: Db, opts: RecoveryOptions, limit: number): Promise<StuckItem[]> {
  const now = opts.now();
  const found: StuckItem[] = [];
  for (const c of opts.cadences ?? sweeperCadences(opts.staleMs)) {
    const res = await db.execute<{ id: string; routing_snapshot: string; attempt_id: string; connector: string; item_id: string | null; created_at: Date }>(query(c, now, limit));
    for (const r of res.rows) {
      found.push({ kind: c.kind, id: r.id, snapshot: r.routing_snapshot, attemptId: r.attempt_id, connector: r.connector, itemId: r.item_id, createdAt: new Date(r.created_at) });
    }
  }
  return found.sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime());
}

const STALLED = { kind: 'unknown', reason: 'stalled', detail: 'recovery: no answer and nothing pending past the state\'s normal lifetime' } as const;

function nudgeFor(item: StuckItem): PaymentInput {
  switch (item.kind) {
    case 'authorization':
      return { type: 'timer_fired', timer: 'query', attemptId: item.attemptId };
    case 'capture':
      return { type: 'call_result', ref: { op: 'capture', captureId: item.itemId ?? '' }, outcome: STALLED };
    case 'refund':
      return { type: 'call_result', ref: { op: 'refund', refundId: item.itemId ?? '' }, outcome: STALLED };
    case 'void':
      return { type: 'call_result', ref: { op: 'void' }, outcome: STALLED };
    case 'release':
      return { type: 'call_result', ref: { op: 'release', attemptId: item.attemptId }, outcome: STALLED };
    case 'parked':
      return { type: 'timer_fired', timer: 'parked_recheck' };
  }
}

/** One sweep; returns how many items were nudged. */
export async function sweepStuckPayments(deps: RecoveryDeps, opts: RecoveryOptions): Promise<number> {
  const stuck = await findStuckPayments(deps.db, opts, opts.perConnectorPerSweep * 20);
  const perConnector = new Map<string, number>();
  let nudged = 0;
  for (const p of stuck) {
    const n = perConnector.get(p.connector) ?? 0;
    if (n >= opts.perConnectorPerSweep) continue;
    perConnector.set(p.connector, n + 1);
    const env = await deps.envs.forSnapshot(deps.db, p.snapshot);
    const r = await transition(deps.db, p.id, nudgeFor(p), 'poll', env, { now: opts.now, attemptId: p.attemptId, onCommitted: () => deps.kick() });
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
            if (n > 0) this.opts.log(`recovery: nudged ${n} stuck item(s)`);
          })
          .catch((err: unknown) => this.opts.log(`recovery: sweep failed: ${safeErrorText(err)}`))
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
