// Applies one inbox event, from its outbox row: find the payment (by our attempt id, else by the
// provider's reference), decide what the event means for it (event-mapping.ts), and apply that
// through transition() with origin 'webhook' — settling the inbox row and the outbox row in the
// same transaction. step() ignores stale and duplicate facts; the transition log keeps why.
// An event for a payment we do not know yet (it raced our own commit) is retried, not dropped.

import type { NormalizedEvent } from '../../connectors/contract.ts';
import { newId } from '../../core/ids.ts';
import { keepClaim, markOutboxDone, releaseOutboxRow } from '../../jobs/outbox-claims.ts';
import type { DbOrTx } from '../../store/db.ts';
import type { Payment } from '../../core/payment.ts';
import { loadAggregate, loadAggregateByAttempt } from '../../store/payment-load.ts';
import { findAttemptByProviderRef } from '../../store/payment-queries.ts';
import { transition } from '../../store/transition.ts';
import { discrepancies } from '../../store/schema.ts';
import { dedupeKey } from '../../reconcile/compare.ts';
import type { WebhookServices } from '../webhook-services.ts';
import { applyDisputeEvent } from './disputes.ts';
import { actionForEvent } from './event-mapping.ts';
import { claimInboundJob, PROCESSABLE, retryInboundLater, settleInboundEvent } from './inbox.ts';
import type { InboundRow } from './inbox.ts';
import { safeErrorText } from '../../observability/safe-error-text.ts';

export type InboundResult =
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'applied' | 'ignored' | 'retry' | 'failed'; readonly reason: string };

/** The payment an event is about, by our attempt id (one statement), else by the provider's reference. */
async function findPayment(db: DbOrTx, account: string, e: NormalizedEvent): Promise<Payment | null> {
  if (e.attemptId !== null) {
    const byAttempt = await loadAggregateByAttempt(db, e.attemptId);
    if (byAttempt !== null) return byAttempt;
  }
  if (e.providerRef === null) return null;
  const paymentId = (await findAttemptByProviderRef(db, account, e.providerRef))?.paymentId ?? null;
  return paymentId === null ? null : loadAggregate(db, paymentId);
}

export async function processInboundEvent(s: WebhookServices, outboxId: number, claimant: string): Promise<InboundResult> {
  // The claim reads the event in the same statement.
  const leaseMs = s.settings.claimLeaseMs;
  const claim = await claimInboundJob(s.db, outboxId, claimant, s.now(), leaseMs);
  if (!claim.ok) return { kind: 'skipped', reason: claim.reason };
  // Renewed while the event is applied, as a provider call's claim is: a slow apply (a lock wait, a
  // slow database) keeps its row; a killed worker's row is free within one lease.
  const stopRenewing = keepClaim(s.db, outboxId, claimant, s.now, leaseMs);
  try {
    return await applyClaimed(s, outboxId, claim.event);
  } catch (err) {
    stopRenewing();
    await releaseOutboxRow(s.db, outboxId, claimant, safeErrorText(err)).catch(() => undefined);
    throw err;
  } finally {
    stopRenewing();
  }
}

async function applyClaimed(s: WebhookServices, outboxId: number, row: InboundRow | null): Promise<InboundResult> {
  if (row === null || !PROCESSABLE.includes(row.outcome) || row.event === null) {
    await markOutboxDone(s.db, outboxId, s.now(), `skipped: inbound event ${row?.id ?? ''} is ${row?.outcome ?? 'missing'}`);
    return { kind: 'skipped', reason: `inbound event ${row?.outcome ?? 'missing'}` };
  }
  const e = row.event;
  const payment = await findPayment(s.db, row.connector, e);
  if (payment === null) return notKnownYet(s, outboxId, row.id, row.tries + 1, e);
  const paymentId = payment.id;
  const action = (s.mapEvent ?? actionForEvent)(payment, row.connector, e);
  switch (action.kind) {
    case 'retry':
      return retryLater(s, outboxId, row.id, row.tries + 1, action.reason);
    case 'hold':
      return holdOrGiveUp(s, outboxId, row, paymentId, action.reason);
    case 'ignore':
      // One statement: the event settled and its job done, atomically.
      await settleInboundEvent(s.db, row.id, 'ignored', action.reason, paymentId, s.now(), outboxId);
      return { kind: 'ignored', reason: action.reason };
    case 'dispute': {
      const result = await s.db.transaction(async (tx) => {
        const r = await applyDisputeEvent(tx, payment, row.connector, action.event, s.now(), (k) => newId(k, s.now().getTime()));
        await settleInboundEvent(tx, row.id, r.applied ? 'applied' : 'ignored', r.reason, paymentId, s.now());
        await markOutboxDone(tx, outboxId, s.now());
        return r;
      });
      if (result.applied) s.kick();
      return { kind: result.applied ? 'applied' : 'ignored', reason: result.reason };
    }
    case 'input': {
      const env = await s.envs.forSnapshot(s.db, payment.routing.snapshot);
      let settled: InboundResult = { kind: 'ignored', reason: '' };
      let { input, attemptId } = action;
      // The event was matched against the payment as loaded before the transition. Matched by amount
      // (two equal refunds in flight, their events processed at once) its target may have been
      // settled meanwhile by the other event: then decide again on the payment as the transition saw
      // it. Found by the chaos harness: both events settled refund 1; refund 2 stayed pending forever.
      for (let round = 0; round < 3; round++) {
        const result = await transition(s.db, paymentId, input, 'webhook', env, {
          ...(round === 0 ? { loaded: payment } : {}),
          rawProvider: e,
          ...(attemptId === null ? {} : { attemptId }),
          now: s.now,
          inTransaction: async (tx, logged) => {
            settled = { kind: logged.outcome === 'applied' ? 'applied' : 'ignored', reason: `${e.rawType}: ${logged.reason}` };
            await settleInboundEvent(tx, row.id, settled.kind === 'applied' ? 'applied' : 'ignored', settled.reason, paymentId, s.now(), outboxId);
          },
          onCommitted: (ids) => s.kick(ids),
        });
        if (result.kind !== 'noop') break;
        const again = (s.mapEvent ?? actionForEvent)(result.payment, row.connector, e);
        if (again.kind !== 'input' || JSON.stringify(again.input) === JSON.stringify(input)) break;
        ({ input, attemptId } = again);
      }
      return settled;
    }
  }
}

/**
 * A failure or reversal before the success it reverses: decided again shortly (the state it needs
 * may arrive any moment), until the hold bound from its receipt; past it, a discrepancy with the
 * event attached, and the event goes to the dead letter (replayable).
 */
async function holdOrGiveUp(s: WebhookServices, outboxId: number, row: InboundRow, paymentId: string, why: string): Promise<InboundResult> {
  const now = s.now();
  const { inboundHoldMs, inboundHoldRecheckMs, inboundRetryBaseMs } = s.settings;
  const heldMs = now.getTime() - row.receivedAt.getTime();
  const e = row.event!;
  if (heldMs >= inboundHoldMs) {
    const reason = `held: ${why}; bound of ${Math.round(inboundHoldMs / 1000)} s passed, recorded as a discrepancy`;
    const providerRef = `inbox:${row.id}`;
    await s.db.transaction(async (tx) => {
      await tx.insert(discrepancies).values({
        id: newId('discrepancy', now.getTime()), paymentId, attemptId: e.attemptId, kind: 'held_event_expired', category: 'unapplied_event',
        connector: row.connector, providerRef, owner: 'operations', createdAt: now,
        detail: `${e.rawType} (${e.providerRef ?? 'no provider ref'}) held ${Math.round(heldMs / 1000)} s: ${why}`,
        dedupeKey: dedupeKey({ category: 'unapplied_event', paymentId, providerRef, aspect: 'event' }),
        event: { inboundEventId: row.id, ...e },
      }).onConflictDoNothing();
      await settleInboundEvent(tx, row.id, 'failed', reason, paymentId, now);
      await markOutboxDone(tx, outboxId, now);
    });
    s.log(`webhooks: inbound event ${row.id} ${reason}`);
    return { kind: 'failed', reason };
  }
  const tries = row.tries + 1;
  const delay = Math.max(1, Math.min(inboundRetryBaseMs * 2 ** Math.min(tries - 1, 20), inboundHoldRecheckMs, inboundHoldMs - heldMs));
  const reason = `held: ${why} (try ${tries})`;
  await s.db.transaction(async (tx) => {
    await retryInboundLater(tx, row.id, tries, reason, new Date(now.getTime() + delay), paymentId);
    await markOutboxDone(tx, outboxId, now);
  });
  s.kick();
  return { kind: 'retry', reason };
}

async function notKnownYet(s: WebhookServices, outboxId: number, inboundId: number, tries: number, e: NormalizedEvent): Promise<InboundResult> {
  const names = `attempt ${e.attemptId ?? '-'} / provider ref ${e.providerRef ?? '-'}`;
  return retryLater(s, outboxId, inboundId, tries, `payment not known yet for ${names}`, `no payment for ${names}`);
}

/** Tries the event again later (with backoff), dead-lettering it after the configured tries. */
async function retryLater(s: WebhookServices, outboxId: number, inboundId: number, tries: number, why: string, givenUp = why): Promise<InboundResult> {
  const { inboundMaxTries, inboundRetryBaseMs } = s.settings;
  const now = s.now();
  if (tries >= inboundMaxTries) {
    const reason = `${givenUp} after ${tries} tries`;
    await s.db.transaction(async (tx) => {
      await settleInboundEvent(tx, inboundId, 'failed', reason, null, now);
      await markOutboxDone(tx, outboxId, now);
    });
    s.log(`webhooks: inbound event ${inboundId} dead-lettered: ${reason}`);
    return { kind: 'failed', reason };
  }
  const delay = Math.min(inboundRetryBaseMs * 2 ** (tries - 1), 10 * 60_000);
  const reason = `${why} (try ${tries}); retrying`;
  await s.db.transaction(async (tx) => {
    await retryInboundLater(tx, inboundId, tries, reason, new Date(now.getTime() + delay));
    await markOutboxDone(tx, outboxId, now);
  });
  s.kick();
  return { kind: 'retry', reason };
}
