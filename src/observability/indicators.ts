// The indicators that reflect shared state, read at the moment they are asked for (a Prometheus
// scrape, the dashboard), so every process reports the same truth whichever served the request:
// payments in flight by state and connector with the oldest one's age, the outbox backlog and its
// dead letters, inbound webhook dead letters, outbound deliveries pending and failing by endpoint,
// open reconciliation discrepancies, and the BullMQ queues. Breaker states are per process.

import { sql } from 'drizzle-orm';
import type { Queue } from 'bullmq';
import type { Db } from '../store/db.ts';
import { unpublishableRows } from '../jobs/unpublishable-rows.ts';
import type { AccountRows } from '../jobs/unpublishable-rows.ts';
import type { FleetBreakers } from './breaker-board.ts';
import { safeErrorText } from './safe-error-text.ts';

/** The states a payment never leaves (core TERMINAL_STATES), spelled as SQL for the in-flight index. */
const TERMINAL = sql`('captured', 'voided', 'declined', 'expired', 'failed')`;
const READ_TIMEOUT_MS = 5_000;

export interface PaymentGroup {
  readonly state: string;
  readonly connector: string;
  readonly count: number;
  readonly oldestAgeSeconds: number;
}

export interface AgedCount {
  readonly count: number;
  readonly oldestAgeSeconds: number;
}

export interface QueueIndicator {
  readonly queue: string;
  readonly waiting: number;
  readonly active: number;
  readonly delayed: number;
  readonly failed: number;
  readonly oldestWaitingAgeSeconds: number;
}

export interface DeliveryIndicator {
  readonly endpointId: string;
  readonly url: string;
  readonly pending: number;
  readonly failing: number;
  readonly oldestAgeSeconds: number;
}

/** Age buckets of pending deliveries: no endpoint or merchant identifier ever becomes a label. */
export const DELIVERY_AGE_BUCKETS = ['lt_1m', '1m_10m', '10m_1h', '1h_1d', 'gt_1d'] as const;
/** How many failing deliveries an endpoint has, bucketed. */
export const ENDPOINT_FAILING_BUCKETS = ['1_9', '10_49', '50_plus'] as const;

export interface DeliveryAggregate {
  /** pending: not yet tried; failing: tried and being retried. */
  readonly state: 'pending' | 'failing';
  readonly age: (typeof DELIVERY_AGE_BUCKETS)[number];
  readonly count: number;
}

export interface Indicators {
  readonly at: string;
  /** Non-terminal payments by state and the connector of their latest attempt ('none' before one). */
  readonly payments: readonly PaymentGroup[];
  /** Outbox rows due now and not done, by kind: the backlog the workers have not caught up with. */
  readonly outboxDue: Readonly<Record<string, AgedCount>>;
  /** Pending outbox rows of connector accounts not in the config, by account: no worker can take them. */
  readonly outboxUnpublishable: Readonly<Record<string, number>>;
  /** Dead letters by kind: outbox rows past their retries, and inbound webhook events ('inbound_event'). */
  readonly deadLetters: Readonly<Record<string, AgedCount>>;
  /** Per endpoint: for the dashboard (behind an operator's token), never for /metrics. */
  readonly deliveries: readonly DeliveryIndicator[];
  /** Pending deliveries by state and age bucket, and endpoints by how many failing deliveries they have: what /metrics shows. */
  readonly deliveryTotals: { readonly byAge: readonly DeliveryAggregate[]; readonly endpointsFailing: Readonly<Record<(typeof ENDPOINT_FAILING_BUCKETS)[number], number>> };
  readonly discrepancies: Readonly<Record<string, AgedCount>>;
  /** Null when Redis did not answer. */
  readonly queues: readonly QueueIndicator[] | null;
  /** Breaker states of the process answering. */
  readonly breakers: Readonly<Record<string, string>>;
  /** How many live worker processes report each breaker state, per connector account (null: Redis did not answer). */
  readonly fleetBreakers: FleetBreakers | null;
  /** What could not be read this time (the rest is still reported). */
  readonly errors: readonly string[];
}

export interface IndicatorSources {
  readonly db: Db;
  readonly now: () => Date;
  readonly queueNames: () => readonly string[];
  readonly queue: (name: string) => Queue;
  readonly breakers: () => Readonly<Record<string, string>>;
  readonly fleetBreakers?: () => Promise<FleetBreakers>;
  /** Which outbox rows go to an account's queue, and the accounts configured (absent: none counted). */
  readonly accountRows?: AccountRows;
}

interface CountRow extends Record<string, unknown> {
  readonly key: string;
  readonly n: number;
  readonly age: number | null;
}

function byKey(rows: readonly CountRow[]): Record<string, AgedCount> {
  const out: Record<string, AgedCount> = {};
  for (const r of rows) out[r.key] = { count: Number(r.n), oldestAgeSeconds: Math.max(0, Number(r.age ?? 0)) };
  return out;
}

async function paymentGroups(db: Db, now: Date): Promise<PaymentGroup[]> {
  const r = await db.execute<{ state: string; connector: string | null; n: number; age: number }>(sql`
    SELECT p.state, a.connector, count(*)::int AS n, extract(epoch FROM ${now.toISOString()}::timestamptz - min(p.created_at))::float8 AS age
      FROM payments p
      LEFT JOIN LATERAL (SELECT connector FROM payment_attempts WHERE payment_id = p.id ORDER BY no DESC LIMIT 1) a ON true
     WHERE p.state NOT IN ${TERMINAL}
     GROUP BY p.state, a.connector
     ORDER BY age DESC`);
  return r.rows.map((x) => ({ state: x.state, connector: x.connector ?? 'none', count: Number(x.n), oldestAgeSeconds: Math.max(0, Number(x.age)) }));
}

async function outboxDue(db: Db, now: Date): Promise<Record<string, AgedCount>> {
  const at = now.toISOString();
  const r = await db.execute<CountRow>(sql`
    SELECT kind AS key, count(*)::int AS n, extract(epoch FROM ${at}::timestamptz - min(run_at))::float8 AS age
      FROM outbox WHERE status = 'pending' AND run_at <= ${at}::timestamptz GROUP BY kind`);
  return byKey(r.rows);
}

async function deadLetters(db: Db, now: Date): Promise<Record<string, AgedCount>> {
  const at = now.toISOString();
  const r = await db.execute<CountRow>(sql`
    SELECT kind AS key, count(*)::int AS n, extract(epoch FROM ${at}::timestamptz - min(created_at))::float8 AS age
      FROM outbox WHERE status = 'dead' GROUP BY kind
    UNION ALL
    SELECT 'inbound_event', count(*)::int, extract(epoch FROM ${at}::timestamptz - min(received_at))::float8
      FROM inbound_events WHERE outcome = 'failed' HAVING count(*) > 0`);
  return byKey(r.rows);
}

async function deliveries(db: Db, now: Date): Promise<DeliveryIndicator[]> {
  const r = await db.execute<{ endpoint_id: string; url: string; pending: number; failing: number; age: number }>(sql`
    SELECT d.endpoint_id, w.url, count(*)::int AS pending, (count(*) FILTER (WHERE d.attempts > 0))::int AS failing,
           extract(epoch FROM ${now.toISOString()}::timestamptz - min(d.created_at))::float8 AS age
      FROM event_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
     WHERE d.status = 'pending'
     GROUP BY d.endpoint_id, w.url ORDER BY d.endpoint_id`);
  return r.rows.map((x) => ({ endpointId: x.endpoint_id, url: x.url, pending: Number(x.pending), failing: Number(x.failing), oldestAgeSeconds: Math.max(0, Number(x.age)) }));
}

/** The aggregates of the per-endpoint rows (one read serves both). */
export function deliveryTotals(rows: readonly DeliveryIndicator[], byAge: readonly DeliveryAggregate[]): Indicators['deliveryTotals'] {
  const endpointsFailing = { '1_9': 0, '10_49': 0, '50_plus': 0 };
  for (const d of rows) {
    if (d.failing >= 50) endpointsFailing['50_plus'] += 1;
    else if (d.failing >= 10) endpointsFailing['10_49'] += 1;
    else if (d.failing >= 1) endpointsFailing['1_9'] += 1;
  }
  return { byAge, endpointsFailing };
}

async function deliveryAges(db: Db, now: Date): Promise<DeliveryAggregate[]> {
  const r = await db.execute<{ state: 'pending' | 'failing'; age: DeliveryAggregate['age']; n: number }>(sql`
    SELECT CASE WHEN attempts > 0 THEN 'failing' ELSE 'pending' END AS state,
           CASE WHEN a < 60 THEN 'lt_1m' WHEN a < 600 THEN '1m_10m' WHEN a < 3600 THEN '10m_1h' WHEN a < 86400 THEN '1h_1d' ELSE 'gt_1d' END AS age,
           count(*)::int AS n
      FROM (SELECT attempts, extract(epoch FROM ${now.toISOString()}::timestamptz - created_at) AS a FROM event_deliveries WHERE status = 'pending') d
     GROUP BY 1, 2`);
  return r.rows.map((x) => ({ state: x.state, age: x.age, count: Number(x.n) }));
}

async function discrepancies(db: Db, now: Date): Promise<Record<string, AgedCount>> {
  const r = await db.execute<CountRow>(sql`
    SELECT coalesce(category, kind) AS key, count(*)::int AS n, extract(epoch FROM ${now.toISOString()}::timestamptz - min(created_at))::float8 AS age
      FROM discrepancies WHERE status = 'open' GROUP BY 1`);
  return byKey(r.rows);
}

async function queueIndicator(q: Queue, now: Date): Promise<QueueIndicator> {
  const counts = await q.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed');
  const [oldest] = await q.getJobs(['waiting'], 0, 0, true);
  const due = oldest === undefined ? null : oldest.timestamp + (oldest.delay ?? 0);
  return {
    queue: q.name,
    waiting: (counts['waiting'] ?? 0) + (counts['prioritized'] ?? 0),
    active: counts['active'] ?? 0,
    delayed: counts['delayed'] ?? 0,
    failed: counts['failed'] ?? 0,
    oldestWaitingAgeSeconds: due === null ? 0 : Math.max(0, (now.getTime() - due) / 1000),
  };
}

/** A source that fails or does not answer in time is reported as an error; the rest still is (a scrape never hangs on one). */
async function settle<T>(what: string, errors: string[], read: () => Promise<T>, fallback: T, timeoutMs = READ_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([read(), late]);
  } catch (err) {
    errors.push(`${what}: ${safeErrorText(err)}`);
    return fallback;
  } finally {
    clearTimeout(timer);
  }
}

export async function readIndicators(s: IndicatorSources): Promise<Indicators> {
  const now = s.now();
  const errors: string[] = [];
  const [payments, due, dead, dels, ages, disc, queues, fleetBreakers, unpublishable] = await Promise.all([
    settle('payments', errors, () => paymentGroups(s.db, now), []),
    settle('outbox', errors, () => outboxDue(s.db, now), {}),
    settle('dead letters', errors, () => deadLetters(s.db, now), {}),
    settle('deliveries', errors, () => deliveries(s.db, now), []),
    settle('delivery ages', errors, () => deliveryAges(s.db, now), []),
    settle('discrepancies', errors, () => discrepancies(s.db, now), {}),
    settle('queues', errors, () => Promise.all(s.queueNames().map((n) => queueIndicator(s.queue(n), now))), null),
    s.fleetBreakers === undefined ? Promise.resolve({}) : settle('breakers (fleet)', errors, s.fleetBreakers, null),
    s.accountRows === undefined ? Promise.resolve({}) : settle('unpublishable outbox rows', errors, () => unpublishableRows(s.db, s.accountRows!), {}),
  ]);
  return { at: now.toISOString(), payments, outboxDue: due, outboxUnpublishable: unpublishable, deadLetters: dead, deliveries: dels, deliveryTotals: deliveryTotals(dels, ages), discrepancies: disc, queues, breakers: s.breakers(), fleetBreakers, errors };
}
