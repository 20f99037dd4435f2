// A verified provider event that only confirms what the payment already shows (the authorization
// event after the authorize answer was applied, the capture event after the capture answer) is
// settled at intake, in ONE statement, with no job: the inbox row is written already settled as
// `ignored`, with the transition log row step() would have written. Anything else — an event that
// changes something, a payment not found, a batch, a report, an error — takes the job path
// (inbound-processor.ts) exactly as before.
//
// Why this is as safe as the job path: the signature was verified first (the router); the decision
// is step() itself, on the payment as read, with the same environment the worker would build; and
// the statement that records the event as settled re-checks, under a share lock on the payment
// row, that the payment is still at the version that was judged. If it moved, the same statement
// stores the event `pending` with its job, as storeVerifiedEvents would have.

import { sql } from 'drizzle-orm';
import type { NormalizedEvent } from '../../connectors/contract.ts';
import type { Payment } from '../../core/payment.ts';
import { historyCopy } from '../../core/secret-mask.ts';
import { step } from '../../core/step.ts';
import { announceTransition } from '../../observability/transition-feed.ts';
import { loadAggregateByAttempt } from '../../store/payment-load.ts';
import { attemptIdOf } from '../../store/transition.ts';
import type { WebhookServices } from '../webhook-services.ts';
import { actionForEvent } from './event-mapping.ts';
import type { StoredEvents } from './inbox.ts';

/** What the intake may settle itself: the payment, the input and why step() ignores it. */
interface ConfirmingNoop {
  readonly payment: Payment;
  readonly input: unknown;
  readonly attemptId: string | null;
  readonly reason: string;
}

/** Null unless step() judges the event a noop on the payment as it is now (the job path decides everything else). */
async function judge(s: WebhookServices, account: string, e: NormalizedEvent, now: Date): Promise<ConfirmingNoop | null> {
  // Only what the worker would find by our attempt id; reports and disputes have their own paths.
  if (e.attemptId === null || e.report !== undefined || e.kind === 'ignored' || e.kind === 'dispute') return null;
  const payment = await loadAggregateByAttempt(s.db, e.attemptId);
  if (payment === null) return null;
  const action = (s.mapEvent ?? actionForEvent)(payment, account, e);
  if (action.kind !== 'input') return null;
  const env = await s.envs.forSnapshot(s.db, payment.routing.snapshot);
  const result = (env.seams?.step ?? step)(payment, action.input, now, env);
  if (result.kind !== 'noop') return null;
  return { payment, input: action.input, attemptId: action.attemptId ?? attemptIdOf(action.input), reason: result.reason };
}

/**
 * Stores one verified event, settled at once when it only confirms the payment's current version;
 * null when it is not such an event (the caller stores it for the job path).
 */
export async function storeConfirmingEvent(
  s: WebhookServices, account: string, rawBody: Buffer, headersJson: string, e: NormalizedEvent, now: Date,
): Promise<StoredEvents | null> {
  const noop = await judge(s, account, e, now);
  if (noop === null) return null;
  const { payment } = noop;
  const reason = `${e.rawType}: ${noop.reason}`;
  // The intake masked the event already (storable-event.ts); kept as transition() keeps history all the same.
  const eventJson = JSON.stringify(historyCopy(e));
  // `cur` is the judged version, locked FOR SHARE: a writer holding the row makes us wait, and
  // then the re-check sees its commit (no row: the event goes pending with its job, as today).
  // The transition row is the one transition() writes for an ignored input (origin webhook).
  const res = await s.db.execute<{ inbound_id: string | null; outcome: string | null; transition_id: string | null; outbox_id: string | null }>(sql`
    WITH cur AS (SELECT id FROM payments WHERE id = ${payment.id}::text AND version = ${payment.version}::int FOR SHARE),
    ins AS (
      INSERT INTO inbound_events (connector, provider_event_id, raw_body, headers, verified, event, received_at, outcome, reason, processed_at, payment_id)
      SELECT ${account}::text, ${e.providerEventId}::text, ${rawBody}::bytea, ${headersJson}::jsonb, true, ${eventJson}::jsonb, ${now}::timestamptz,
             CASE WHEN c.ok THEN 'ignored' ELSE 'pending' END, CASE WHEN c.ok THEN ${reason}::text END,
             CASE WHEN c.ok THEN ${now}::timestamptz END, CASE WHEN c.ok THEN ${payment.id}::text END
      FROM (SELECT EXISTS (SELECT 1 FROM cur) AS ok) c
      ON CONFLICT (connector, provider_event_id) DO NOTHING
      RETURNING id, outcome),
    t AS (
      INSERT INTO payment_transitions (payment_id, from_state, to_state, input, origin, attempt_id, raw_provider, outcome, code, reason, version, at)
      SELECT ${payment.id}::text, ${payment.state}::text, ${payment.state}::text, ${JSON.stringify(historyCopy(noop.input))}::jsonb, 'webhook', ${noop.attemptId}::text, ${eventJson}::jsonb,
             'ignored', 'noop', ${noop.reason}::text, ${payment.version}::int, ${now}::timestamptz
      FROM ins WHERE ins.outcome = 'ignored'
      RETURNING id),
    job AS (
      INSERT INTO outbox (payment_id, kind, payload, run_at)
      SELECT NULL, 'inbound_event', jsonb_build_object('inboundEventId', ins.id), ${now}::timestamptz FROM ins WHERE ins.outcome = 'pending'
      RETURNING id)
    SELECT (SELECT id FROM ins)::text AS inbound_id, (SELECT outcome FROM ins) AS outcome,
           (SELECT id FROM t)::text AS transition_id, (SELECT id FROM job)::text AS outbox_id`);
  const row = res.rows[0];
  if (row === undefined || row.inbound_id === null) return { inserted: 0, duplicates: 1, outboxIds: [] };
  if (row.outcome === 'ignored' && row.transition_id !== null) {
    announceTransition({ kind: 'noop', reason: noop.reason, payment, transitionId: Number(row.transition_id) }, 'webhook');
    return { inserted: 1, duplicates: 0, outboxIds: [] };
  }
  return { inserted: 1, duplicates: 0, outboxIds: row.outbox_id === null ? [] : [Number(row.outbox_id)] };
}
