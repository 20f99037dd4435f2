// From a verified provider event to what the gateway does with it, decided on the payment as
// loaded: an input for transition(), a dispute record, or nothing (with the reason recorded).
// Pure: the worker loads the payment, this decides, transition() applies — and step() still
// has the last word on stale or duplicate facts.

import type { NormalizedEvent } from '../../connectors/contract.ts';
import type { PaymentInput, ProviderFact } from '../../core/inputs.ts';
import type { Attempt, Capture, Payment, Refund } from '../../core/payment.ts';
import { assertNever } from '../../core/states.ts';
import { releaseRoundNamed } from '../../core/step-release.ts';

export type DisputeEvent = Extract<NormalizedEvent, { kind: 'dispute' }>;

export type EventAction =
  | { readonly kind: 'input'; readonly input: PaymentInput; readonly attemptId: string | null }
  | { readonly kind: 'dispute'; readonly event: DisputeEvent }
  | { readonly kind: 'ignore'; readonly reason: string }
  /** Not decidable yet (two objects match by amount): try again once our own records name it. */
  | { readonly kind: 'retry'; readonly reason: string }
  /**
   * A failure or reversal that arrived before the success it reverses: held, decided again as
   * the payment changes, for at most the hold bound (then a discrepancy with the event attached).
   */
  | { readonly kind: 'hold'; readonly reason: string };

/** More than one capture or refund matches by amount alone: guessing could settle the wrong one. */
export const AMBIGUOUS = 'ambiguous' as const;

/** The one candidate; AMBIGUOUS when several match (their references will tell them apart later). */
function onlyOne<T>(candidates: readonly T[]): T | typeof AMBIGUOUS | undefined {
  return candidates.length > 1 ? AMBIGUOUS : candidates[0];
}

/**
 * Connectors whose capture events echo the cumulative captured amount (Stripe's charge.captured
 * carries amount_captured), not the amount of the one capture (Adyen CAPTURE).
 */
const CUMULATIVE_CAPTURE_ECHO: ReadonlySet<string> = new Set(['stripe']);

type AmountEvent = { readonly amount: number; readonly currency: string; readonly modificationRef: string | null; readonly connectorType: string };

const inFlight = (s: string): boolean => s === 'requested' || s === 'pending';

function byRef<T extends Capture | Refund>(list: readonly T[], ref: string | null): T | undefined {
  return ref === null ? undefined : list.find((x) => x.providerRef === ref);
}

/** The capture an event names: by our recorded modification reference, else by amount when only one matches (see docs/webhooks.md). */
export function captureFor(p: Payment, e: AmountEvent, wanted: 'in_flight' | 'succeeded'): Capture | typeof AMBIGUOUS | undefined {
  const named = byRef(p.captures, e.modificationRef);
  if (named !== undefined) return named;
  if (e.currency !== '' && e.currency !== p.currency) return undefined;
  if (wanted === 'succeeded') return [...p.captures].reverse().find((c) => c.status === 'succeeded' && c.amount === e.amount);
  const increment = CUMULATIVE_CAPTURE_ECHO.has(e.connectorType) ? e.amount - p.amountCaptured : e.amount;
  return onlyOne(p.captures.filter((c) => inFlight(c.status) && c.amount === increment));
}

/**
 * The refund an event names: by our recorded reference, else by amount — in flight only when one
 * refund matches (two equal refunds in flight wait for their references), succeeded the oldest.
 */
export function refundFor(p: Payment, e: AmountEvent, wanted: 'in_flight' | 'succeeded'): Refund | typeof AMBIGUOUS | undefined {
  const named = byRef(p.refunds, e.modificationRef);
  if (named !== undefined) return named;
  if (e.currency !== '' && e.currency !== p.currency) return undefined;
  if (wanted === 'succeeded') return p.refunds.find((r) => r.status === 'succeeded' && r.amount === e.amount);
  return onlyOne(p.refunds.filter((r) => inFlight(r.status) && r.providerRef === null && r.amount === e.amount));
}

function fact(f: ProviderFact, attemptId: string | null = null): EventAction {
  return { kind: 'input', input: { type: 'provider_fact', fact: f }, attemptId };
}

/** The attempt an event is about: the one it names, else the one holding its provider reference. */
export function attemptFor(p: Payment, e: NormalizedEvent): Attempt | undefined {
  if (e.attemptId !== null) {
    const named = p.attempts.find((a) => a.id === e.attemptId);
    if (named !== undefined) return named;
  }
  return e.providerRef === null ? undefined : p.attempts.find((a) => a.providerRef === e.providerRef);
}

/**
 * A void or refund event about an attempt whose approval is being released (or was). It carries
 * what names its round (our reference on the object, the provider's id for it): the core decides by
 * that round, never by whichever is current. A reversal of a round whose success is not known yet
 * arrived before that success: held until it is here (as a merchant refund's is), so the release is
 * booked given back and then taken again, in the provider's order.
 */
function releaseAction(attempt: Attempt, e: NormalizedEvent): EventAction | null {
  if (e.kind !== 'void_succeeded' && e.kind !== 'void_failed' && e.kind !== 'refund_succeeded' && e.kind !== 'refund_failed' && e.kind !== 'refund_reversed') return null;
  const modificationRef = e.modificationRef ?? null;
  const ourRef = e.ourRef ?? null;
  const names = { ...(modificationRef === null ? {} : { providerRef: modificationRef }), ...(ourRef === null ? {} : { reference: ourRef }) };
  if (e.kind === 'void_succeeded' || e.kind === 'refund_succeeded') return fact({ fact: 'release_succeeded', attemptId: attempt.id, ...names }, attempt.id);
  if (e.kind === 'refund_reversed') {
    const r = attempt.release;
    const round = r === null ? null : releaseRoundNamed(attempt, r, names);
    const inFlight = r !== null && round?.kind === 'current' && (r.status === 'requested' || r.status === 'pending');
    if (inFlight) return { kind: 'hold', reason: `${e.rawType}: release ${r.no} of attempt ${attempt.id} reversed before its success is known; held until it is` };
    return fact({ fact: 'release_failed', attemptId: attempt.id, ...names, reversal: true }, attempt.id);
  }
  return fact({ fact: 'release_failed', attemptId: attempt.id, ...names }, attempt.id);
}

/**
 * Events stored in the inbox before issue 32 carry `dispute_opened|won|lost`. An Adyen one names
 * its event code (rawType), so its lifecycle can still decide it; a Stripe one lost the dispute's
 * balance transactions, so it is not applied (reconciliation shows the dispute if it matters).
 */
export function upgradeLegacyDispute(e: NormalizedEvent): NormalizedEvent {
  const legacy = e as unknown as { readonly kind: string; readonly disputeRef?: string; readonly amount?: number; readonly currency?: string; readonly reason?: string | null };
  if (legacy.kind !== 'dispute_opened' && legacy.kind !== 'dispute_won' && legacy.kind !== 'dispute_lost') return e;
  const base = { providerEventId: e.providerEventId, connectorType: e.connectorType, attemptId: e.attemptId, providerRef: e.providerRef, occurredAt: e.occurredAt, rawType: e.rawType };
  if (e.connectorType !== 'adyen' || legacy.disputeRef === undefined) return { ...base, kind: 'ignored' };
  return { ...base, kind: 'dispute', disputeRef: legacy.disputeRef, amount: legacy.amount ?? 0, currency: legacy.currency ?? '', reason: legacy.reason ?? null, fact: { provider: 'adyen', eventCode: e.rawType, disputeStatus: null } };
}

export function actionForEvent(p: Payment, account: string, stored: NormalizedEvent): EventAction {
  const e = upgradeLegacyDispute(stored);
  if (e.kind === 'ignored') return { kind: 'ignore', reason: `${e.rawType}: not an event the gateway acts on` };
  const attempt = attemptFor(p, e);
  if (attempt === undefined) return { kind: 'ignore', reason: `${e.rawType}: names no attempt of payment ${p.id}` };
  // An event verified with one account's secret may only speak about that account's attempts.
  if (attempt.connector !== account) return { kind: 'ignore', reason: `${e.rawType}: attempt ${attempt.id} belongs to ${attempt.connector}, not ${account}` };
  // Events about the release of an approval we do not keep (its void or its refund) settle that
  // release, never the kept attempt's captures, refunds or void.
  if (attempt.status !== 'authorized' && ((attempt.release ?? null) !== null || attempt.status === 'releasing')) {
    const release = releaseAction(attempt, e);
    if (release !== null) return release;
  }
  const kept = attempt.status === 'authorized';
  switch (e.kind) {
    case 'authorization':
      // The inbox keeps a provider's page without its query (storable-event.ts): the page a customer
      // is sent to comes from the answer to our own call or lookup, never from an event.
      if (e.outcome.kind === 'action_required') return { kind: 'ignore', reason: `${e.rawType}: asks for customer action; the page comes from the provider's answer to the attempt's call or lookup` };
      return fact({ fact: 'authorization', attemptId: attempt.id, outcome: e.outcome }, attempt.id);
    case 'fence_confirmed':
      // The payment the cancel reached (Adyen's originalReference), if it names one: the fence proves nothing about any other.
      return fact({ fact: 'fence_confirmed', attemptId: attempt.id, ...(e.providerRef === null ? {} : { providerRef: e.providerRef }) }, attempt.id);
    case 'fence_refused':
      return fact({ fact: e.kind, attemptId: attempt.id }, attempt.id);
    case 'void_succeeded':
    case 'void_failed':
      // A cancellation of an attempt we are fencing is the fence's answer, not a merchant void; so is
      // one of an attempt parked because its fence's answer stayed unknown (it un-parks the payment).
      // It names the payment it cancelled: the fence proves nothing about any other.
      if (attempt.status === 'fencing' || (attempt.status === 'review' && attempt.fenceCalls > 0)) {
        if (e.kind === 'void_failed') return fact({ fact: 'fence_refused', attemptId: attempt.id }, attempt.id);
        return fact({ fact: 'fence_confirmed', attemptId: attempt.id, ...(e.providerRef === null ? {} : { providerRef: e.providerRef }) }, attempt.id);
      }
      return fact({ fact: e.kind }, attempt.id);
    case 'already_done': {
      // "Already cancelled / captured" proves neither outcome of our operation: the success event of
      // the send that did it (or a lookup) settles it. A fence asks again on its own timer, and a
      // release (not kept) waits for its success event.
      if (!kept) return { kind: 'ignore', reason: `${e.rawType}: already ${e.op === 'void' ? 'cancelled' : 'captured'}, about attempt ${attempt.id} in ${attempt.status}; its own success event settles it` };
      if (e.op === 'void') return fact({ fact: 'void_already_done', detail: e.detail }, attempt.id);
      const c = captureFor(p, e, 'in_flight');
      if (c === AMBIGUOUS) return { kind: 'retry', reason: `${e.rawType}: several captures of ${e.amount} in flight; waiting for their references` };
      if (c === undefined) return { kind: 'ignore', reason: `${e.rawType}: already captured, and no capture in flight matches ${e.amount} ${e.currency}` };
      return fact({ fact: 'capture_already_done', captureId: c.id, detail: e.detail }, attempt.id);
    }
    case 'capture_succeeded':
    case 'capture_failed': {
      if (!kept) return { kind: 'ignore', reason: `${e.rawType}: attempt ${attempt.id} is ${attempt.status}, not the attempt that holds the payment` };
      const c = captureFor(p, e, 'in_flight');
      if (c === AMBIGUOUS) return { kind: 'retry', reason: `${e.rawType}: several captures of ${e.amount} in flight; waiting for their references` };
      if (c === undefined) return { kind: 'ignore', reason: `${e.rawType}: no capture in flight matches ${e.amount} ${e.currency}` };
      return e.kind === 'capture_succeeded'
        ? fact({ fact: 'capture_succeeded', captureId: c.id, ...(e.modificationRef === null ? {} : { providerRef: e.modificationRef }) }, attempt.id)
        : fact({ fact: 'capture_failed', captureId: c.id }, attempt.id);
    }
    case 'capture_reversed': {
      if (!kept) return { kind: 'ignore', reason: `${e.rawType}: attempt ${attempt.id} is ${attempt.status}, not the attempt that holds the payment` };
      const c = captureFor(p, e, 'succeeded');
      // Automatic capture made no capture record: the approval captured, and its failure is applied all the same.
      if (c === undefined && p.captureMethod === 'automatic' && p.captures.every((x) => x.providerRef !== e.modificationRef)) {
        return fact({ fact: 'auto_capture_reversed', attemptId: attempt.id, amount: e.amount, providerRef: e.modificationRef ?? '' }, attempt.id);
      }
      // The failure arrived before the success it reverses (the capture is still in flight here): hold it.
      const waiting = c !== undefined && c !== AMBIGUOUS ? c : captureFor(p, e, 'in_flight');
      if (waiting !== undefined && (waiting === AMBIGUOUS || inFlight(waiting.status))) {
        return { kind: 'hold', reason: `${e.rawType}: capture ${waiting === AMBIGUOUS ? `of ${e.amount}` : waiting.id} not succeeded yet; held until it is` };
      }
      if (c === undefined || c === AMBIGUOUS) return { kind: 'ignore', reason: `${e.rawType}: no succeeded capture matches ${e.amount} ${e.currency}` };
      return fact({ fact: 'capture_reversed', captureId: c.id }, attempt.id);
    }
    case 'refund_succeeded': {
      if (!kept) return { kind: 'ignore', reason: `${e.rawType}: attempt ${attempt.id} is ${attempt.status}, not the attempt that holds the payment` };
      const r = refundFor(p, e, 'in_flight');
      if (r === AMBIGUOUS) return { kind: 'retry', reason: `${e.rawType}: several refunds of ${e.amount} in flight; waiting for their references` };
      if (r === undefined) return { kind: 'ignore', reason: `${e.rawType}: no refund in flight matches ${e.amount} ${e.currency}` };
      return fact({ fact: 'refund_succeeded', refundId: r.id, ...(e.modificationRef === null ? {} : { providerRef: e.modificationRef }) }, attempt.id);
    }
    case 'refund_total': {
      // The provider's total names no refund: it settles the one refund in flight whose amount is
      // exactly what the total adds to the refunds succeeded here; anything else waits for the
      // refund events, which name theirs.
      if (!kept) return { kind: 'ignore', reason: `${e.rawType}: attempt ${attempt.id} is ${attempt.status}; its refund events settle its release` };
      if (e.currency !== p.currency) return { kind: 'ignore', reason: `${e.rawType}: total refunded in ${e.currency}, the payment is in ${p.currency}` };
      const known = p.refunds.filter((r) => r.status === 'succeeded').reduce((sum, r) => sum + r.amount, 0);
      const added = e.amount - known;
      if (added <= 0) return { kind: 'ignore', reason: `${e.rawType}: ${e.amount} ${e.currency} refunded in all, ${known} known succeeded here` };
      const r = refundFor(p, { ...e, amount: added, modificationRef: null }, 'in_flight');
      if (r === undefined || r === AMBIGUOUS) return { kind: 'ignore', reason: `${e.rawType}: ${e.amount} ${e.currency} refunded in all adds ${added} to the ${known} known here, which ${r === AMBIGUOUS ? 'several' : 'no'} refund in flight matches; the refund events settle it` };
      return fact({ fact: 'refund_succeeded', refundId: r.id }, attempt.id);
    }
    case 'refund_failed': {
      if (!kept) return { kind: 'ignore', reason: `${e.rawType}: attempt ${attempt.id} is ${attempt.status}, not the attempt that holds the payment` };
      const pending = refundFor(p, e, 'in_flight');
      if (pending === AMBIGUOUS) return { kind: 'retry', reason: `${e.rawType}: several refunds of ${e.amount} in flight; waiting for their references` };
      const r = pending ?? refundFor(p, e, 'succeeded');
      if (r === undefined || r === AMBIGUOUS) return { kind: 'ignore', reason: `${e.rawType}: no refund matches ${e.amount} ${e.currency}` };
      // A refund only fails after it succeeded when the money came back (Stripe marks it failed): a reversal.
      return fact({ fact: r.status === 'succeeded' ? 'refund_reversed' : 'refund_failed', refundId: r.id }, attempt.id);
    }
    case 'refund_reversed': {
      if (!kept) return { kind: 'ignore', reason: `${e.rawType}: attempt ${attempt.id} is ${attempt.status}, not the attempt that holds the payment` };
      const named = byRef(p.refunds, e.modificationRef);
      const r = named !== undefined && named.status !== 'succeeded' ? undefined : refundFor(p, e, 'succeeded');
      if (r === undefined || r === AMBIGUOUS) {
        // The reversal arrived before the success it reverses: hold it until that success is here.
        const waiting = named !== undefined ? (inFlight(named.status) ? named : undefined) : refundFor(p, e, 'in_flight');
        if (waiting !== undefined) return { kind: 'hold', reason: `${e.rawType}: refund ${waiting === AMBIGUOUS ? `of ${e.amount}` : waiting.id} not succeeded yet; held until it is` };
        return { kind: 'ignore', reason: `${e.rawType}: no succeeded refund matches ${e.amount} ${e.currency}` };
      }
      return fact({ fact: 'refund_reversed', refundId: r.id }, attempt.id);
    }
    case 'dispute': {
      // A dispute is about captured money: before its capture is known here, or while a refund of
      // the payment is in flight (the provider may have taken the money back either way), it is
      // held and decided once that state exists — never booked against a guess.
      if (!kept) return { kind: 'ignore', reason: `${e.rawType}: attempt ${attempt.id} is ${attempt.status}, not the attempt that holds the payment` };
      if (p.amountCaptured === 0) return { kind: 'hold', reason: `${e.rawType}: dispute ${e.disputeRef} on payment ${p.id}, whose capture is not known yet; held until it is` };
      const refunding = p.refunds.find((r) => inFlight(r.status));
      if (refunding !== undefined) return { kind: 'hold', reason: `${e.rawType}: dispute ${e.disputeRef} while refund ${refunding.id} is in flight; held until it settles` };
      return { kind: 'dispute', event: e };
    }
    default:
      return assertNever(e, 'event kind');
  }
}
