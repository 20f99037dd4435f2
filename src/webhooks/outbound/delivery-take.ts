// Which due deliveries a worker process sends next, decided in PostgreSQL for the whole fleet.
//
// One statement (the function webhook_take_deliveries, migration 0012) claims each chosen
// delivery's outbox row and writes a lease for it (webhook_endpoint_leases: endpoint, merchant,
// expiry). Takes run under a transaction-scoped advisory lock (7420511034), held for the
// function's server-side work only, so the counts they read are exact across processes: no
// endpoint ever has more than `perEndpoint` live leases, no merchant more than `perMerchant`. A delivery whose endpoint
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
  // One round trip: the function (migration 0012) holds the fleet-wide lock for its own work only.
  const r = await db.execute<{ out_id: string; out_token: string; out_payload: unknown; out_endpoint_id: string; out_merchant_id: string; out_run_at: string | Date; out_attempts: number }>(sql`
    SELECT * FROM webhook_take_deliveries(${now}, ${holder}, ${limits.slots}, ${limits.perEndpoint}, ${limits.perMerchant}, ${until})`);
  return r.rows.map((row) => ({
    outboxId: Number(row.out_id), token: row.out_token, payload: row.out_payload, endpointId: row.out_endpoint_id, merchantId: row.out_merchant_id,
    dueAt: new Date(row.out_run_at), executions: Number(row.out_attempts),
  }));
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
