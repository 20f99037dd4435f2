// What a merchant receives: { id, type, created, data }. `data` describes the payment (and the
// refund, capture or dispute) as it was at the version that produced the event, not as it is
// when the delivery happens to run.

import type { MerchantEventType } from '../../core/effects.ts';
import type { Capture, Payment, Refund } from '../../core/payment.ts';

export interface DisputeView {
  readonly id: string;
  readonly status: 'opened' | 'won' | 'lost';
  readonly amount: number;
  readonly currency: string;
  readonly reason: string | null;
  readonly provider_reference: string;
}

/** The outbox payload of a 'merchant_event' row: the effect, plus the snapshot store/effect-rows.ts adds. */
export interface MerchantEventRowPayload {
  readonly type: 'merchant_event';
  readonly event: MerchantEventType;
  readonly refundId?: string;
  readonly captureId?: string;
  readonly dispute?: DisputeView;
  readonly payment: Payment;
}

export interface MerchantEventBody {
  readonly id: string;
  readonly type: MerchantEventType;
  readonly created: string;
  readonly data: Record<string, unknown>;
}

function paymentView(p: Payment): Record<string, unknown> {
  return {
    id: p.id, reference: p.reference, status: p.state, amount: p.amount, currency: p.currency, capture_method: p.captureMethod,
    amount_authorized: p.amountAuthorized, amount_captured: p.amountCaptured, amount_refunded: p.amountRefunded,
    metadata: p.metadata, version: p.version, created: p.createdAt,
  };
}

function captureView(c: Capture): Record<string, unknown> {
  return { id: c.id, amount: c.amount, final: c.final, status: c.status, created: c.createdAt };
}

function refundView(r: Refund): Record<string, unknown> {
  return { id: r.id, amount: r.amount, reason: r.reason, status: r.status, created: r.createdAt };
}

export function merchantEventBody(id: string, created: Date, row: MerchantEventRowPayload): MerchantEventBody {
  const p = row.payment;
  const refund = row.refundId === undefined ? undefined : p.refunds.find((r) => r.id === row.refundId);
  const capture = row.captureId === undefined ? undefined : p.captures.find((c) => c.id === row.captureId);
  const data: Record<string, unknown> = { payment: paymentView(p) };
  if (refund !== undefined) data['refund'] = refundView(refund);
  if (capture !== undefined) data['capture'] = captureView(capture);
  if (row.dispute !== undefined) data['dispute'] = row.dispute;
  return { id, type: row.event, created: created.toISOString(), data };
}
