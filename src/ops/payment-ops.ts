// What an operator asks about payments, shared by the CLI (`switchyard payments ...`) and the
// operations dashboard: stuck payments oldest first, one payment with its timeline, and the way
// out of needs_review — resolveByOperator(), i.e. transition() with origin 'operator' and a note,
// recorded in the timeline like every other input.

import { sql } from 'drizzle-orm';
import type { Runtime } from '../app/runtime.ts';
import { resolveByOperator } from '../app/payment-service.ts';
import type { OperationFailure } from '../core/payment.ts';
import type { Db } from '../store/db.ts';
import { loadAggregate } from '../store/payment-load.ts';
import { loadTimeline } from '../store/payment-queries.ts';
import { recordAudit } from './audit.ts';
import { asProviderViews, providerRecords } from './provider-records.ts';
import type { AttemptRecords } from './provider-records.ts';
import type { TimelineEntry } from '../store/payment-queries.ts';

/** A request an operator got wrong (unknown id, missing note, a payment not in needs_review). */
export class OpsInputError extends Error {
  override readonly name = 'OpsInputError';
}

/** In flight or parked for a person: every non-terminal state except authorized (resting, awaiting the merchant). */
export const STUCK_STATES = ['created', 'authorizing', 'auth_unknown', 'requires_action', 'capturing', 'voiding', 'needs_review'] as const;

export const RESOLUTIONS = ['authorized', 'captured', 'failed', 'voided'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export interface StuckPayment {
  readonly id: string;
  readonly merchantId: string;
  readonly state: string;
  readonly connector: string | null;
  readonly amount: number;
  readonly currency: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Seconds since the payment last changed. */
  readonly stuckSeconds: number;
}

const stateList = sql.join(STUCK_STATES.map((s) => sql`${s}`), sql`, `);

/** Payments untouched for at least `olderThanMs` in a stuck state, the longest-stuck first. */
export async function listStuckPayments(db: Db, o: { olderThanMs: number; now: Date; limit?: number }): Promise<StuckPayment[]> {
  const at = o.now.toISOString();
  const r = await db.execute<{ id: string; merchant_id: string; state: string; connector: string | null; amount: string; currency: string; created_at: string | Date; updated_at: string | Date; stuck: number }>(sql`
    SELECT p.id, p.merchant_id, p.state, a.connector, p.amount::text AS amount, p.currency, p.created_at, p.updated_at,
           extract(epoch FROM ${at}::timestamptz - p.updated_at)::float8 AS stuck
      FROM payments p
      LEFT JOIN LATERAL (SELECT connector FROM payment_attempts WHERE payment_id = p.id ORDER BY no DESC LIMIT 1) a ON true
     WHERE p.state IN (${stateList}) AND p.updated_at <= ${at}::timestamptz - ${o.olderThanMs} * interval '1 millisecond'
     ORDER BY p.updated_at, p.id
     LIMIT ${o.limit ?? 200}`);
  return r.rows.map((x) => ({
    id: x.id, merchantId: x.merchant_id, state: x.state, connector: x.connector, amount: Number(x.amount), currency: x.currency,
    createdAt: new Date(x.created_at).toISOString(), updatedAt: new Date(x.updated_at).toISOString(), stuckSeconds: Math.max(0, Math.round(Number(x.stuck))),
  }));
}

export interface AttemptSummary {
  readonly id: string;
  readonly no: number;
  readonly connector: string;
  readonly status: string;
  readonly providerRef: string | null;
  readonly lastOutcome: string | null;
  readonly proof: string | null;
}

export interface OperationSummary {
  readonly id: string;
  readonly no: number;
  readonly amount: number;
  readonly status: string;
  readonly providerRef: string | null;
  readonly calls: number;
  readonly failure: OperationFailure | null;
  readonly createdAt: string;
}

export interface PaymentDetail {
  readonly id: string;
  readonly merchantId: string;
  readonly state: string;
  readonly amount: number;
  readonly currency: string;
  readonly amountAuthorized: number;
  readonly amountCaptured: number;
  readonly amountRefunded: number;
  readonly captureMethod: string;
  readonly reference: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly attempts: readonly AttemptSummary[];
  /** Every capture and refund asked for, in order, with the failure when one failed. */
  readonly captures: readonly OperationSummary[];
  readonly refunds: readonly OperationSummary[];
  /** Every input the payment received, applied or ignored, oldest first (without raw provider payloads). */
  readonly timeline: readonly Omit<TimelineEntry, 'rawProvider'>[];
}

/** One payment of any merchant with its attempts and timeline; null when there is none. */
export async function loadPaymentDetail(db: Db, id: string): Promise<PaymentDetail | null> {
  const rows = await db.execute<{
    id: string; merchant_id: string; state: string; amount: string; currency: string; amount_authorized: string; amount_captured: string; amount_refunded: string;
    capture_method: string; reference: string; created_at: string | Date; updated_at: string | Date;
  }>(sql`SELECT id, merchant_id, state, amount::text, currency, amount_authorized::text, amount_captured::text, amount_refunded::text, capture_method, reference, created_at, updated_at
           FROM payments WHERE id = ${id}`);
  const p = rows.rows[0];
  if (p === undefined) return null;
  const attempts = await db.execute<{ id: string; no: number; connector: string; status: string; provider_ref: string | null; last_outcome: string | null; proof: string | null }>(
    sql`SELECT id, no, connector, status, provider_ref, last_outcome, proof FROM payment_attempts WHERE payment_id = ${id} ORDER BY no`,
  );
  const operations = async (table: 'captures' | 'refunds'): Promise<OperationSummary[]> => {
    const r = await db.execute<{ id: string; no: number; amount: string; status: string; provider_ref: string | null; calls: number; failure: OperationFailure | null; created_at: string | Date }>(
      sql`SELECT id, no, amount::text, status, provider_ref, calls, failure, created_at FROM ${sql.identifier(table)} WHERE payment_id = ${id} ORDER BY no`,
    );
    return r.rows.map((o) => ({ id: o.id, no: o.no, amount: Number(o.amount), status: o.status, providerRef: o.provider_ref, calls: o.calls, failure: o.failure, createdAt: new Date(o.created_at).toISOString() }));
  };
  const [captures, refunds] = [await operations('captures'), await operations('refunds')];
  const timeline = (await loadTimeline(db, p.merchant_id, id)) ?? [];
  return {
    id: p.id, merchantId: p.merchant_id, state: p.state, amount: Number(p.amount), currency: p.currency,
    amountAuthorized: Number(p.amount_authorized), amountCaptured: Number(p.amount_captured), amountRefunded: Number(p.amount_refunded),
    captureMethod: p.capture_method, reference: p.reference, createdAt: new Date(p.created_at).toISOString(), updatedAt: new Date(p.updated_at).toISOString(),
    attempts: attempts.rows.map((a) => ({ id: a.id, no: a.no, connector: a.connector, status: a.status, providerRef: a.provider_ref, lastOutcome: a.last_outcome, proof: a.proof })),
    captures, refunds,
    timeline: timeline.map(({ rawProvider: _raw, ...entry }) => entry),
  };
}

export function isResolution(v: unknown): v is Resolution {
  return typeof v === 'string' && (RESOLUTIONS as readonly string[]).includes(v);
}

export interface Resolved {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly transitionId: number;
  /** What the provider's records showed for each attempt before the resolution. */
  readonly records: readonly AttemptRecords[];
}

/** step() refused the resolution (a money guard, or the payment is not in needs_review); the records were read first. */
export class ResolutionRefusedError extends OpsInputError {
  constructor(message: string, readonly records: readonly AttemptRecords[]) {
    super(message);
  }
}

export interface ResolveOptions {
  /** Why a resolution the money guards refuse is taken anyway (kept with the operator's name). */
  readonly override?: string | undefined;
}

/**
 * The operator's way out of needs_review: first what the provider's records say for each attempt,
 * then resolveByOperator() with them and the operator's name; anything step() refuses comes back
 * as a ResolutionRefusedError with its reason and the records. The audit row (with the override,
 * if any) commits with the resolution, or not at all.
 */
export async function resolvePayment(rt: Runtime, id: string, as: string, note: string, operator: string, o: ResolveOptions = {}): Promise<Resolved> {
  if (!isResolution(as)) throw new OpsInputError(`--as must be one of ${RESOLUTIONS.join(', ')} (got "${as}")`);
  if (note.trim() === '') throw new OpsInputError('a note is required: say why (it is kept in the payment timeline)');
  const override = o.override?.trim();
  if (o.override !== undefined && override === '') throw new OpsInputError('an override must name its reason');
  const payment = await loadAggregate(rt.database.db, id);
  if (payment === null) throw new OpsInputError(`no payment ${id}`);
  const records = await providerRecords(rt.database.db, rt.connectors, payment, rt.now());
  const before = { state: payment.state };
  const input = { as, note: note.trim(), operator, provider: asProviderViews(records), ...(override === undefined ? {} : { override }) };
  const r = await resolveByOperator(rt, payment.merchantId, id, input, async (tx, logged) => {
    if (logged.outcome !== 'applied') return;
    const action = override === undefined ? 'payment.resolve' : 'payment.resolve_override';
    await recordAudit(tx, { operator, action, target: id, before, after: { state: as, ...(override === undefined ? {} : { override }) }, note: note.trim(), at: rt.now() });
  });
  if (r.kind !== 'applied') throw new ResolutionRefusedError(`payment ${id} not resolved: ${r.reason}`, records);
  return { id, from: r.from, to: r.to, transitionId: r.transitionId, records };
}
