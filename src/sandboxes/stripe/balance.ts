// Balance transactions and the events list: how an account's activity is read back by time.
// Stripe books a balance transaction when money moves (a capture, a refund, a refund that fails
// later, a dispute's withdrawal and reinstatement), each with its own `created`; events are kept
// for 30 days. Both list newest first, paginated with starting_after / has_more.

import type { OperationContext } from './context.ts';
import { invalidParam, resourceMissing } from './errors.ts';
import type { FormParams } from './form-encoding.ts';
import { stripeId } from './ids.ts';
import { balanceTransactionObject, renderCharge, renderDispute, renderList, renderRefund } from './objects.ts';
import type { StripeObject } from './objects.ts';
import { assertKnownParams, createdFilter, readExpand, readInteger, readString } from './params.ts';
import type { BalanceTransactionRecord } from './state.ts';

/** How long Stripe keeps events (GET /v1/events returns nothing older). */
export const EVENT_RETENTION_SECONDS = 30 * 86_400;

export function bookBalanceTransaction(ctx: OperationContext, t: Omit<BalanceTransactionRecord, 'id' | 'created'> & { readonly id?: string }): void {
  const record: BalanceTransactionRecord = { ...t, id: t.id ?? stripeId('txn'), created: ctx.now };
  ctx.state.balanceTransactions.set(record.id, record);
}

function renderBalanceTransaction(t: BalanceTransactionRecord, ctx: OperationContext, expand: readonly string[]): StripeObject {
  return balanceTransactionObject(t, expand.includes('source') ? renderSource(t.source, ctx) : t.source);
}

function renderSource(id: string, ctx: OperationContext): StripeObject | string {
  const charge = ctx.state.charges.get(id);
  if (charge !== undefined) return renderCharge(charge, ctx.state);
  const refund = ctx.state.refunds.get(id);
  if (refund !== undefined) return renderRefund(refund);
  const dispute = ctx.state.disputes.get(id);
  if (dispute !== undefined) return renderDispute(dispute, ctx.state);
  return id;
}


/** Newest first (ties: the later booked first), then the page after `starting_after`. */
function page<T extends { id: string; created: number }>(items: readonly T[], params: FormParams, resource: string): { data: T[]; hasMore: boolean } {
  const limit = readInteger(params, 'limit', 1, 100) ?? 10;
  const startingAfter = readString(params, 'starting_after');
  let all = [...items];
  if (startingAfter !== undefined) {
    const index = all.findIndex((x) => x.id === startingAfter);
    if (index < 0) throw resourceMissing(resource, startingAfter, 'starting_after');
    all = all.slice(index + 1);
  }
  return { data: all.slice(0, limit), hasMore: all.length > limit };
}

const BALANCE_LIST_PARAMS = new Set(['created', 'limit', 'starting_after', 'ending_before', 'type', 'source', 'currency', 'payout', 'expand']);

export function listBalanceTransactions(ctx: OperationContext, params: FormParams): StripeObject {
  assertKnownParams(params, BALANCE_LIST_PARAMS);
  const expand = readExpand(params);
  const matches = createdFilter(params);
  const type = readString(params, 'type');
  const source = readString(params, 'source');
  const all = [...ctx.state.balanceTransactions.values()]
    .reverse()
    .sort((a, b) => b.created - a.created)
    .filter((t) => matches(t.created) && (type === undefined || t.type === type) && (source === undefined || t.source === source));
  const { data, hasMore } = page(all, params, 'balance_transaction');
  const itemExpand = expand.flatMap((e) => (e.startsWith('data.') ? [e.slice(5)] : []));
  return renderList('/v1/balance_transactions', data.map((t) => renderBalanceTransaction(t, ctx, itemExpand)), hasMore);
}

export function retrieveBalanceTransaction(ctx: OperationContext, id: string, params: FormParams): StripeObject {
  const t = ctx.state.balanceTransactions.get(id);
  if (t === undefined) throw resourceMissing('balance_transaction', id);
  return renderBalanceTransaction(t, ctx, readExpand(params));
}

const EVENT_LIST_PARAMS = new Set(['created', 'limit', 'starting_after', 'ending_before', 'type', 'types', 'delivery_success', 'expand']);

/** The events of the last 30 days (state.events, loaded newest first), as Stripe lists them. */
export function listEvents(ctx: OperationContext, params: FormParams): StripeObject {
  assertKnownParams(params, EVENT_LIST_PARAMS);
  readExpand(params);
  const matches = createdFilter(params);
  const type = readString(params, 'type');
  const types = params['types'];
  if (types !== undefined && (!Array.isArray(types) || !types.every((t): t is string => typeof t === 'string'))) throw invalidParam('types', 'Invalid array: types must be a list of strings.');
  const typeMatches = (t: string): boolean =>
    (type === undefined || (type.endsWith('.*') ? t.startsWith(type.slice(0, -1)) : t === type)) && (types === undefined || types.includes(t));
  const oldest = ctx.now - EVENT_RETENTION_SECONDS;
  const all = ctx.state.events.filter((e) => e.created >= oldest && matches(e.created) && typeMatches(e.type));
  const { data, hasMore } = page(all, params, 'event');
  return renderList('/v1/events', data.map((e) => JSON.parse(e.body) as StripeObject), hasMore);
}
