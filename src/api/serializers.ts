// Domain -> wire. The only place that knows the JSON field names of the merchant resources.

import type { Attempt, Payment, Refund } from '../core/payment.ts';
import type { TimelineEntry } from '../store/payment-queries.ts';
import type { PaymentResource, RefundResource, TransitionResource } from './resource-schemas.ts';

function attemptResource(a: Attempt): PaymentResource['attempts'][number] {
  return {
    id: a.id, connector: a.connector, status: a.status, provider_reference: a.providerRef, outcome: a.lastOutcome, proof: a.proof,
    decline_code: a.declineCode, created_at: a.createdAt,
  };
}

export function paymentResource(p: Payment, updatedAt: string): PaymentResource {
  const holding = p.attempts.find((a) => a.status === 'authorized' || a.status === 'review');
  return {
    id: p.id, object: 'payment', status: p.state, amount: p.amount, currency: p.currency,
    amount_authorized: p.amountAuthorized, amount_captured: p.amountCaptured, amount_refunded: p.amountRefunded,
    capture_method: p.captureMethod, reference: p.reference, metadata: { ...p.metadata },
    connector: holding?.connector ?? p.attempts[p.attempts.length - 1]?.connector ?? null,
    attempts: p.attempts.map(attemptResource),
    routing: { snapshot: p.routing.snapshot, rule: p.routing.rule, candidates: [...p.routing.candidates], skipped: p.routing.skipped.map((s) => ({ ...s })) },
    created_at: p.createdAt, updated_at: updatedAt,
  };
}

export function refundResource(p: Payment, r: Refund): RefundResource {
  return { id: r.id, object: 'refund', payment_id: p.id, amount: r.amount, currency: p.currency, status: r.status, reason: r.reason, created_at: r.createdAt };
}

export function transitionResource(t: TimelineEntry): TransitionResource {
  return {
    id: t.id, object: 'transition', from: t.from, to: t.to, origin: t.origin, input: t.input, attempt_id: t.attemptId, raw_provider: t.rawProvider,
    outcome: t.outcome, code: t.code, reason: t.reason, version: t.version, at: t.at,
  };
}

export function listResource<T>(data: readonly T[], hasMore: boolean, cursorOf: (item: T) => string): { object: 'list'; data: T[]; has_more: boolean; next_cursor: string | null } {
  const last = data[data.length - 1];
  return { object: 'list', data: [...data], has_more: hasMore, next_cursor: hasMore && last !== undefined ? cursorOf(last) : null };
}
