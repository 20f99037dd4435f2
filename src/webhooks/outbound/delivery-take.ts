// Which due deliveries a worker process sends next, decided in PostgreSQL for the whole fleet.
//
// One statement claims each chosen delivery's outbox row and writes a lease for it
// (webhook_endpoint_leases: endpoint, merchant, expiry). Takes run under a transaction-scoped
// advisory lock, so the counts they read are exact across processes: no endpoint ever has more
// than `perEndpoint` live leases, no merchant more than `perMerchant`. A delivery whose endpoint
// is at its limit is simply not chosen: its outbox row stays as it is, and nothing is written for
// it until a slot frees (issue 34: the old worker deferred it with a new outbox row every 0.25–1 s).
//
// Fair by merchant, then by endpoint: the chosen rows are ordered by how many leases their
// merchant would hold with them (fewest first), and within a merchant by how many their endpoint
// would hold — so a merchant with eight busy endpoints does not outrank one with a single idle
// one, and each endpoint is read through its own index range (a backlog elsewhere is not scanned).
//
// A lease expires unless renewed (renewLeases, while the POST runs): a worker killed mid-delivery
// frees its slot and its outbox row within one lease.

import { sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../store/db.ts';

/** Arbitrary but fixed: the advisory lock every take of the fleet runs under. */
const TAKE_LOCK_KEY = 7_420_511_034;

export interface TakenDelivery {
  readonly outboxId: number;
  /** This execution's claim token (outbox.claimed_by and the lease's holder). */
  readonly token: string;
  readonly payload: unknown;
  readonly endpointId: string;
  readonly merchantId: string;
  /** The outbox row's run_at: when the attempt was due. */
  readonly dueAt: Date;
  /** Executions of this outbox row so far, this one included (infrastructure retries). */
  readonly executions: number;
}

export interface TakeLimits {
  /** Slots free in this process. */
  readonly slots: number;
  readonly perEndpoint: number;
  readonly perMerchant: number;
  readonly leaseMs: number;
}

/** Claims up to `limits.slots` due deliveries for `holder` (a process id; each claim gets a token of its own). */
export async function takeDueDeliveries(db: Db, holder: string, now: Date, limits: TakeLimits): Promise<TakenDelivery[]> {
  if (limits.slots <= 0) return [];
  // An idle fleet polls without taking the fleet-wide lock: one index probe says nothing is due.
  const due = await db.execute<{ any: boolean }>(sql`SELECT EXISTS (SELECT 1 FROM event_deliveries WHERE status = 'pending' AND next_attempt_at <= ${now}) AS any`);
  if (due.rows[0]?.any !== true) return [];
  const until = new Date(now.getTime() + limits.leaseMs);
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${TAKE_LOCK_KEY})`);
    // Leases nobody renewed: their holder died (or lost its database) mid-delivery.
    await tx.execute(sql`DELETE FROM webhook_endpoint_leases WHERE expires_at <= ${now}`);
    const r = await tx.execute<{ id: string; token: string; payload: unknown; endpoint_id: string; merchant_id: string; run_at: string | Date; attempts: number }>(sql`
      WITH ep_busy AS (
        SELECT endpoint_id, count(*)::int AS n FROM webhook_endpoint_leases GROUP BY endpoint_id
      ), m_busy AS (
        SELECT merchant_id, count(*)::int AS n FROM webhook_endpoint_leases GROUP BY merchant_id
      ), cand AS (
        SELECT w.id AS endpoint_id, w.merchant_id, coalesce(b.n, 0) AS busy
          FROM webhook_endpoints w LEFT JOIN ep_busy b ON b.endpoint_id = w.id LEFT JOIN m_busy mb ON mb.merchant_id = w.merchant_id
         WHERE w.status = 'enabled' AND coalesce(b.n, 0) < ${limits.perEndpoint} AND coalesce(mb.n, 0) < ${limits.perMerchant}
           AND EXISTS (SELECT 1 FROM event_deliveries d WHERE d.endpoint_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= ${now})
      ), picks AS (
        SELECT c.endpoint_id, c.merchant_id, c.busy, p.outbox_id, p.due,
               row_number() OVER (PARTITION BY c.endpoint_id ORDER BY p.due, p.outbox_id) AS k
          FROM cand c CROSS JOIN LATERAL (
            SELECT j.id AS outbox_id, j.run_at AS due
              FROM event_deliveries d CROSS JOIN LATERAL (
                SELECT o.id, o.run_at FROM outbox o
                 WHERE o.kind = 'event_delivery' AND o.status = 'pending' AND o.payload->>'deliveryId' = d.id AND o.run_at <= ${now}
                   AND (o.claimed_until IS NULL OR o.claimed_until < ${now})
                 ORDER BY o.id LIMIT 1
              ) j
             WHERE d.endpoint_id = c.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= ${now}
             ORDER BY d.next_attempt_at, d.id
             LIMIT ${limits.perEndpoint} - c.busy
          ) p
      ), ranked AS (
        SELECT p.*, coalesce(mb.n, 0) + row_number() OVER (PARTITION BY p.merchant_id ORDER BY p.busy + p.k, p.due, p.outbox_id) AS m_load
          FROM picks p LEFT JOIN m_busy mb ON mb.merchant_id = p.merchant_id
      ), chosen AS (
        SELECT * FROM ranked WHERE m_load <= ${limits.perMerchant}
         ORDER BY m_load, due, outbox_id LIMIT ${limits.slots}
      ), claimed AS (
        UPDATE outbox o SET claimed_until = ${until}, claimed_by = ${holder} || '~' || gen_random_uuid()::text, attempts = o.attempts + 1
          FROM chosen c
         WHERE o.id = c.outbox_id AND o.status = 'pending' AND (o.claimed_until IS NULL OR o.claimed_until < ${now})
        RETURNING o.id, o.claimed_by AS token, o.payload, o.run_at, o.attempts, c.endpoint_id, c.merchant_id
      ), leased AS (
        INSERT INTO webhook_endpoint_leases (outbox_id, endpoint_id, merchant_id, holder, expires_at)
        SELECT id, endpoint_id, merchant_id, token, ${until} FROM claimed
        ON CONFLICT (outbox_id) DO UPDATE SET endpoint_id = EXCLUDED.endpoint_id, merchant_id = EXCLUDED.merchant_id, holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
        RETURNING outbox_id
      )
      SELECT c.id, c.token, c.payload, c.endpoint_id, c.merchant_id, c.run_at, c.attempts FROM claimed c JOIN leased l ON l.outbox_id = c.id`);
    return r.rows.map((row) => ({
      outboxId: Number(row.id), token: row.token, payload: row.payload, endpointId: row.endpoint_id, merchantId: row.merchant_id,
      dueAt: new Date(row.run_at), executions: Number(row.attempts),
    }));
  });
}

/**
 * Extends the claim and the lease of deliveries still running, in one statement; returns the
 * outbox ids this process still holds (a row another execution took over is left out).
 */
export async function renewLeases(db: Db, held: readonly { outboxId: number; token: string }[], now: Date, leaseMs: number): Promise<Set<number>> {
  if (held.length === 0) return new Set();
  const until = new Date(now.getTime() + leaseMs);
  const ids = held.map((h) => h.outboxId);
  const tokens = held.map((h) => h.token);
  const r = await db.execute<{ id: string }>(sql`
    WITH mine AS (SELECT * FROM unnest(${`{${ids.join(',')}}`}::bigint[], ${toTextArray(tokens)}::text[]) AS m(id, token)),
    claims AS (
      UPDATE outbox o SET claimed_until = ${until} FROM mine
       WHERE o.id = mine.id AND o.claimed_by = mine.token AND o.status = 'pending' RETURNING o.id
    ), leases AS (
      UPDATE webhook_endpoint_leases l SET expires_at = ${until} FROM mine
       WHERE l.outbox_id = mine.id AND l.holder = mine.token RETURNING l.outbox_id
    )
    SELECT id FROM claims`);
  return new Set(r.rows.map((x) => Number(x.id)));
}

/** Frees the delivery's slot (in the transaction that records its attempt, or on giving it back). */
export async function releaseLease(tx: DbOrTx, outboxId: number, token: string): Promise<void> {
  await tx.execute(sql`DELETE FROM webhook_endpoint_leases WHERE outbox_id = ${outboxId} AND holder = ${token}`);
}

/**
 * Gives a row back after an infrastructure failure (the database, a bug): its claim then lasts
 * `retryInMs`, so the row is taken again after that delay rather than at once; the slot is freed now.
 */
export async function giveBack(db: Db, outboxId: number, token: string, retryAt: Date, error: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`UPDATE outbox SET claimed_until = ${retryAt}, last_error = ${error.slice(0, 500)} WHERE id = ${outboxId} AND claimed_by = ${token} AND status = 'pending'`);
    await releaseLease(tx, outboxId, token);
  });
}

function toTextArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}
