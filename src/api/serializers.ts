// Domain -> wire for the API's own resources (timeline, lists). The payment, capture and refund
// resources are serialized in src/resources/serialize.ts, which the merchant events share.

import type { TimelineEntry } from '../store/payment-queries.ts';
import type { TransitionResource } from './resource-schemas.ts';

export { captureResource, paymentResource, refundResource } from '../resources/serialize.ts';

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
