// What the provider's records say about each attempt of a payment, shown to an operator before a
// resolution (issue 29) and passed to step() so the money guards can refuse `failed` / `voided`
// while the provider shows an attempt authorised or captured. Stripe: the PaymentIntent, by id or
// by listing those created around the attempt. Adyen has no lookup here: the rows of the daily
// reports we downloaded and the verified notifications we hold for the attempt. An absent record
// proves nothing (reports come a day late, a notification may not have arrived yet).

import { and, asc, eq, or, sql } from 'drizzle-orm';
import type { Connector, NormalizedEvent, ReconciliationRecord } from '../connectors/contract.ts';
import type { ProviderView } from '../core/inputs.ts';
import type { Payment } from '../core/payment.ts';
import { recordsFromStoredReports } from '../reconcile/provider-reports.ts';
import type { Db } from '../store/db.ts';
import { inboundEvents } from '../store/schema.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

export interface AttemptRecords extends ProviderView {
  readonly no: number;
  readonly connector: string;
  /** Where the view comes from: the provider asked now, or what we hold from it. */
  readonly source: 'provider_lookup' | 'reports_and_notifications' | 'none';
  /** One line per record, for people. */
  readonly lines: readonly string[];
}

export const ABSENT_PROVES_NOTHING = 'no record found: an absent record proves nothing (it may be late, or out of reach of this lookup)';

/** captured beats authorized beats not_charged: the strongest thing any report row of the attempt shows (cautious). */
const RANK: Record<ProviderView['shows'], number> = { captured: 4, authorized: 3, not_charged: 2, unknown: 1, nothing_found: 0 };
const strongest = (xs: readonly ProviderView['shows'][]): ProviderView['shows'] => xs.reduce<ProviderView['shows']>((a, b) => (RANK[b] > RANK[a] ? b : a), 'nothing_found');

/** A record's amounts say what the customer sees: captured and not refunded, or still held. */
export function showsOfRecord(r: ReconciliationRecord): ProviderView['shows'] {
  if (r.captured - r.refunded > 0) return 'captured';
  if (r.authorized - r.captured > 0 && !/cancel/i.test(r.status)) return 'authorized';
  if (r.captured > 0 || /cancel|refused|requires_payment_method|declined/i.test(r.status)) return 'not_charged';
  return 'unknown';
}

const recordLine = (r: ReconciliationRecord): string =>
  `${r.providerRef} ${r.status}: authorized ${r.authorized}, captured ${r.captured}, refunded ${r.refunded} ${r.currency}`;

/**
 * What the verified notifications we hold say, folded in the order received: approved (captured
 * at once under automatic capture), captured, refunded, cancelled. A later cancellation or a
 * refund of it all means the customer holds nothing any more. A cancellation counts for the payment
 * it names: a technical cancel of a reference Adyen had not seen names none, and an authorization
 * that was in flight then may have completed after it (issue 41 §5).
 */
export function showsOfEvents(events: readonly NormalizedEvent[], captureMethod: Payment['captureMethod']): ProviderView['shows'] {
  let authorized = 0;
  let captured = 0;
  let refunded = 0;
  const cancelledRefs = new Set<string | null>();
  let approvedRef: string | null = null;
  let declined = false;
  for (const e of events) {
    if (e.kind === 'authorization' && e.outcome.kind === 'succeeded') {
      authorized = Math.max(authorized, e.outcome.amount);
      approvedRef = e.outcome.providerRef || e.providerRef;
      if (captureMethod === 'automatic') captured = Math.max(captured, e.outcome.amount);
    } else if (e.kind === 'authorization' && e.outcome.kind === 'declined') declined = true;
    else if (e.kind === 'capture_succeeded') captured += e.amount;
    else if (e.kind === 'capture_reversed' || e.kind === 'capture_failed') captured = Math.max(0, captured - e.amount);
    else if (e.kind === 'refund_succeeded') refunded += e.amount;
    else if (e.kind === 'refund_total') refunded = Math.max(refunded, e.amount);
    else if (e.kind === 'refund_reversed' || e.kind === 'refund_failed') refunded = Math.max(0, refunded - e.amount);
    else if (e.kind === 'void_succeeded' || e.kind === 'fence_confirmed') cancelledRefs.add(e.providerRef);
  }
  const cancelled = cancelledRefs.size > 0 && (approvedRef === null || cancelledRefs.has(approvedRef));
  if (captured - refunded > 0) return 'captured';
  if (captured > 0 || cancelled || declined) return 'not_charged';
  return authorized > 0 ? 'authorized' : 'unknown';
}

async function fromLookup(connector: Connector & Required<Pick<Connector, 'lookupAttempt'>>, a: Payment['attempts'][number]): Promise<Pick<AttemptRecords, 'shows' | 'lines' | 'detail'>> {
  try {
    const r = await connector.lookupAttempt({ attemptId: a.id, providerRef: a.providerRef, createdAt: new Date(a.createdAt) });
    if (r === null) return { shows: 'nothing_found', lines: [ABSENT_PROVES_NOTHING] };
    return { shows: showsOfRecord(r), lines: [recordLine(r)], detail: `${r.providerRef} ${r.status}` };
  } catch (err) {
    return { shows: 'unknown', lines: [`the provider could not be asked: ${safeErrorText(err)}`] };
  }
}

/** The notifications when we hold any (they are fresher), else the report rows (a day late). */
async function fromHeld(db: Db, connector: Connector, p: Payment, a: Payment['attempts'][number], now: Date): Promise<Pick<AttemptRecords, 'shows' | 'lines' | 'detail'>> {
  const lines: string[] = [];
  const shows: ProviderView['shows'][] = [];
  const window = { from: new Date(new Date(a.createdAt).getTime() - 86_400_000), to: new Date(now.getTime() + 86_400_000) };
  const stored = await recordsFromStoredReports(db, connector.account, connector, window);
  for (const r of stored?.records ?? []) {
    if (r.attemptId !== a.id && (a.providerRef === null || r.providerRef !== a.providerRef)) continue;
    shows.push(showsOfRecord(r));
    lines.push(`report: ${recordLine(r)}`);
  }
  const byRef = a.providerRef === null ? [] : [sql`${inboundEvents.event}->>'providerRef' = ${a.providerRef}`];
  const events = await db
    .select({ event: inboundEvents.event, receivedAt: inboundEvents.receivedAt })
    .from(inboundEvents)
    .where(and(eq(inboundEvents.connector, connector.account), eq(inboundEvents.verified, true), or(sql`${inboundEvents.event}->>'attemptId' = ${a.id}`, ...byRef)))
    .orderBy(asc(inboundEvents.receivedAt), asc(inboundEvents.id));
  for (const row of events) {
    const e = row.event as NormalizedEvent;
    const outcome = e.kind === 'authorization' ? ` (${e.outcome.kind})` : '';
    lines.push(`notification ${new Date(row.receivedAt).toISOString()}: ${e.rawType}${outcome} ${e.providerRef ?? ''}`.trimEnd());
  }
  if (lines.length === 0) return { shows: 'nothing_found', lines: [`no report row or verified notification held for this attempt; ${ABSENT_PROVES_NOTHING}`] };
  const fromEvents = events.length === 0 ? 'unknown' : showsOfEvents(events.map((r) => r.event as NormalizedEvent), p.captureMethod);
  return { shows: fromEvents !== 'unknown' ? fromEvents : strongest(shows), lines };
}

/** One view per attempt, oldest first. */
export async function providerRecords(db: Db, connectors: ReadonlyMap<string, Connector>, p: Payment, now: Date): Promise<AttemptRecords[]> {
  const out: AttemptRecords[] = [];
  for (const a of p.attempts) {
    const connector = connectors.get(a.connector);
    const base = { attemptId: a.id, no: a.no, connector: a.connector };
    if (connector === undefined) {
      out.push({ ...base, source: 'none', shows: 'unknown', lines: [`connector account ${a.connector} is not configured here`] });
    } else if (connector.lookupAttempt !== undefined) {
      out.push({ ...base, source: 'provider_lookup', ...(await fromLookup(connector as Connector & Required<Pick<Connector, 'lookupAttempt'>>, a)) });
    } else {
      out.push({ ...base, source: 'reports_and_notifications', ...(await fromHeld(db, connector, p, a, now)) });
    }
  }
  return out;
}

/** The views as step() takes them. */
export const asProviderViews = (rs: readonly AttemptRecords[]): ProviderView[] =>
  rs.map((r) => ({ attemptId: r.attemptId, shows: r.shows, ...(r.detail === undefined ? {} : { detail: r.detail }) }));
