// The reliability contract (architecture §10), checked after quiescence against the database and
// the sandboxes' own ledgers. Pure: data in, violations out — each names the payment and why.

import { isLegalEdge, isPaymentState, REVERSAL_EDGES, RESTING_STATES, TERMINAL_STATES } from '../src/core/states.ts';
import type { Exchange, Misbehaviour } from './driver.ts';
import type { ModificationRow, OutboxRow, RunData, SandboxEntry } from './run-data.ts';

export const INVARIANTS = [
  'no_double_charge', 'failover_proof', 'legal_edges', 'amounts', 'termination', 'idempotency', 'outbox', 'webhook_auth', 'captured_after_authentication', 'customer_deadline',
  // Checked apart, by scanning the gateway (chaos/card-data.ts): no card number or code outside the vault.
  'card_data_contained',
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  readonly invariant: Invariant;
  readonly paymentId: string | null;
  readonly detail: string;
}

export interface DriverFacts {
  readonly exchanges: readonly Exchange[];
  readonly misbehaviours: readonly Misbehaviour[];
  readonly forgedEvents: readonly string[];
}

/** A payment seen waiting for its customer past expires_at with no fence in progress, while the run settled (chaos/customer-deadline.ts). */
export interface OverdueSighting {
  readonly paymentId: string;
  readonly detail: string;
}

/**
 * Money the provider holds for the customer on this entry: an authorization not cancelled and not
 * captured, or captured money not refunded (a release refund gives an automatic-capture approval back).
 */
const charged = (e: SandboxEntry): boolean => e.captured > e.refunded || (e.captured === 0 && e.authorized > 0 && !e.cancelled);

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of items) {
    const k = key(x);
    const list = m.get(k);
    if (list === undefined) m.set(k, [x]);
    else list.push(x);
  }
  return m;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** Seconds of an ISO time or Date, floored: the Stripe sandbox keeps whole seconds, so both sides are compared as such. */
const seconds = (t: string | Date): number => Math.floor((typeof t === 'string' ? Date.parse(t) : t.getTime()) / 1000);

/** A row published this long ago with no job in BullMQ has lost it (the relay republishes after 30 s). */
const JOB_LOST_AFTER_S = 60;

/** Why a pending row has no live job (null: it has one, or none was looked up). */
function strandedJob(o: OutboxRow): string | null {
  if (o.job === null) return null;
  if (o.job.state === 'failed') return `is pending without a live job: its job ob_${o.id} is in BullMQ's failed set (${(o.job.failedReason ?? 'no reason').slice(0, 160)}), and nothing runs it again`;
  if (o.job.state === 'unknown' && o.published_s_ago !== null && o.published_s_ago > JOB_LOST_AFTER_S) {
    return `is pending without a live job: published ${Math.round(o.published_s_ago)} s ago and no job holds it`;
  }
  return null;
}

export function checkInvariants(data: RunData, driver: DriverFacts, overdue: readonly OverdueSighting[] = []): Violation[] {
  const out: Violation[] = [];
  const v = (invariant: Invariant, paymentId: string | null, detail: string): void => {
    out.push({ invariant, paymentId, detail });
  };
  const attemptById = new Map(data.attempts.map((a) => [a.id, a]));
  const attemptsOf = groupBy(data.attempts, (a) => a.payment_id);
  // Only the sandbox entries of this run's attempts (a sandbox may have served earlier runs).
  const entries = data.sandbox.filter((e) => attemptById.has(e.reference));
  const entriesOfPayment = groupBy(entries, (e) => attemptById.get(e.reference)!.payment_id);
  const capturesOf = groupBy(data.captures, (c) => c.payment_id);
  const refundsOf = groupBy(data.refunds, (r) => r.payment_id);
  const transitionsOf = groupBy(data.transitions, (t) => t.payment_id);

  for (const p of data.payments) {
    const attempts = [...(attemptsOf.get(p.id) ?? [])].sort((a, b) => a.no - b.no);
    const sandbox = entriesOfPayment.get(p.id) ?? [];
    const live = sandbox.filter(charged);

    // 1. At most one live authorization across all providers, and none for an approval the payment
    // released (a late or partial approval given back): after quiescence a release is confirmed by
    // the provider, or the payment is parked for a person with a discrepancy.
    const parkedHere = p.state === 'needs_review' || data.openDiscrepancies.has(p.id);
    for (const a of attempts) {
      if (a.release === null || parkedHere) continue;
      const held = sandbox.filter((e) => e.reference === a.id && charged(e));
      if (held.length > 0) v('no_double_charge', p.id, `attempt ${a.no} (${a.connector}) is ${a.status} with release ${a.release.no} ${a.release.status}, but the provider still holds ${held.map((e) => `${e.id} (${e.status}, authorized ${e.authorized}, captured ${e.captured}, refunded ${e.refunded})`).join('; ')}`);
    }
    // An approval the gateway is releasing whose release the provider refused past the bound is
    // parked for a person with release_failed: the design's outcome, which the operator settles.
    const releaseParked = (a: (typeof attempts)[number]): boolean => parkedHere && a.release?.status === 'review';
    if (live.length > 1 && !attempts.some(releaseParked)) v('no_double_charge', p.id, `${live.length} live authorizations at the providers: ${live.map((e) => `${e.account} ${e.id} (${e.status}, authorized ${e.authorized}, captured ${e.captured})`).join('; ')}`);
    // An attempt given up with a proof (failed over from, or declined) and nothing released holds no
    // money. Money there while another attempt of the payment was authorized is the customer charged
    // twice, even once the kept one is refunded or the late one is captured (an authorization Adyen
    // completed after acknowledging our technical cancel, never released: issue 41 §5).
    else if (!parkedHere) {
      for (const a of attempts) {
        if (a.proof === null || a.release !== null) continue;
        const held = sandbox.filter((e) => e.reference === a.id && charged(e));
        const other = sandbox.filter((e) => e.reference !== a.id && e.authorized > 0);
        if (held.length > 0 && other.length > 0) {
          v('no_double_charge', p.id, `attempt ${a.no} (${a.connector}) was given up with proof ${a.proof}, but the provider holds ${held.map((e) => `${e.id} (${e.status}, authorized ${e.authorized}, captured ${e.captured}, refunded ${e.refunded})`).join('; ')}, while ${other.map((e) => `${e.account} ${e.id}`).join(', ')} authorized the payment too`);
        }
      }
    }

    // 2. No attempt n+1 without a not-charged proof for every earlier attempt — recorded, and true at the provider.
    const last = attempts[attempts.length - 1];
    for (const a of attempts) {
      if (a === last) continue;
      if (a.proof === null) v('failover_proof', p.id, `attempt ${a.no} (${a.connector}, ${a.status}) has no not-charged proof, yet attempt ${a.no + 1} exists`);
      const chargedThere = sandbox.filter((e) => e.reference === a.id && charged(e));
      if (chargedThere.length > 0 && !releaseParked(a)) v('failover_proof', p.id, `attempt ${a.no} was failed over with proof ${a.proof ?? 'none'}, but ${a.connector} holds ${chargedThere.map((e) => `${e.id} (${e.status})`).join(', ')}`);
      // A refusal says the request never reached the provider: an authorization there (released
      // since, so not charged now) shows the proof was false when it was taken. A fence may cancel
      // an authorization it finds, and a partial approval is declined and released, so their proofs
      // are judged by what is charged alone.
      const authorizedThere = sandbox.filter((e) => e.reference === a.id && e.authorized > 0 && !charged(e));
      if (a.proof === 'not_sent' && authorizedThere.length > 0) {
        v('failover_proof', p.id, `attempt ${a.no} was failed over with proof ${a.proof}, but ${a.connector} had authorized it (${authorizedThere.map((e) => `${e.id}, ${e.status}`).join('; ')}): the proof was false`);
      }
    }

    // An abandoned customer's attempt is proven uncharged by its confirmed cancel (issue 27): the
    // provider must say cancelled (or the approval was released since), whatever came after.
    for (const a of attempts) {
      if (a.proof !== 'fenced' || a.authentication?.stage !== 'abandoned' || a.release !== null) continue;
      const open = sandbox.filter((e) => e.reference === a.id && !e.cancelled);
      if (open.length > 0) v('failover_proof', p.id, `attempt ${a.no} (${a.connector}) was abandoned with proof fenced, but the provider never cancelled it: ${open.map((e) => `${e.id} (${e.status}, authorized ${e.authorized})`).join('; ')}`);
    }

    // 3. Legal edges only, a continuous log, terminal states left only by the reversal edges.
    let state = 'created';
    let version: number | null = null;
    // Applied rows only: they are written under the version lock, so their ids follow commit order;
    // an ignored row takes no lock and may interleave.
    for (const t of transitionsOf.get(p.id) ?? []) {
      if (t.outcome !== 'applied') continue;
      if (t.from_state !== state) v('legal_edges', p.id, `transition ${t.id} starts from ${t.from_state} but the payment was ${state} (a lost update)`);
      if (version !== null && t.version !== version + 1) v('legal_edges', p.id, `transition ${t.id} wrote version ${t.version} after ${version}`);
      version = t.version;
      const [from, to] = [t.from_state, t.to_state];
      if (from !== to) {
        if (!isPaymentState(from) || !isPaymentState(to) || !isLegalEdge(from, to)) v('legal_edges', p.id, `transition ${t.id}: ${from} -> ${to} is not a legal edge`);
        else if (TERMINAL_STATES.has(from) && !REVERSAL_EDGES.some(([a, b]) => a === from && b === to)) v('legal_edges', p.id, `transition ${t.id} left terminal ${from} for ${to}`);
      }
      state = to;
    }
    if (state !== p.state && (transitionsOf.get(p.id) ?? []).length > 0) v('legal_edges', p.id, `the log ends in ${state} but the payment is ${p.state}`);

    // 4. Amounts: gateway rows agree with themselves and with the provider.
    const captures = capturesOf.get(p.id) ?? [];
    const refunds = refundsOf.get(p.id) ?? [];
    const succeeded = (xs: readonly ModificationRow[]): number => sum(xs.filter((x) => x.status === 'succeeded').map((x) => x.amount));
    if (p.amount_captured > p.amount_authorized) v('amounts', p.id, `captured ${p.amount_captured} > authorized ${p.amount_authorized}`);
    if (p.amount_refunded > p.amount_captured) v('amounts', p.id, `refunded ${p.amount_refunded} > captured ${p.amount_captured}`);
    // Automatic capture captures with the authorization: no capture rows.
    if (captures.length > 0 && succeeded(captures) !== p.amount_captured) v('amounts', p.id, `succeeded captures sum to ${succeeded(captures)}, the payment says ${p.amount_captured} captured`);
    if (succeeded(refunds) !== p.amount_refunded) v('amounts', p.id, `succeeded refunds sum to ${succeeded(refunds)}, the payment says ${p.amount_refunded} refunded`);
    // Every refund, when accepted, fit in what was captured minus the refunds still standing then.
    for (const r of refunds) {
      const standing = refunds.filter((q) => q.no < r.no && !((q.status === 'failed' || q.status === 'reversed') && q.updated_at <= r.created_at));
      // What was captured when it was accepted: a capture the scheme reversed since (late_reversal) counted then.
      const everCaptured = sum(captures.filter((c) => c.status === 'succeeded' || c.status === 'reversed').map((c) => c.amount));
      if (sum(standing.map((q) => q.amount)) + r.amount > Math.max(p.amount_captured, everCaptured)) {
        v('amounts', p.id, `refund ${r.no} of ${r.amount} was accepted with ${sum(standing.map((q) => q.amount))} already refunded or pending of ${p.amount_captured} captured`);
      }
    }
    // A payment parked for a person or for reconciliation (needs_review, or an open discrepancy such as
    // a refund unresolved after every resend) is compared with the provider after reconciliation, not here.
    const parked = data.openDiscrepancies.has(p.id);
    if (p.state !== 'needs_review' && !parked) {
      // The payment's amounts are those of the attempt it kept; a released approval is checked above (1).
      const releasedIds = new Set(attempts.filter((a) => a.release !== null).map((a) => a.id));
      const kept = sandbox.filter((e) => !releasedIds.has(e.reference));
      const providerCaptured = sum(kept.map((e) => e.captured));
      const providerRefunded = sum(kept.map((e) => e.refunded));
      if (providerCaptured !== p.amount_captured) v('amounts', p.id, `the gateway says ${p.amount_captured} captured, the providers ${providerCaptured}`);
      if (providerRefunded !== p.amount_refunded) v('amounts', p.id, `the gateway says ${p.amount_refunded} refunded, the providers ${providerRefunded}`);
      const holds = p.state === 'authorized' || p.state === 'captured';
      // A capture the scheme rejected (late_reversal) consumed the authorization: it holds nothing though its entry still shows it.
      const captureFailed = captures.some((c) => c.status === 'reversed');
      if (!holds && !captureFailed && live.some((e) => e.captured === 0 && !releasedIds.has(e.reference))) v('amounts', p.id, `the payment is ${p.state}, but an authorization stands at the provider`);
      if (p.state === 'authorized' && live.length === 0) v('amounts', p.id, 'the payment is authorized, but no provider holds an authorization');
    }

    // 5. Termination: resting, or parked for a person — nothing in flight.
    if (!RESTING_STATES.has(p.state as never)) v('termination', p.id, `still ${p.state} after quiescence`);
    // A refund whose outcome stayed unknown through every resend is parked for reconciliation (an open discrepancy).
    for (const m of [...captures, ...refunds]) if ((m.status === 'requested' || m.status === 'pending') && !parked) v('termination', p.id, `${m.id} still ${m.status} after quiescence`);
    for (const a of attempts) if (a.status === 'releasing' && !parked && p.state !== 'needs_review') v('termination', p.id, `attempt ${a.no} still releasing after quiescence`);

    // 9. Nothing captured before the customer completed authentication at the provider: not by the
    // provider (its own record), not in the gateway's ledger, and no capture requested of it. The
    // provider's clock is the one that saw the completion; the gateway learns of it only afterwards.
    for (const a of attempts) {
      for (const e of sandbox.filter((x) => x.reference === a.id && x.authentication !== undefined)) {
        const auth = e.authentication!;
        const completedAt = auth.outcome === 'completed' && auth.completed_at !== null ? seconds(auth.completed_at) : null;
        const what = completedAt === null ? `the customer ${auth.outcome === 'failed' ? 'failed' : 'never completed'} authentication at ${e.account}` : `the customer completed authentication at ${auth.completed_at}`;
        if (e.captured > 0 && completedAt === null) v('captured_after_authentication', p.id, `attempt ${a.no}: ${e.account} captured ${e.captured} on ${e.id}, but ${what}`);
        for (const l of data.ledgerCaptures.filter((x) => x.attempt_id === a.id)) {
          if (completedAt === null || seconds(l.created_at) < completedAt) v('captured_after_authentication', p.id, `attempt ${a.no}: the ledger booked a capture of ${l.amount} at ${l.created_at.toISOString()}, but ${what}`);
        }
        if (a === last) {
          for (const c of captures) {
            if (completedAt === null || seconds(c.created_at) < completedAt) v('captured_after_authentication', p.id, `attempt ${a.no}: ${c.id} (${c.amount}, ${c.status}) was requested at ${c.created_at.toISOString()}, but ${what}`);
          }
        }
      }
    }

    // 10. No payment waits for its customer past expires_at after quiescence: the deadline's cancel
    // has settled it (failed authentication_abandoned, or parked for review).
    const current = last?.authentication;
    if (p.state === 'requires_action' && current?.stage === 'awaiting_customer' && current.expiresAt !== null && Date.parse(current.expiresAt) < data.readAt.getTime()) {
      v('customer_deadline', p.id, `still requires_action after quiescence, ${Math.round((data.readAt.getTime() - Date.parse(current.expiresAt)) / 1000)} s past expires_at ${current.expiresAt}`);
    }

    // 7. One execution per effect at the provider: one provider payment per attempt. A Stripe
    // PaymentIntent created and never confirmed holds no money and is never charged (a prepare,
    // which the execution-time retention check lets go out again, re-run after the provider forgot
    // its key: key_expiry runs keep keys 20 s); only the ones sent for authorization count.
    const sentForAuthorization = sandbox.filter((e) => !(e.authorized === 0 && (e.status === 'requires_confirmation' || e.status === 'requires_payment_method')));
    for (const [ref, list] of groupBy(sentForAuthorization, (e) => e.reference)) {
      if (list.length > 1) v('outbox', p.id, `attempt ${attemptById.get(ref)?.no ?? ref} was executed ${list.length} times at ${list[0]!.account}: ${list.map((e) => e.id).join(', ')}`);
    }
  }
  for (const [id, detail] of data.ledgerProblems.map((l) => [l.id, l.detail] as const)) v('amounts', id.startsWith('pay_') ? id : null, `ledger: ${detail}`);

  // 7. Every outbox row of the run's payments done, and no row pending without a live job: a row
  // whose job is in BullMQ's failed set, or that was published long ago and has no job, waits for
  // ever unless the relay recognises it (issue 41). Webhook jobs' rows carry no payment: only that.
  for (const o of data.outbox) {
    if (o.status === 'done' || (o.status === 'pending' && o.future)) continue;
    const stranded = o.status === 'pending' ? strandedJob(o) : null;
    if (o.payment_id === null && stranded === null) continue;
    const why = stranded ?? `is ${o.status}${o.last_error === null ? '' : `: ${o.last_error.slice(0, 160)}`}`;
    v('outbox', o.payment_id, `outbox row ${o.id} (${o.kind}) ${why}`);
  }

  // 8. State changes from webhooks only from verified events, each about the object it changed.
  const verified = new Set(data.inbound.filter((i) => i.verified).map((i) => i.provider_event_id));
  const forged = new Set(driver.forgedEvents);
  for (const t of data.transitions) {
    if (t.origin !== 'webhook' || t.outcome !== 'applied') continue;
    const eventId = t.raw_provider?.providerEventId;
    if (eventId === undefined || !verified.has(eventId) || forged.has(eventId)) v('webhook_auth', t.payment_id, `transition ${t.id} applied event ${eventId ?? '(none)'} that was never verified`);
    const f = t.input.fact;
    const ref = t.raw_provider?.modificationRef ?? null;
    const target = f?.captureId !== undefined ? data.captures.find((c) => c.id === f.captureId) : f?.refundId !== undefined ? data.refunds.find((r) => r.id === f.refundId) : undefined;
    if (target !== undefined && ref !== null && target.provider_ref !== null && target.provider_ref !== ref) {
      v('webhook_auth', t.payment_id, `transition ${t.id} settled ${target.id} (provider ref ${target.provider_ref}) with an event about ${ref}: a stale event applied to another object`);
    }
  }
  // The reference the provider gave each capture or refund when the worker sent it: a webhook that
  // settles the object must be about that reference.
  const sentRef = new Map<string, string>();
  for (const t of data.transitions) {
    const ref = t.input.ref;
    const answer = t.input.outcome?.providerRef;
    // Only answers that name the modification (an unknown answer may carry the payment's reference).
    const named = t.input.outcome?.kind === 'pending' || t.input.outcome?.kind === 'succeeded';
    if (t.origin !== 'worker' || ref === undefined || answer === undefined || !named) continue;
    const id = ref.captureId ?? ref.refundId;
    if (id !== undefined && !sentRef.has(id)) sentRef.set(id, answer);
  }
  for (const t of data.transitions) {
    if (t.origin !== 'webhook' || t.outcome !== 'applied') continue;
    const f = t.input.fact;
    const id = f?.captureId ?? f?.refundId;
    const eventRef = t.raw_provider?.modificationRef ?? null;
    const sent = id === undefined ? undefined : sentRef.get(id);
    // Like with like: Stripe answers a capture with the PaymentIntent and reports it on the charge.
    const kind = (r: string): string => (r.includes('_') ? r.slice(0, r.indexOf('_')) : '');
    if (id !== undefined && sent !== undefined && eventRef !== null && eventRef !== sent && kind(eventRef) === kind(sent)) {
      v('webhook_auth', t.payment_id, `transition ${t.id} settled ${id} (sent as ${sent}) with an event about ${eventRef}: an event for another object applied`);
    }
  }
  for (const [ref, list] of groupBy([...data.captures, ...data.refunds].filter((m) => m.provider_ref !== null), (m) => m.provider_ref!)) {
    if (list.length > 1) v('webhook_auth', list[0]!.payment_id, `${list.map((m) => m.id).join(' and ')} share the provider reference ${ref}`);
  }
  for (const i of data.inbound) if (!i.verified && i.outcome === 'applied') v('webhook_auth', i.payment_id, `unverified event ${i.provider_event_id ?? '?'} marked applied`);

  // 6. Idempotency: every final answer for one key is the first one, byte for byte.
  for (const [key, list] of groupBy(driver.exchanges, (e) => `${e.merchant}\u0000${e.key}`)) {
    const first = list[0]!;
    for (const e of list.slice(1)) {
      if (e.status !== first.status || e.body !== first.body) v('idempotency', null, `key ${key.split('\u0000')[1]} answered ${first.status} then ${e.status}${e.body === first.body ? '' : ' with another body'}`);
    }
  }
  for (const m of driver.misbehaviours) v(m.invariant, m.paymentId, `plan #${m.planIndex}: ${m.detail}`);
  // 10 (while settling): waiting past expires_at with no fence in progress, seen at a poll.
  for (const o of overdue) v('customer_deadline', o.paymentId, o.detail);
  return out;
}
