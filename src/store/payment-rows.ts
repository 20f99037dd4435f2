// Payment aggregate <-> rows of payments, payment_attempts, captures and refunds. The mapping is
// exact: loading what was stored gives back an equal Payment (test/integration/store/payment-store).

import type { Attempt, AttemptStatus, Capture, CaptureMethod, NotChargedProof, Payment, Refund, VaultedCardSummary } from '../core/payment.ts';
import type { DeclineClass, CallOutcomeKind } from '../core/outcome.ts';
import { paymentConnector } from '../core/payment-connector.ts';
import type { CaptureState, PaymentState, RefundState } from '../core/states.ts';
import type { captures, paymentAttempts, payments, refunds } from './schema.ts';

export type PaymentRow = typeof payments.$inferSelect;
/** The columns the aggregate owns; the payment method is written once at creation and never by a transition. */
export type PaymentStateRow = Omit<PaymentRow, 'paymentMethod' | 'shopper'>;
export type AttemptRow = typeof paymentAttempts.$inferSelect;
export type CaptureRow = typeof captures.$inferSelect;
export type RefundRow = typeof refunds.$inferSelect;

const iso = (d: Date): string => d.toISOString();
const date = (s: string): Date => {
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) throw new RangeError(`not an ISO 8601 instant: ${s}`);
  return d;
};

/** The payments row for an aggregate; `updatedAt` is when this version was written. */
export function paymentRow(p: Payment, updatedAt: Date): PaymentStateRow {
  return {
    id: p.id,
    merchantId: p.merchantId,
    livemode: p.livemode,
    reference: p.reference,
    amount: p.amount,
    currency: p.currency,
    state: p.state,
    captureMethod: p.captureMethod,
    allowPartial: p.allowPartialAuthorization,
    amountAuthorized: p.amountAuthorized,
    amountCaptured: p.amountCaptured,
    amountRefunded: p.amountRefunded,
    captureOpen: p.captureOpen,
    routing: p.routing,
    routingSnapshot: p.routing.snapshot,
    voidOp: p.voidOp,
    metadata: p.metadata,
    version: p.version,
    createdAt: date(p.createdAt),
    updatedAt,
    deadlineAt: date(p.deadlineAt),
    authentication: p.authentication ?? null,
    connector: paymentConnector(p),
  };
}

export function attemptRow(paymentId: string, a: Attempt, updatedAt: Date): AttemptRow {
  return {
    id: a.id,
    paymentId,
    no: a.no,
    connector: a.connector,
    status: a.status,
    providerRef: a.providerRef,
    authKey: a.authKey,
    firstSentAt: a.firstSentAt === null ? null : date(a.firstSentAt),
    sends: a.sends,
    maybeReached: a.maybeReached,
    notSentSends: [...a.notSentSends],
    prepareCalls: a.prepareCalls,
    queries: a.queries,
    fenceCalls: a.fenceCalls,
    resendBlocked: a.resendBlocked,
    lastOutcome: a.lastOutcome,
    proof: a.proof,
    declineCode: a.declineCode,
    declineClass: a.declineClass,
    retryElsewhere: a.retryElsewhere,
    notSentReason: a.notSentReason,
    amountAuthorized: a.amountAuthorized,
    createdAt: date(a.createdAt),
    updatedAt,
    releaseOp: a.release,
    authentication: a.authentication ?? null,
  };
}

export function captureRow(paymentId: string, c: Capture, updatedAt: Date): CaptureRow {
  return {
    id: c.id, paymentId, no: c.no, amount: c.amount, final: c.final, status: c.status, providerKey: c.providerKey,
    providerRef: c.providerRef, calls: c.calls, failure: c.failure, createdAt: date(c.createdAt), updatedAt,
  };
}

export function refundRow(p: Pick<Payment, 'id' | 'merchantId'>, r: Refund, updatedAt: Date): RefundRow {
  return {
    id: r.id, paymentId: p.id, merchantId: p.merchantId, no: r.no, amount: r.amount, reason: r.reason, status: r.status, providerKey: r.providerKey,
    providerRef: r.providerRef, calls: r.calls, failure: r.failure, createdAt: date(r.createdAt), updatedAt,
  };
}

export function attemptFromRow(r: AttemptRow): Attempt {
  return {
    id: r.id,
    no: r.no,
    connector: r.connector,
    status: r.status as AttemptStatus,
    providerRef: r.providerRef,
    authKey: r.authKey,
    firstSentAt: r.firstSentAt === null ? null : iso(r.firstSentAt),
    sends: r.sends,
    maybeReached: r.maybeReached,
    notSentSends: r.notSentSends,
    prepareCalls: r.prepareCalls,
    queries: r.queries,
    fenceCalls: r.fenceCalls,
    resendBlocked: r.resendBlocked,
    lastOutcome: r.lastOutcome as CallOutcomeKind | null,
    proof: r.proof as NotChargedProof | null,
    declineCode: r.declineCode,
    declineClass: r.declineClass as DeclineClass | null,
    retryElsewhere: r.retryElsewhere,
    notSentReason: r.notSentReason,
    amountAuthorized: r.amountAuthorized,
    createdAt: iso(r.createdAt),
    release: r.releaseOp === null ? null : { ...r.releaseOp, earlierRefs: r.releaseOp.earlierRefs ?? [] },
    ...(r.authentication === null ? {} : { authentication: r.authentication }),
  };
}

export function captureFromRow(r: CaptureRow): Capture {
  return {
    id: r.id, no: r.no, amount: r.amount, final: r.final, status: r.status as CaptureState, providerKey: r.providerKey,
    providerRef: r.providerRef, calls: r.calls, failure: r.failure ?? null, createdAt: iso(r.createdAt),
  };
}

export function refundFromRow(r: RefundRow): Refund {
  return {
    id: r.id, no: r.no, amount: r.amount, reason: r.reason, status: r.status as RefundState, providerKey: r.providerKey,
    providerRef: r.providerRef, calls: r.calls, failure: r.failure ?? null, createdAt: iso(r.createdAt),
  };
}

/** Children must come ordered by `no`. */
export function paymentFromRows(row: PaymentRow, attempts: readonly AttemptRow[], caps: readonly CaptureRow[], rfds: readonly RefundRow[]): Payment {
  // attempts, captures and refunds go last: step()'s Draft rebuilds the aggregate in that key order
  // and detects "nothing changed" by comparing JSON, so the loaded order must match it.
  return {
    id: row.id,
    merchantId: row.merchantId,
    livemode: row.livemode,
    reference: row.reference,
    amount: row.amount,
    currency: row.currency,
    captureMethod: row.captureMethod as CaptureMethod,
    allowPartialAuthorization: row.allowPartial,
    state: row.state as PaymentState,
    amountAuthorized: row.amountAuthorized,
    amountCaptured: row.amountCaptured,
    amountRefunded: row.amountRefunded,
    captureOpen: row.captureOpen,
    voidOp: row.voidOp,
    routing: row.routing,
    metadata: row.metadata,
    version: row.version,
    createdAt: iso(row.createdAt),
    deadlineAt: iso(row.deadlineAt),
    ...(row.authentication === null ? {} : { authentication: row.authentication }),
    ...vaultedCardOf(row.paymentMethod),
    attempts: attempts.map(attemptFromRow),
    captures: caps.map(captureFromRow),
    refunds: rfds.map(refundFromRow),
  };
}

/** payments.payment_method of a vaulted card (src/jobs/call-executor.ts StoredPaymentMethod): its id and what the merchant may see. */
export function vaultedCardOf(pm: unknown): { vaultedCard?: VaultedCardSummary } {
  const v = pm as { id?: unknown; card?: { brand: string; last4: string; exp_month: number; exp_year: number } } | null;
  if (v === null || typeof v.id !== 'string' || v.card === undefined) return {};
  return { vaultedCard: { id: v.id, brand: v.card.brand, last4: v.card.last4, expMonth: v.card.exp_month, expYear: v.card.exp_year } };
}
