// Deliberately broken parts the harness can swap into the gateway by dependency injection (the
// seams of GatewaySeams), to prove each invariant catches the bug it exists for. Production code
// has no flag for any of these: only the harness's own entry (planted-gateway.ts) passes them.

import { and, eq, sql } from 'drizzle-orm';
import pg from 'pg';
import type { GatewaySeams } from '../src/app/runtime.ts';
import type { Payment } from '../src/core/payment.ts';
import { judgeAnswerAgainstClaim } from '../src/core/execution-claim.ts';
import { step } from '../src/core/step.ts';
import { actionForEvent } from '../src/webhooks/inbound/event-mapping.ts';
import type { NormalizedEvent } from '../src/connectors/contract.ts';
import { payments } from '../src/store/schema.ts';
import type { Invariant } from './invariants.ts';
import { isoUnitsOnAdyenWire } from './planted-exponents.ts';

export const PLANTED_BUGS = [
  'failover_on_timeout', 'new_key_per_retry', 'stale_webhook', 'skip_version_check', 'refund_without_amount_check', 'adyen_amounts_in_iso_units',
  'retention_not_checked_at_execution', 'superseded_refusal_as_proof', 'accepted_release_is_released', 'not_found_by_list_is_proof',
  'expiry_never_abandons', 'action_required_as_approval', 'abandonment_without_cancel', 'release_events_to_current_round', 'already_done_as_refusal',
  'fenced_attempt_not_watched', 'failed_job_blocks_row', 'card_in_outbox_row',
] as const;
export type PlantedBug = (typeof PLANTED_BUGS)[number];

/**
 * The invariants each bug must trip (any one of them). A new key per retry makes the provider run
 * one operation twice: a second authorization where the provider keeps none per reference (a
 * double charge), a second provider payment for one attempt (the outbox invariant), or a second
 * refund (the provider's amounts disagree with ours).
 */
export const EXPECTED_INVARIANTS: Readonly<Record<PlantedBug, readonly Invariant[]>> = {
  failover_on_timeout: ['no_double_charge', 'failover_proof'],
  new_key_per_retry: ['no_double_charge', 'outbox', 'amounts'],
  stale_webhook: ['webhook_auth'],
  skip_version_check: ['legal_edges'],
  refund_without_amount_check: ['amounts'],
  // Adyen charges what it reads with its own decimals: the sandbox ledger (ISO units) disagrees with the gateway.
  adyen_amounts_in_iso_units: ['amounts'],
  // A replayed refund sent with a key the provider forgot: it refunds a second time.
  retention_not_checked_at_execution: ['amounts'],
  // The refused execution's answer taken as proof while its twin was authorizing: a failover over a
  // live authorization (released later, or still held).
  superseded_refusal_as_proof: ['failover_proof', 'no_double_charge'],
  // The provider accepted the release, then failed it: the approval the payment did not keep is still charged.
  accepted_release_is_released: ['no_double_charge'],
  // A one-call Stripe authorization still held at the provider when the lookup ran: failed over,
  // then charged where it was first sent (a second live authorization).
  not_found_by_list_is_proof: ['no_double_charge', 'failover_proof'],
  // Issue 27: the customer's deadline never fires — payments wait for customers who left, forever.
  expiry_never_abandons: ['customer_deadline'],
  // Issue 27: the provider's "authenticate first" taken as an approval — captured (automatic
  // capture in the ledger, or a capture requested) before the customer completed at the provider.
  action_required_as_approval: ['captured_after_authentication'],
  // Issue 27: the deadline taken as proof by itself — the attempt failed authentication_abandoned
  // with no cancel at the provider, where the customer may still complete.
  abandonment_without_cancel: ['failover_proof', 'no_double_charge'],
  // Issue 41 §1: a failed round's events taken as news about the round after it — its late success
  // "confirms" a later round, booked released while the provider refunded nothing.
  release_events_to_current_round: ['no_double_charge'],
  // Issue 41 §4: "already canceled / captured" taken as the provider's refusal — the void or capture
  // rejected, the payment back to authorized, while the provider cancelled or captured it (and its
  // event is then ignored as about a refused operation): the gateway's amounts disagree with the
  // provider's (no authorization stands; or money captured the gateway books as not). A capture and
  // a void of one payment racing may both come back refused (the driver's legal_edges check).
  already_done_as_refusal: ['amounts', 'legal_edges'],
  // Issue 41 §5: an authorization Adyen completed after acknowledging our technical cancel, ignored
  // as "older than the fence" — the customer is held (or charged) at Adyen and at the provider the
  // payment failed over to.
  fenced_attempt_not_watched: ['no_double_charge'],
  // Issue 41: a job that failed for good during a long database outage keeps its row's id in
  // BullMQ's failed set, and the relay, blind to it, "republishes" the row into that id for ever.
  failed_job_blocks_row: ['outbox'],
  // Issue 44: the worker keeps the request it sent, card included, on the outbox row (for a
  // "debugging" look later): the card number is in the gateway's database.
  card_in_outbox_row: ['card_data_contained'],
};

/** card_in_outbox_row's own connection (the planted process's DATABASE_URL). */
let leakPool: pg.Pool | undefined;

export function isPlantedBug(name: string): name is PlantedBug {
  return (PLANTED_BUGS as readonly string[]).includes(name);
}

export function plantedSeams(bug: PlantedBug): GatewaySeams {
  switch (bug) {
    case 'failover_on_timeout':
      // A timeout taken as proof that the customer was not charged.
      return {
        aroundCall: async (effect, call) => {
          const outcome = await call();
          if (effect.op === 'authorize' && outcome.kind === 'unknown') return { kind: 'not_sent', reason: 'connection_refused', detail: 'planted: timeout taken as not sent' };
          return outcome;
        },
      };
    case 'new_key_per_retry':
      // Every resend gets a fresh provider idempotency key, so the provider cannot recognise it.
      return {
        aroundCall: (effect, call) => {
          if (effect.providerKey === null) return call();
          return call({ ...effect, providerKey: `${effect.providerKey.slice(0, 40)}-r${Math.random().toString(36).slice(2, 10)}` });
        },
      };
    case 'stale_webhook':
      // Events matched by amount alone, newest object first, ignoring the provider's reference: an
      // event about an older refund or capture settles the newest one in flight with that amount.
      return {
        mapEvent: (p, account, e) => {
          if ('modificationRef' in e && (e.kind === 'refund_succeeded' || e.kind === 'capture_succeeded')) {
            const list = e.kind === 'refund_succeeded' ? p.refunds : p.captures;
            const open = [...list].reverse().find((x) => (x.status === 'requested' || x.status === 'pending') && x.amount === e.amount);
            if (open !== undefined) {
              const fact = e.kind === 'refund_succeeded' ? { fact: 'refund_succeeded' as const, refundId: open.id } : { fact: 'capture_succeeded' as const, captureId: open.id };
              return { kind: 'input', input: { type: 'provider_fact', fact: { ...fact, ...(e.modificationRef === null ? {} : { providerRef: e.modificationRef }) } }, attemptId: null };
            }
          }
          return actionForEvent(p, account, e);
        },
      };
    case 'skip_version_check':
      // The payment row written whatever version it is at now: concurrent transitions both commit.
      return {
        transition: {
          writePayment: async (tx, paymentId, changes) => {
            const updated = await tx
              .update(payments)
              .set({ ...changes, version: sql`${payments.version} + 1` })
              .where(and(eq(payments.id, paymentId)))
              .returning({ version: payments.version });
            return updated.length > 0;
          },
        },
      };
    case 'refund_without_amount_check':
      // The refund bound skipped: step() sees a payment that captured enough for any refund.
      return {
        transition: {
          step: (payment, input, now, env) => {
            if (input.type !== 'refund_requested') return step(payment, input, now, env);
            const roomy: Payment = { ...payment, amountCaptured: payment.amountCaptured + input.amount, amountAuthorized: payment.amountAuthorized + input.amount };
            const r = step(roomy, input, now, env);
            return r.kind === 'applied' ? { ...r, payment: { ...r.payment, amountCaptured: payment.amountCaptured, amountAuthorized: payment.amountAuthorized } } : r;
          },
        },
      };
    case 'retention_not_checked_at_execution':
      // The issue-19 bug: retention checked only where a resend is decided, never when the row runs.
      return { checks: { keyExpired: () => null } };
    case 'superseded_refusal_as_proof':
      // The issue-19 bug: a refusal judged by this execution's own snapshot of the claim, blind to
      // the executions that claimed the row since.
      return { checks: { judgeAnswer: (outcome, op, claim) => judgeAnswerAgainstClaim(outcome, op, { mine: claim.mine, now: claim.mine }) } };
    case 'accepted_release_is_released':
      // The issue-20 bug: a release the provider merely accepted (pending, Adyen's "received") counts
      // as released, and the provider's later failure event is ignored as about a released attempt.
      return {
        transition: {
          step: (payment, input, now, env) => {
            if (input.type === 'call_result' && input.ref.op === 'release' && input.outcome.kind === 'pending') {
              return step(payment, { ...input, outcome: { kind: 'succeeded', providerRef: input.outcome.providerRef, amount: 0 } }, now, env);
            }
            if (input.type === 'provider_fact' && input.fact.fact === 'release_failed') {
              const attemptId = input.fact.attemptId;
              if (payment.attempts.find((a) => a.id === attemptId)?.status === 'released') return { kind: 'noop', reason: 'planted: failure of a released attempt ignored' };
            }
            return step(payment, input, now, env);
          },
        },
      };
    case 'release_events_to_current_round':
      // The issue-41 bug: release events stripped of what names their round (our reference on the
      // refund, its id), so each one is about whichever round is current.
      return {
        transition: {
          step: (payment, input, now, env) => {
            if (input.type !== 'provider_fact' || (input.fact.fact !== 'release_succeeded' && input.fact.fact !== 'release_failed')) return step(payment, input, now, env);
            return step(payment, { ...input, fact: { fact: input.fact.fact, attemptId: input.fact.attemptId } }, now, env);
          },
        },
      };
    case 'fenced_attempt_not_watched':
      // The bug before issue 41 §5: a confirmed fence taken as proof against any later approval, so
      // an approval of a fenced attempt is ignored as older than the fence — whatever object it names.
      return {
        transition: {
          step: (payment, input, now, env) => {
            const about = input.type === 'provider_fact' && input.fact.fact === 'authorization' ? { id: input.fact.attemptId, o: input.fact.outcome }
              : input.type === 'call_result' && (input.ref.op === 'authorize' || input.ref.op === 'query') ? { id: input.ref.attemptId, o: input.outcome } : null;
            const attempt = payment.attempts.find((a) => a.id === about?.id);
            if (about?.o.kind === 'succeeded' && attempt?.status === 'abandoned' && attempt.proof === 'fenced' && attempt.authentication === undefined) {
              return { kind: 'noop', reason: 'planted: approval older than the confirmed fence' };
            }
            return step(payment, input, now, env);
          },
        },
      };
    case 'not_found_by_list_is_proof':
      // The issue-26 bug: a lookup by attempt id that finds nothing (Stripe's list, before the
      // PaymentIntent id is known) taken as proof that the attempt never charged — as if every send
      // had been refused — so the payment fails over while the first request may still be running.
      return {
        transition: {
          step: (payment, input, now, env) => {
            const query = input.type === 'call_result' && input.ref.op === 'query' ? { o: input.outcome, attemptId: input.ref.attemptId } : null;
            const o = query?.o;
            const attempt = payment.attempts.find((a) => a.id === query?.attemptId);
            if (o?.kind !== 'unknown' || o.reason !== 'not_found' || o.providerRef !== undefined || attempt === undefined || attempt.providerRef !== null) return step(payment, input, now, env);
            const earlier = Array.from({ length: attempt.sends - 1 }, (_, i) => i + 1);
            const believed: Payment = { ...payment, attempts: payment.attempts.map((a) => (a.id === attempt.id ? { ...a, maybeReached: false, notSentSends: earlier } : a)) };
            return step(believed, { type: 'call_result', ref: { op: 'authorize', attemptId: attempt.id, sendNo: attempt.sends }, outcome: { kind: 'not_sent', reason: 'connection_refused', detail: 'planted: not found by list' } }, now, env);
          },
        },
      };
    case 'expiry_never_abandons':
      // The expiry timer fires and is dropped: nothing cancels the attempt of a customer who left.
      return {
        transition: {
          step: (payment, input, now, env) =>
            input.type === 'timer_fired' && input.timer === 'authentication_expiry' ? { kind: 'noop', reason: 'planted: authentication expiry ignored' } : step(payment, input, now, env),
        },
      };
    case 'action_required_as_approval':
      // The provider asked for customer authentication; the answer is read as an approval of the
      // whole amount, as if the customer had already completed it.
      return {
        transition: {
          step: (payment, input, now, env) => {
            if (input.type === 'call_result' && input.outcome.kind === 'action_required' && input.outcome.providerRef !== undefined) {
              return step(payment, { ...input, outcome: { kind: 'succeeded', providerRef: input.outcome.providerRef, amount: payment.amount } }, now, env);
            }
            return step(payment, input, now, env);
          },
        },
      };
    case 'abandonment_without_cancel':
      // At the deadline the fence is taken as confirmed at once: no cancel is sent, and the
      // PaymentIntent stays open on the provider's page.
      return {
        transition: {
          step: (payment, input, now, env) => {
            const r = step(payment, input, now, env);
            if (input.type !== 'timer_fired' || input.timer !== 'authentication_expiry' || input.attemptId === undefined || r.kind !== 'applied') return r;
            const confirmed = step(r.payment, { type: 'provider_fact', fact: { fact: 'fence_confirmed', attemptId: input.attemptId } }, now, env);
            if (confirmed.kind !== 'applied') return r;
            // One write: the version the first step would have written, the state it started from.
            return { ...confirmed, payment: { ...confirmed.payment, version: r.payment.version }, from: r.from };
          },
        },
      };
    case 'already_done_as_refusal':
      // The issue-41 bug: the classification takes "already in that state" for a refusal of the request.
      return {
        aroundCall: async (effect, call) => {
          const outcome = await call();
          if (outcome.kind === 'unknown' && outcome.reason === 'already_done') return { kind: 'not_sent', reason: 'validation', detail: `planted: already done taken as a refusal (${effect.op})` };
          return outcome;
        },
        mapEvent: (p, account, e) => {
          if (e.kind !== 'already_done') return actionForEvent(p, account, e);
          const failed: NormalizedEvent = e.op === 'void' ? { ...e, kind: 'void_failed' } : { ...e, kind: 'capture_failed' };
          return actionForEvent(p, account, failed);
        },
      };
    case 'failed_job_blocks_row':
      // The relay before issue 41: it never looks at a published row's job, so it adds a job under
      // the id a failed one still holds (BullMQ ignores it) and the row waits for ever.
      return { relay: { jobState: () => Promise.resolve('unknown') } };
    case 'card_in_outbox_row':
      return {
        cardSent: async (outboxId, card) => {
          leakPool ??= new pg.Pool({ connectionString: process.env['DATABASE_URL'], max: 1, application_name: 'planted-card-leak' });
          await leakPool.query("UPDATE outbox SET payload = payload || jsonb_build_object('sent_card', jsonb_build_object('number', $2::text, 'exp', $3::text)) WHERE id = $1", [
            outboxId, card.number, `${card.expMonth}/${card.expYear}`,
          ]);
        },
      };
    case 'adyen_amounts_in_iso_units':
      // The issue-21 bug: Adyen amounts in ISO minor units, both ways (IDR 12,345.00 goes out as
      // 1,234,500 rupiah, and Adyen's values come back unconverted).
      return isoUnitsOnAdyenWire();
  }
}
