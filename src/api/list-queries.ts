// The query parameters of GET /v1/payments, /v1/refunds and /v1/events (declared once: the routes
// parse with these, the OpenAPI document lists them), and what they become for the store.

import { z } from 'zod';
import { MERCHANT_EVENT_TYPES } from '../core/effects.ts';
import type { MerchantEventType } from '../core/effects.ts';
import { isId } from '../core/ids.ts';
import { PAYMENT_STATES, REFUND_STATES } from '../core/states.ts';
import type { EventFilters } from '../store/merchant-event-queries.ts';
import type { PaymentFilters } from '../store/payment-queries.ts';
import type { RefundFilters } from '../store/refund-queries.ts';
import { createdParams, createdRange, many, one, pageParams, pageRequest, parseQuery, queryProblem } from './list-params.ts';
import type { PageRequest } from '../store/keyset-page.ts';
import { currencyCode, shortText, withoutCardNumber } from './request-schemas.ts';

const oneOf = <T extends string>(what: string, values: readonly [T, ...T[]]) =>
  z.enum(values, { error: (iss) => `${JSON.stringify(String(iss.input)).slice(0, 60)} is not a ${what} (one of ${values.join(', ')})` });

const amountBound = z.coerce
  .number({ error: 'must be a whole number of minor units' })
  .int({ error: 'must be a whole number of minor units' })
  .min(0, { error: 'must be at least 0' })
  .max(Number.MAX_SAFE_INTEGER, { error: 'must be a safe integer' });

export const paymentListParams = {
  ...pageParams('payment'),
  status: many(oneOf('payment status', PAYMENT_STATES), 'Any of these statuses; repeat it for more than one (status=authorized&status=captured).'),
  ...createdParams(),
  connector: one(z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, 'must be a connector account name (lower case letters, digits and underscores)'), 'The connector account the payment is on (its resource\'s connector).'),
  currency: one(currencyCode, 'Upper-case ISO 4217 code.'),
  'amount[gte]': one(amountBound, 'Amount at least this (minor units).'),
  'amount[lte]': one(amountBound, 'Amount at most this (minor units).'),
  reference: one(withoutCardNumber(shortText(255)), 'Your reference, exactly.'),
};

export const refundListParams = {
  ...pageParams('refund'),
  payment: one(z.string().refine((s) => isId('payment', s), { message: 'payment must be a payment id' }), 'The refunds of this payment.'),
  status: many(oneOf('refund status', REFUND_STATES), 'Any of these statuses; repeat it for more than one.'),
  ...createdParams(),
};

/** GET /v1/disputes: paging only (no filters yet). */
export const disputeListParams = pageParams('dispute');

/** `payment.*`, `refund.*`, `dispute.*`: what a prefix may be. */
const EVENT_TYPE_PREFIXES = [...new Set(MERCHANT_EVENT_TYPES.map((t) => `${t.slice(0, t.indexOf('.'))}.*`))];

/** One `type` value: an event type, or `prefix.*` for every type under it (expanded here: an index range per type). */
const eventType = z.string().transform((v, ctx): MerchantEventType[] => {
  const prefix = v.endsWith('.*') ? v.slice(0, -1) : null;
  const types = prefix === null ? MERCHANT_EVENT_TYPES.filter((t) => t === v) : MERCHANT_EVENT_TYPES.filter((t) => t.startsWith(prefix));
  if (types.length === 0) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(v).slice(0, 60)} is not an event type or a prefix of one (payment.*, refund.*, dispute.*; types: ${MERCHANT_EVENT_TYPES.join(', ')})` });
    return z.NEVER;
  }
  return types;
}).meta({ description: 'An event type, or payment.* / refund.* / dispute.*', enum: [...MERCHANT_EVENT_TYPES, ...EVENT_TYPE_PREFIXES] });

export const eventListParams = {
  ...pageParams('event'),
  type: many(eventType, 'Any of these types; repeat it for more than one. `payment.*` (refund.*, dispute.*) stands for every type under it.'),
  ...createdParams(),
};

/** How far back GET /v1/events lists; older events stay readable by id. */
export const EVENT_LIST_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

export function paymentListQuery(query: unknown): { filters: PaymentFilters; page: PageRequest } {
  const q = parseQuery(paymentListParams, query);
  const created = createdRange(q);
  const gte = q['amount[gte]'];
  const lte = q['amount[lte]'];
  if (gte !== undefined && lte !== undefined && gte > lte) throw queryProblem([{ path: 'amount[gte]', message: `${gte} is above amount[lte] ${lte}` }]);
  const amount = { ...(gte === undefined ? {} : { gte }), ...(lte === undefined ? {} : { lte }) };
  return {
    page: pageRequest(q),
    filters: {
      ...(q.status === undefined ? {} : { status: q.status }),
      ...(created === undefined ? {} : { created }),
      ...(q.connector === undefined ? {} : { connector: q.connector }),
      ...(q.currency === undefined ? {} : { currency: q.currency }),
      ...(Object.keys(amount).length === 0 ? {} : { amount }),
      ...(q.reference === undefined ? {} : { reference: q.reference }),
    },
  };
}

export function refundListQuery(query: unknown): { filters: RefundFilters; page: PageRequest } {
  const q = parseQuery(refundListParams, query);
  const created = createdRange(q);
  return {
    page: pageRequest(q),
    filters: {
      ...(q.payment === undefined ? {} : { payment: q.payment }),
      ...(q.status === undefined ? {} : { status: q.status }),
      ...(created === undefined ? {} : { created }),
    },
  };
}

export function eventListQuery(query: unknown, now: Date): { filters: EventFilters; page: PageRequest } {
  const q = parseQuery(eventListParams, query);
  const created = createdRange(q);
  return {
    page: pageRequest(q),
    filters: {
      notBefore: new Date(now.getTime() - EVENT_LIST_WINDOW_MS),
      ...(q.type === undefined ? {} : { types: [...new Set(q.type.flat())] }),
      ...(created === undefined ? {} : { created }),
    },
  };
}
