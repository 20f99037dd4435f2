// GET /v1/payment_intents/search: Stripe's search, eventually consistent as Stripe documents it
// (docs.stripe.com/search: "Don't use search in read-after-write flows where strict consistency is
// necessary. Under normal operating conditions, data is searchable in less than a minute."). A
// PaymentIntent becomes searchable `searchLagMs` after it was created, on the sandbox clock, so a
// caller that trusts a search miss is caught; the list (payment-intents.ts) is read-after-write.
// Simplification: once searchable, an object is found as it is now (Stripe may also lag updates).
//
// The query language subset: clauses `field:'value'` joined by AND, over metadata['key'], status,
// currency and amount (exact). Anything else is refused as Stripe refuses a malformed query (400).

import { invalidParam } from './errors.ts';
import type { OperationContext } from './context.ts';
import type { FormParams } from './form-encoding.ts';
import { renderPaymentIntent } from './objects.ts';
import type { StripeObject } from './objects.ts';
import { assertKnownParams, readExpand, readInteger, readString, required } from './params.ts';
import type { PaymentIntentRecord } from './state.ts';

/** Stripe's "less than a minute" under normal conditions, taken at its bound. */
export const DEFAULT_SEARCH_LAG_MS = 60_000;

const SEARCH_PARAMS = new Set(['query', 'limit', 'page', 'expand']);
const CLAUSE = /^(metadata\['([^']{1,40})'\]|status|currency|amount):'([^']*)'$/;

type Clause = (pi: PaymentIntentRecord) => boolean;

function parseQuery(query: string): Clause[] {
  const parts = query.split(/\s+AND\s+/);
  return parts.map((raw) => {
    const m = CLAUSE.exec(raw.trim());
    if (m === null) throw invalidParam('query', `The search query could not be parsed near '${raw.trim().slice(0, 60)}'. This sandbox supports field:'value' clauses joined by AND.`);
    const [, field, metaKey, value] = m;
    if (metaKey !== undefined) return (pi) => pi.metadata[metaKey] === value;
    if (field === 'status') return (pi) => pi.status === value;
    if (field === 'currency') return (pi) => pi.currency === value;
    return (pi) => String(pi.amount) === value;
  });
}

export function searchPaymentIntents(ctx: OperationContext, params: FormParams): StripeObject {
  assertKnownParams(params, SEARCH_PARAMS);
  const clauses = parseQuery(required(readString(params, 'query'), 'query'));
  const limit = readInteger(params, 'limit', 1, 100) ?? 10;
  const page = readString(params, 'page');
  const offset = page === undefined ? 0 : pageOffset(page);
  const lagSeconds = Math.ceil((ctx.searchLagMs ?? DEFAULT_SEARCH_LAG_MS) / 1000);
  const indexed = [...ctx.state.paymentIntents.values()]
    .filter((pi) => pi.created + lagSeconds <= ctx.now)
    .filter((pi) => clauses.every((c) => c(pi)))
    .sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1));
  const expand = readExpand(params).flatMap((e) => (e.startsWith('data.') ? [e.slice(5)] : []));
  const data = indexed.slice(offset, offset + limit).map((pi) => renderPaymentIntent(pi, ctx.state, expand));
  const more = indexed.length > offset + limit;
  return {
    object: 'search_result',
    data,
    has_more: more,
    next_page: more ? Buffer.from(`offset:${offset + limit}`).toString('base64url') : null,
    url: '/v1/payment_intents/search',
  };
}

function pageOffset(page: string): number {
  const m = /^offset:(\d{1,9})$/.exec(Buffer.from(page, 'base64url').toString('utf8'));
  if (m === null) throw invalidParam('page', 'Invalid page token.');
  return Number(m[1]);
}
