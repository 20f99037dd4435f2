// Finding a one-call authorization whose answer was lost, before we know its PaymentIntent id:
// the list endpoint over a `created` window around the send, every page, matched on
// metadata.attempt_id. Stripe's list is read-after-write consistent (reconciliation relies on it
// too); its search is eventually consistent (docs.stripe.com/search: "don't use search for
// read-after-write flows"), so a search miss would say nothing and a search hit nothing the list
// does not: the lookup never searches.

import type Stripe from 'stripe';
import type { QueryRequest } from '../contract.ts';
import { recordAttempts } from './attempt-recorder.ts';
import type { AttemptResult } from './attempt-recorder.ts';
import { attemptIdOf } from './transformers.ts';

/** Our clock against Stripe's: the window opens this long before the recorded send. */
export const LOOKUP_CLOCK_SKEW_MS = 5 * 60 * 1000;
/** Past this many pages the window is not read to its end: that is "could not look", never "not found". */
export const LOOKUP_MAX_PAGES = 50;

export type LookupResult =
  | { readonly kind: 'found'; readonly paymentIntent: Stripe.PaymentIntent }
  | { readonly kind: 'not_found'; readonly pages: number }
  | { readonly kind: 'incomplete'; readonly pages: number }
  | { readonly kind: 'failed'; readonly error: unknown; readonly attempts: readonly AttemptResult[] };

export interface LookupOptions {
  readonly pageSize: number;
  /** When the lookup runs (the window's lower bound falls back on it, less the key retention, without a send time). */
  readonly now: Date;
  readonly retentionMs: number;
}

/** Unix seconds of the window's start: the first send, less the clock skew. */
export function lookupWindowStart(sentAt: string | null | undefined, o: Pick<LookupOptions, 'now' | 'retentionMs'>): number {
  const sent = sentAt === null || sentAt === undefined ? Number.NaN : Date.parse(sentAt);
  // No send time recorded: anything our key could still have created.
  const from = Number.isFinite(sent) ? sent - LOOKUP_CLOCK_SKEW_MS : o.now.getTime() - o.retentionMs - LOOKUP_CLOCK_SKEW_MS;
  return Math.floor(from / 1000);
}

export async function findPaymentIntentOfAttempt(stripe: Stripe, req: QueryRequest, o: LookupOptions): Promise<LookupResult> {
  // No upper bound: the object is created by one of our sends, all of them before now, and a
  // sandbox (or Stripe) clock ahead of ours must not hide it.
  const created = { gte: lookupWindowStart(req.sentAt, o) };
  let startingAfter: string | undefined;
  for (let pages = 1; ; pages++) {
    const r = await recordAttempts(() => stripe.paymentIntents.list({ created, limit: o.pageSize, ...(startingAfter !== undefined ? { starting_after: startingAfter } : {}) }));
    if (!r.ok) return { kind: 'failed', error: r.error, attempts: r.attempts };
    // One key per attempt, never resent past its retention: at most one PaymentIntent carries our attempt id.
    const match = r.value.data.find((pi) => attemptIdOf(pi.metadata) === req.attemptId);
    if (match !== undefined) return { kind: 'found', paymentIntent: match };
    const last = r.value.data[r.value.data.length - 1];
    if (!r.value.has_more || last === undefined) return { kind: 'not_found', pages };
    if (pages >= LOOKUP_MAX_PAGES) return { kind: 'incomplete', pages };
    startingAfter = last.id;
  }
}
