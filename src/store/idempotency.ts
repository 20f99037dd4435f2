// API idempotency records (architecture §5): (merchant, Idempotency-Key) -> fingerprint, a lease
// while the first request executes, and the stored answer. The lease's own expiry instant is the
// holder's token: a takeover writes a new one, so a process that lost its lease cannot bind a
// payment. Its finished answer is still stored while the record is in progress for the same
// request and the same payment: a takeover resumes that very operation, so the answers agree, and
// throwing the first one away let every takeover re-run the whole wait — a livelock of 409s
// while executions outlasted the lease (issue 19).

import { and, eq, isNull, lte, sql } from 'drizzle-orm';
import type { DbOrTx } from './db.ts';
import { preparedQuery } from './prepared.ts';
import { idempotencyRecords } from './schema.ts';

export type IdempotencyRecord = typeof idempotencyRecords.$inferSelect;

export interface ClaimRequest {
  readonly merchantId: string;
  readonly key: string;
  readonly fingerprint: string;
  readonly now: Date;
  readonly leaseMs: number;
  readonly retentionMs: number;
}

/** A claim we hold: `lease` is the locked_until we wrote; `resumed` when a dead holder's lease was taken over. */
export interface HeldClaim {
  readonly merchantId: string;
  readonly key: string;
  readonly fingerprint: string;
  readonly lease: Date;
  readonly createdAt: Date;
  readonly paymentId: string | null;
  readonly resumed: boolean;
}

export type ClaimResult =
  | { readonly kind: 'claimed'; readonly claim: HeldClaim }
  | { readonly kind: 'completed'; readonly status: number; readonly body: Buffer; readonly headers: Readonly<Record<string, string>> }
  | { readonly kind: 'in_progress'; readonly retryAfterS: number }
  | { readonly kind: 'fingerprint_mismatch' };

export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(key: string) {
    super(`idempotency key ${key}: lease taken over by another request`);
  }
}

function held(row: IdempotencyRecord, resumed: boolean): HeldClaim {
  return { merchantId: row.merchantId, key: row.key, fingerprint: row.fingerprint, lease: row.lockedUntil!, createdAt: row.createdAt, paymentId: row.paymentId, resumed };
}

/** The payment each claim's execution bound to its key (a claim is a value; what it bound is learnt as it runs). */
const boundByClaim = new WeakMap<HeldClaim, string>();

/** The payment this execution's answer is about: the one the record had when claimed, or the one this execution bound. */
export function boundPaymentOf(claim: HeldClaim): string | null {
  return claim.paymentId ?? boundByClaim.get(claim) ?? null;
}

const thisKey = (merchantId: string, key: string) => and(eq(idempotencyRecords.merchantId, merchantId), eq(idempotencyRecords.key, key));

// Every POST runs these three (the claim, the payment bound, the answer stored): prepared
// statements (src/store/prepared.ts). The rarer paths (reset, takeover, reads) build as before.
const ph = (name: string) => sql.placeholder(name);
/**
 * A placeholder where drizzle's types want the column's value (update sets): at run time drizzle
 * wraps it with the column's encoder like any value, and fills it at execution (fillPlaceholders).
 */
const phAs = <T>(name: string): T => sql.placeholder(name) as unknown as T;
const placeholderKey = () => and(eq(idempotencyRecords.merchantId, ph('merchantId')), eq(idempotencyRecords.key, ph('key')));

interface ClaimValues extends Record<string, unknown> {
  merchantId: string; key: string; fingerprint: string; lockedUntil: Date; createdAt: Date; expiresAt: Date;
}
const insertClaim = preparedQuery<IdempotencyRecord[], ClaimValues>('sy_idem_insert_claim', (db) =>
  db.insert(idempotencyRecords).values({
    merchantId: ph('merchantId'), key: ph('key'), fingerprint: ph('fingerprint'), status: 'in_progress', lockedUntil: ph('lockedUntil'), paymentId: null,
    responseStatus: null, responseBody: null, responseHeaders: null, createdAt: ph('createdAt'), expiresAt: ph('expiresAt'),
  }).onConflictDoNothing().returning());

const attachPayment = preparedQuery<{ key: string }[], { merchantId: string; key: string; lease: Date; paymentId: string }>('sy_idem_attach_payment', (db) =>
  db.update(idempotencyRecords)
    .set({ paymentId: phAs<string>('paymentId') })
    .where(and(placeholderKey(), eq(idempotencyRecords.lockedUntil, ph('lease')), isNull(idempotencyRecords.paymentId)))
    .returning({ key: idempotencyRecords.key }));

interface CompleteValues extends Record<string, unknown> {
  merchantId: string; key: string; fingerprint: string; status: number; body: Buffer; headers: Record<string, string>; paymentId?: string;
}
const completeWith = (name: string, bound: boolean) => preparedQuery<{ key: string }[], CompleteValues>(name, (db) =>
  db.update(idempotencyRecords)
    .set({ status: 'completed', lockedUntil: null, responseStatus: phAs<number>('status'), responseBody: phAs<Buffer>('body'), responseHeaders: phAs<Record<string, string>>('headers') })
    .where(and(
      placeholderKey(), eq(idempotencyRecords.status, 'in_progress'), eq(idempotencyRecords.fingerprint, ph('fingerprint')),
      bound ? eq(idempotencyRecords.paymentId, ph('paymentId')) : isNull(idempotencyRecords.paymentId),
    ))
    .returning({ key: idempotencyRecords.key }));
const completeUnbound = completeWith('sy_idem_complete_unbound', false);
const completeBound = completeWith('sy_idem_complete_bound', true);

export async function claimIdempotencyKey(db: DbOrTx, r: ClaimRequest): Promise<ClaimResult> {
  const lease = new Date(r.now.getTime() + r.leaseMs);
  const fresh = {
    fingerprint: r.fingerprint, status: 'in_progress', lockedUntil: lease, paymentId: null, responseStatus: null, responseBody: null,
    responseHeaders: null, createdAt: r.now, expiresAt: new Date(r.now.getTime() + r.retentionMs),
  };
  // A few rounds: a record may be purged or completed between our statements.
  for (let round = 0; round < 3; round++) {
    const inserted = await insertClaim(db, { merchantId: r.merchantId, key: r.key, fingerprint: r.fingerprint, lockedUntil: lease, createdAt: r.now, expiresAt: fresh.expiresAt });
    if (inserted[0] !== undefined) return { kind: 'claimed', claim: held(inserted[0], false) };

    // Past retention the key is free again, even if the purge job has not run yet.
    const reset = await db.update(idempotencyRecords).set(fresh).where(and(thisKey(r.merchantId, r.key), lte(idempotencyRecords.expiresAt, r.now))).returning();
    if (reset[0] !== undefined) return { kind: 'claimed', claim: held(reset[0], false) };

    const takenOver = await db
      .update(idempotencyRecords)
      .set({ lockedUntil: lease })
      .where(and(
        thisKey(r.merchantId, r.key), eq(idempotencyRecords.fingerprint, r.fingerprint), eq(idempotencyRecords.status, 'in_progress'),
        lte(idempotencyRecords.lockedUntil, r.now),
      ))
      .returning();
    if (takenOver[0] !== undefined) return { kind: 'claimed', claim: held(takenOver[0], true) };

    const [row] = await db.select().from(idempotencyRecords).where(thisKey(r.merchantId, r.key));
    if (row === undefined) continue;
    if (row.fingerprint !== r.fingerprint) return { kind: 'fingerprint_mismatch' };
    if (row.status === 'completed') {
      return { kind: 'completed', status: row.responseStatus!, body: row.responseBody ?? Buffer.alloc(0), headers: row.responseHeaders ?? {} };
    }
    const waitMs = (row.lockedUntil?.getTime() ?? r.now.getTime()) - r.now.getTime();
    return { kind: 'in_progress', retryAfterS: Math.max(1, Math.ceil(waitMs / 1000)) };
  }
  return { kind: 'in_progress', retryAfterS: 1 };
}

/** In the creating transaction: the payment id goes with the key, or the transaction rolls back. */
export async function attachPaymentToClaim(tx: DbOrTx, claim: HeldClaim, paymentId: string): Promise<void> {
  const rows = await attachPayment(tx, { merchantId: claim.merchantId, key: claim.key, lease: claim.lease, paymentId });
  if (rows.length === 0) throw new LeaseLostError(claim.key);
  boundByClaim.set(claim, paymentId);
}

/**
 * Before a capture or refund is requested: the key names the payment it works on, so a failure
 * after the request committed keeps the record (releaseClaim forgets only unbound ones) and the
 * retry resumes with the same operation id instead of asking for a second capture or refund.
 * Found by the chaos harness: a refund replayed after its connection was cut became a new refund.
 */
export async function bindClaimToPayment(db: DbOrTx, claim: HeldClaim, paymentId: string): Promise<void> {
  if (claim.paymentId !== null) return;
  await attachPaymentToClaim(db, claim, paymentId);
}

export type Completion =
  | { readonly kind: 'stored' }
  /** Another execution stored its answer first: send that one, so every answer for the key is the same. */
  | { readonly kind: 'already'; readonly status: number; readonly body: Buffer; readonly headers: Readonly<Record<string, string>> }
  /** The record is gone or about another payment (a takeover created its own): nothing stored. */
  | { readonly kind: 'lost' };

/**
 * Stores the answer while the record is in progress with this request's fingerprint and the
 * payment this execution is about — whoever holds the lease now (the holder resumes the same
 * operation). A 5xx is never stored: it says nothing about the operation, and the retry must run.
 */
export async function completeClaim(db: DbOrTx, claim: HeldClaim, response: { status: number; body: Buffer; headers: Record<string, string> }): Promise<Completion> {
  if (response.status >= 500) throw new RangeError(`a ${response.status} answer is never stored`);
  const paymentId = boundPaymentOf(claim);
  const values = { merchantId: claim.merchantId, key: claim.key, fingerprint: claim.fingerprint, status: response.status, body: response.body, headers: response.headers };
  const rows = paymentId === null ? await completeUnbound(db, values) : await completeBound(db, { ...values, paymentId });
  if (rows.length > 0) return { kind: 'stored' };
  const [row] = await db.select().from(idempotencyRecords).where(thisKey(claim.merchantId, claim.key));
  if (row?.status === 'completed' && row.fingerprint === claim.fingerprint) {
    return { kind: 'already', status: row.responseStatus!, body: row.responseBody ?? Buffer.alloc(0), headers: row.responseHeaders ?? {} };
  }
  return { kind: 'lost' };
}

/** After an unexpected failure: forget a key that committed nothing; otherwise let the next retry resume at once. */
export async function releaseClaim(db: DbOrTx, claim: HeldClaim, now: Date): Promise<void> {
  const ours = and(thisKey(claim.merchantId, claim.key), eq(idempotencyRecords.lockedUntil, claim.lease), eq(idempotencyRecords.status, 'in_progress'));
  await db.delete(idempotencyRecords).where(and(ours, isNull(idempotencyRecords.paymentId)));
  await db.update(idempotencyRecords).set({ lockedUntil: now }).where(ours);
}

/** Deletes records past their retention, in batches; returns how many went. */
export async function purgeExpiredIdempotencyRecords(db: DbOrTx, now: Date, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await db.execute(sql`
      DELETE FROM idempotency_records WHERE ctid IN (
        SELECT ctid FROM idempotency_records WHERE expires_at <= ${now.toISOString()}::timestamptz LIMIT ${batch})`);
    const n = r.rowCount ?? 0;
    total += n;
    if (n < batch) return total;
  }
}
