// Reconciliation, the pure half: one connector account's provider records × our payments (with
// their attempts, captures, refunds and disputes) × our unapplied inbox rows → findings. No I/O:
// run.ts loads, this decides, run.ts stores and applies. Only what the provider is authoritative
// on and that step() can take safely (a capture or refund we asked for and never heard back
// about) carries an input to apply; everything else is for an operator.

import type { ReconciliationRecord } from '../connectors/contract.ts';
import type { PaymentInput } from '../core/inputs.ts';
import type { Attempt, Payment } from '../core/payment.ts';
import type { DiscrepancyFacts } from '../store/schema.ts';

export const DISCREPANCY_CATEGORIES = ['missed_notification', 'unapplied_event', 'provider_side_change', 'no_counterpart', 'amount_mismatch', 'missing_report'] as const;
export type DiscrepancyCategory = (typeof DISCREPANCY_CATEGORIES)[number];

export interface Finding {
  readonly category: DiscrepancyCategory;
  readonly paymentId: string | null;
  readonly attemptId: string | null;
  /** What the finding is about at the provider (a PaymentIntent / pspReference, or `inbox:<id>`); part of the dedupe key. */
  readonly providerRef: string;
  /** Which side of the reference (authorization, capture:<id>, refund, dispute…): several findings may share one reference. */
  readonly aspect: string;
  readonly detail: string;
  /**
   * The provider-side facts the finding rests on (amounts, status). A resolved finding whose key is
   * found again reopens only when these differ from the ones recorded when it was resolved.
   */
  readonly provider: DiscrepancyFacts;
  /** Our side of it (shown with the finding, updated on a re-run; not compared on reopening). */
  readonly ours: DiscrepancyFacts;
  /** Set only when the fix is safe to apply through transition() with origin 'reconcile'. */
  readonly apply?: { readonly input: PaymentInput; readonly attemptId: string };
}

/** A verified inbox row that never got applied (dead-lettered, or pending past the grace period). */
export interface UnappliedInboxRow {
  readonly id: number;
  readonly paymentId: string | null;
  readonly attemptId: string | null;
  readonly providerRef: string | null;
  readonly rawType: string;
  readonly outcome: string;
  readonly reason: string | null;
}

export interface CompareInput {
  readonly account: string;
  readonly records: readonly ReconciliationRecord[];
  /**
   * Our payments with an attempt on this account that the window concerns: created in it, changed
   * in it, with a capture or refund in flight, or named by one of the records.
   */
  readonly payments: readonly Payment[];
  /** The window's start: an attempt created before it may have had no activity in the window, so its missing record is no finding. */
  readonly windowFrom: Date;
  /** Payment id → provider references of the disputes we already know about. */
  readonly disputes: ReadonlyMap<string, readonly string[]>;
  readonly unapplied: readonly UnappliedInboxRow[];
  /**
   * Attempts created at or after this instant are not expected in the provider's records yet
   * (the connector's reconciliationDelayMs): their absence is not a finding.
   */
  readonly visibleBefore: Date;
}

export interface CompareResult {
  /** Provider records and our attempts looked at. */
  readonly checked: number;
  readonly findings: readonly Finding[];
}

const inFlight = (s: string): boolean => s === 'requested' || s === 'pending';

/**
 * The attempt the payment's own amounts (captures, refunds) belong to: the one it kept — authorized,
 * or released by the merchant's void or the hold's expiry. An attempt whose approval we did not
 * keep has a release record instead and is compared with that (compareRelease).
 */
function keptAttempt(p: Payment): Attempt | undefined {
  return p.attempts.find((a) => (a.release ?? null) === null && (a.status === 'authorized' || a.status === 'releasing' || a.status === 'released'));
}

/**
 * An approval we did not keep, against its own provider record: once its release is confirmed the
 * provider must hold nothing for it (captured − refunded); a release still in flight that the
 * provider shows done is a missed notification, applied as the release's confirmation.
 */
function compareRelease(p: Payment, a: Attempt, r: ReconciliationRecord): Finding[] {
  const release = a.release!;
  const base = { paymentId: p.id, attemptId: a.id, providerRef: r.providerRef, aspect: `release:${release.no}` };
  const held = r.captured - r.refunded;
  // The provider's side the finding rests on (a reopened finding compares these), and ours.
  const facts = { provider: { status: r.status, captured: r.captured, refunded: r.refunded, currency: r.currency }, ours: { release: release.status, kind: release.kind, amount: release.amount } };
  if (release.status === 'succeeded' && held > 0) {
    return [{ ...base, ...facts, category: 'no_counterpart', detail: `release ${release.no} (${release.kind}) of attempt ${a.no} is confirmed here, but the provider still holds ${held} ${r.currency} for it` }];
  }
  const inFlightRelease = release.status === 'requested' || release.status === 'pending';
  if (inFlightRelease && release.kind === 'refund' && r.captured > 0 && held === 0) {
    return [{
      ...base, ...facts, category: 'missed_notification', detail: `release ${release.no} (refund of ${release.amount}) of attempt ${a.no} is done at the provider; its notification never arrived`,
      apply: { input: { type: 'provider_fact', fact: { fact: 'release_succeeded', attemptId: a.id } }, attemptId: a.id },
    }];
  }
  if (release.status === 'review' && held > 0) {
    return [{ ...base, ...facts, category: 'provider_side_change', detail: `release of attempt ${a.no} failed; the provider holds ${held} ${r.currency} for an approval the payment did not keep` }];
  }
  return [];
}

/** Attempts the provider should know about: we hold a reference, or we believe money moved. */
function expectedAtProvider(a: Attempt): boolean {
  return a.status === 'authorized' || (a.providerRef !== null && a.status !== 'declined' && a.status !== 'abandoned');
}

function compareAmounts(p: Payment, a: Attempt, r: ReconciliationRecord, knownDisputes: readonly string[]): Finding[] {
  const base = { paymentId: p.id, attemptId: a.id, providerRef: r.providerRef };
  const out: Finding[] = [];
  const status = r.status;
  // Before any capture the provider's `authorized` is the measure; after one, Stripe's shrinks to
  // the captured amount on a final partial capture, so the authorization's own amount is.
  const providerAuthorized = r.captured === 0 ? r.authorized : r.amount;
  const comparable = a.amountAuthorized > 0 && (r.authorized > 0 || r.captured > 0);
  if (r.currency !== p.currency || (comparable && providerAuthorized !== a.amountAuthorized)) {
    out.push({
      ...base, aspect: 'authorization', category: 'amount_mismatch', detail: `provider authorized ${providerAuthorized} ${r.currency}, we hold ${a.amountAuthorized} ${p.currency}`,
      provider: { status, authorized: providerAuthorized, currency: r.currency }, ours: { authorized: a.amountAuthorized, currency: p.currency },
    });
    return out; // amounts in another currency or of another size make the comparisons below meaningless
  }
  if ((a.release ?? null) !== null) return [...out, ...compareRelease(p, a, r)];
  // Each attempt is compared with its own amounts: the payment's belong to the attempt it kept.
  if (keptAttempt(p)?.id !== a.id) return out;

  // A capture we hold as succeeded that the provider reports failed (Adyen CAPTURE_FAILED) and we
  // never heard about: the provider is authoritative, and step() reverses it with a compensating
  // posting. The amount comparison below then measures what remains.
  const failedRefs = new Set(r.failedCaptures ?? []);
  let ourCaptured = p.amountCaptured;
  for (const c of p.captures) {
    if (c.status !== 'succeeded' || c.providerRef === null || !failedRefs.has(c.providerRef)) continue;
    ourCaptured -= c.amount;
    out.push({
      ...base, aspect: `capture_failed:${c.id}`, category: 'missed_notification',
      detail: `capture ${c.no} of ${c.amount} (${c.providerRef}) failed at the provider after it succeeded; the CAPTURE_FAILED notification never arrived`,
      provider: { status, failed_capture: c.providerRef }, ours: { captured: p.amountCaptured, capture: c.amount },
      apply: { input: { type: 'provider_fact', fact: { fact: 'capture_reversed', captureId: c.id } }, attemptId: a.id },
    });
  }

  if (r.captured > ourCaptured) {
    const missing = r.captured - ourCaptured;
    const c = p.captures.find((x) => inFlight(x.status) && x.amount === missing);
    out.push(
      c === undefined
        ? { ...base, aspect: 'capture', category: 'provider_side_change', detail: `provider captured ${r.captured}, we captured ${ourCaptured} and asked for nothing matching`, provider: { status, captured: r.captured }, ours: { captured: ourCaptured } }
        : {
          ...base, aspect: `capture:${c.id}`, category: 'missed_notification', detail: `capture ${c.no} of ${c.amount} succeeded at the provider; its notification never arrived`,
          provider: { status, captured: r.captured }, ours: { captured: ourCaptured, capture: c.amount },
          apply: { input: { type: 'provider_fact', fact: { fact: 'capture_succeeded', captureId: c.id } }, attemptId: a.id },
        },
    );
  } else if (r.captured < ourCaptured) {
    out.push({ ...base, aspect: 'capture', category: 'no_counterpart', detail: `we captured ${ourCaptured}, the provider shows ${r.captured}`, provider: { status, captured: r.captured }, ours: { captured: ourCaptured } });
  }

  if (r.refunded > p.amountRefunded) {
    const missing = r.refunded - p.amountRefunded;
    const f = p.refunds.find((x) => inFlight(x.status) && x.amount === missing);
    out.push(
      f === undefined
        ? { ...base, aspect: 'refund', category: 'provider_side_change', detail: `provider refunded ${r.refunded}, we refunded ${p.amountRefunded} and asked for nothing matching`, provider: { status, refunded: r.refunded }, ours: { refunded: p.amountRefunded } }
        : {
          ...base, aspect: `refund:${f.id}`, category: 'missed_notification', detail: `refund ${f.no} of ${f.amount} succeeded at the provider; its notification never arrived`,
          provider: { status, refunded: r.refunded }, ours: { refunded: p.amountRefunded, refund: f.amount },
          apply: { input: { type: 'provider_fact', fact: { fact: 'refund_succeeded', refundId: f.id } }, attemptId: a.id },
        },
    );
  } else if (r.refunded < p.amountRefunded) {
    // A refund only comes back by the issuer's or the provider's doing (returned, failed late).
    // What the provider returned is the fact the finding rests on: a refund returned later (a
    // second one, a larger one) is a new fact even where an operator settled the first.
    const returned = r.refundsReturned ?? p.amountRefunded - r.refunded;
    out.push({
      ...base, aspect: 'refund_returned', category: 'provider_side_change',
      detail: `we refunded ${p.amountRefunded}, the provider shows ${r.refunded}: ${returned} of refunds returned or failed there`,
      // Not the provider's refunded total: a later refund that succeeds changes it without changing this finding.
      provider: { status, returned }, ours: { refunded: p.amountRefunded },
    });
  }

  if (r.disputed === true && knownDisputes.length === 0) {
    out.push({ ...base, aspect: 'dispute', category: 'provider_side_change', detail: 'the provider shows a dispute we were never notified about', provider: { status, disputed: true }, ours: { disputes: 0 } });
  }
  return out;
}

export function compare(input: CompareInput): CompareResult {
  const byRef = new Map(input.records.map((r) => [r.providerRef, r]));
  const byAttempt = new Map(input.records.filter((r) => r.attemptId !== null).map((r) => [r.attemptId, r]));
  const claimed = new Set<string>();
  const findings: Finding[] = [];
  let checked = 0;

  for (const p of input.payments) {
    for (const a of p.attempts) {
      if (a.connector !== input.account || !expectedAtProvider(a)) continue;
      checked++;
      // Our reference first; the attempt id the provider echoes only when we never learned one.
      const r = a.providerRef !== null ? byRef.get(a.providerRef) : byAttempt.get(a.id);
      if (r === undefined) {
        // Only an attempt made in the window must have provider activity in it; an older one in
        // here for something in flight may simply have had none.
        const created = new Date(a.createdAt);
        if (created >= input.windowFrom && created < input.visibleBefore) {
          findings.push({
            category: 'no_counterpart', paymentId: p.id, attemptId: a.id, providerRef: a.providerRef ?? `attempt:${a.id}`, aspect: 'authorization', detail: `attempt ${a.no} is ${a.status} here; the provider has no record of it`,
            provider: { record: false }, ours: { status: a.status, authorized: a.amountAuthorized },
          });
        }
        continue;
      }
      claimed.add(r.providerRef);
      findings.push(...compareAmounts(p, a, r, input.disputes.get(p.id) ?? []));
    }
  }

  // Provider records nobody here claims but that moved money: the provider moved on, we never heard.
  for (const r of input.records) {
    if (claimed.has(r.providerRef)) continue;
    checked++;
    // Rows of every kind count: a record built from a refund or a chargeback alone moved money too.
    if (r.authorized === 0 && r.captured === 0 && r.refunded === 0 && r.disputed !== true && (r.failedCaptures ?? []).length === 0) continue;
    findings.push({
      category: 'missed_notification', paymentId: null, attemptId: r.attemptId, providerRef: r.providerRef, aspect: 'record',
      detail: `provider record ${r.status} (authorized ${r.authorized}, captured ${r.captured}, refunded ${r.refunded} ${r.currency}) matches no attempt of ours`,
      provider: { status: r.status, authorized: r.authorized, captured: r.captured, refunded: r.refunded, currency: r.currency }, ours: {},
    });
  }

  for (const row of input.unapplied) {
    checked++;
    findings.push({
      category: 'unapplied_event', paymentId: row.paymentId, attemptId: row.attemptId, providerRef: `inbox:${row.id}`, aspect: 'event',
      detail: `${row.rawType} (${row.providerRef ?? 'no provider ref'}) received, ${row.outcome}: ${row.reason ?? 'not applied'}`,
      provider: { event: row.rawType }, ours: { outcome: row.outcome },
    });
  }
  return { checked, findings };
}

export function dedupeKey(f: Pick<Finding, 'category' | 'paymentId' | 'providerRef' | 'aspect'>): string {
  return `${f.category}:${f.paymentId ?? '-'}:${f.providerRef}:${f.aspect}`;
}
