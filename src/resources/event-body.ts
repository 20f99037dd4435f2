// What a merchant receives: { id, type, livemode, created, data }. `data` describes the payment (and the
// refund, capture or dispute) as it was at the version that produced the event, not as it is
// when the delivery happens to run. The payment, capture and refund are exactly the API's
// resources (one serializer, src/resources), as a GET would have answered at that version.

import type { DisputeStatus } from '../core/disputes.ts';
import type { MerchantEventType } from '../core/effects.ts';
import type { Payment } from '../core/payment.ts';
import { captureResource, paymentResource, refundResource } from './serialize.ts';

/** Stored in an endpoint's enabled_events for "every type", so types added later reach it too. */
export const ALL_EVENTS = '*';

export interface DisputeView {
  readonly id: string;
  readonly status: DisputeStatus;
  readonly amount: number;
  readonly currency: string;
  /** What the provider holds back for the dispute now (minor units). */
  readonly withdrawn: number;
  /** The provider's own name for where the dispute is (Stripe status; Adyen eventCode/disputeStatus). */
  readonly provider_status: string;
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
  readonly object: 'event';
  readonly type: MerchantEventType;
  /** The payment's mode: an endpoint receives the events of both modes, and this says which one it is. */
  readonly livemode: boolean;
  /** Kept beside created_at, the shape every resource has (issue 48): events of the first API version had only `created`. */
  readonly created: string;
  readonly created_at: string;
  readonly data: Record<string, unknown>;
}

export function merchantEventBody(id: string, created: Date, row: MerchantEventRowPayload): MerchantEventBody {
  const p = row.payment;
  const refund = row.refundId === undefined ? undefined : p.refunds.find((r) => r.id === row.refundId);
  const capture = row.captureId === undefined ? undefined : p.captures.find((c) => c.id === row.captureId);
  // The version that produced the event was written at `created` (the transition's time).
  const data: Record<string, unknown> = { payment: paymentResource(p, created.toISOString()) };
  if (refund !== undefined) data['refund'] = refundResource(p, refund);
  if (capture !== undefined) data['capture'] = captureResource(capture);
  if (row.dispute !== undefined) data['dispute'] = row.dispute;
  return { id, object: 'event', type: row.event, livemode: p.livemode, created: created.toISOString(), created_at: created.toISOString(), data };
}
