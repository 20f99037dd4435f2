// Domain -> wire for the API's own resources (timeline, lists). The payment, capture and refund
// resources are serialized in src/resources/serialize.ts, which the merchant events share.

import type { PageRequest } from '../store/keyset-page.ts';
import type { ListedEvent } from '../store/merchant-event-queries.ts';
import type { TimelineEntry } from '../store/payment-queries.ts';
import type { EventListItem, TransitionResource } from './resource-schemas.ts';

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

/** A page of a list operation: next_cursor continues the way the page was read (its last item after starting_after, its first before ending_before). */
export function pageResource<T extends { id: string }>(items: readonly T[], hasMore: boolean, request: PageRequest): { object: 'list'; data: T[]; has_more: boolean; next_cursor: string | null } {
  const backwards = request.cursor !== undefined && 'before' in request.cursor;
  const edge = backwards ? items[0] : items[items.length - 1];
  return { object: 'list', data: [...items], has_more: hasMore, next_cursor: hasMore && edge !== undefined ? edge.id : null };
}

/**
 * A listed event: the body its webhook delivered (object, id, type, livemode, created, created_at,
 * api_version, data), with payment_id. Events stored before the one resource shape lack object and
 * created_at: they get them, as every listed event has them.
 */
export function eventListItem(e: ListedEvent): EventListItem {
  const body = e.payload as { livemode?: boolean; created?: string; created_at?: string; api_version?: string; data?: Record<string, unknown> };
  const created = body.created ?? e.createdAt.toISOString();
  return {
    object: 'event', id: e.id, type: e.type, ...(body.livemode === undefined ? {} : { livemode: body.livemode }), created, created_at: body.created_at ?? created,
    ...(body.api_version === undefined ? {} : { api_version: body.api_version }), payment_id: e.paymentId, data: body.data ?? {},
  };
}
