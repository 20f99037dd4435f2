// Stripe webhooks applied through transition(): duplicated and reordered deliveries from the
// sandbox never apply twice and never move a payment backwards; late events are recorded as
// ignored; an event that beats its payment's commit is applied once the payment exists; a refund
// failing after success is a reversal; a dispute is a record and merchant events, not a state.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCapture, requestRefund } from '../../../src/app/payment-service.ts';
import { newId } from '../../../src/core/ids.ts';
import type { CallOutcome } from '../../../src/core/outcome.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { createPayment } from '../../../src/store/transition.ts';
import { settled } from '../helpers/runtime.ts';
import { startWebhookGateway, until } from './helpers.ts';
import type { WebhookGateway } from './helpers.ts';

const SECRET = 'whsec_apply';
let gw: WebhookGateway;
let sb: StripeSandbox;
/** Attempts whose provider calls the test holds back (the payment exists, the provider has not been asked). */
const held = new Set<string>();

beforeAll(async () => {
  gw = await startWebhookGateway('wh_stripe_apply', `
connectors:
  stripe_a: { type: stripe, secret_key: sk_test_apply, webhook_secrets: [${SECRET}], breaker: { volume_threshold: 50 } }
routing:
  default: { priority: [stripe_a] }
`, {
    webhooks: { inboundRetryBaseMs: 100 },
    aroundCall: async (effect, call) => (held.has(effect.attemptId) ? ({ kind: 'not_sent', reason: 'connection_refused', detail: 'held by the test (a refused connection is resent; a local validation refusal is final)' } satisfies CallOutcome) : call()),
  });
  sb = gw.rt.sandboxes[0] as StripeSandbox;
});
afterAll(async () => gw?.close());

const q = async <T extends Record<string, unknown>>(query: ReturnType<typeof sql>) => (await gw.db.db.execute<T>(query)).rows;

const inboundSettled = (paymentId: string) => until(
  () => q<{ n: string }>(sql`SELECT count(*) AS n FROM inbound_events WHERE outcome = 'pending' AND (payment_id = ${paymentId} OR payment_id IS NULL) AND verified`),
  (r) => r[0]!.n === '0',
);

const merchantEventTypes = async (paymentId: string) =>
  until(() => q<{ type: string }>(sql`SELECT type FROM merchant_events WHERE payment_id = ${paymentId} ORDER BY created_at, id`), () => true).then((r) => r.map((x) => x.type));

function signedPost(body: string) {
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) });
  return fetch(`${gw.url}/webhooks/stripe_a`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body });
}

function piEvent(type: string, pi: Record<string, unknown>): string {
  return JSON.stringify({ id: `evt_t${randomBytes(8).toString('hex')}`, object: 'event', type, created: Math.floor(Date.now() / 1000), livemode: false, data: { object: { object: 'payment_intent', ...pi } } });
}

const RANK: Record<string, number> = { created: -1, authorizing: 0, authorized: 1, capturing: 2, captured: 3 };

describe('Stripe events applied', () => {
  let capturedId = '';

  it('duplicated and reordered deliveries: every fact applies once and the payment only moves forward', async () => {
    await sb.configureWebhooks({ duplicate: 1, reorder: true });
    const p = await gw.waitFor((await gw.pay({ amount: 5000 })).id, settled);
    expect(p.state).toBe('authorized');
    await requestCapture(gw.rt, gw.merchantId, p, undefined, true);
    const captured = await gw.waitFor(p.id, (x) => x.state === 'captured');
    await requestRefund(gw.rt, gw.merchantId, captured, 1500, null);
    await gw.waitFor(p.id, (x) => x.amountRefunded === 1500);
    await sb.webhooksIdle();
    await inboundSettled(p.id);
    await sb.configureWebhooks({ duplicate: 0, reorder: false });

    const final = await gw.waitFor(p.id, () => true);
    expect([final.state, final.amountCaptured, final.amountRefunded]).toEqual(['captured', 5000, 1500]);
    expect(final.refunds.map((r) => r.status)).toEqual(['succeeded']);
    // Every event id was delivered twice; the inbox holds each once.
    const delivered = (await sb.webhookDeliveries()).filter((d) => d.status === 200);
    const ids = new Set(delivered.map((d) => d.eventId));
    expect(delivered.length).toBeGreaterThan(ids.size);
    const inbox = await q<{ n: string; distinct_ids: string }>(sql`SELECT count(*) AS n, count(DISTINCT provider_event_id) AS distinct_ids FROM inbound_events WHERE connector = 'stripe_a' AND verified`);
    expect(inbox[0]!.n).toBe(inbox[0]!.distinct_ids);
    const fromWebhooks = await q<{ outcome: string }>(sql`SELECT outcome FROM payment_transitions WHERE payment_id = ${p.id} AND origin = 'webhook'`);
    expect(fromWebhooks.length).toBeGreaterThan(0);
    // Money moved once per fact: one capture posting, one refund posting, one event each.
    const ledger = await q<{ posting: string }>(sql`SELECT kind AS posting FROM ledger_transactions WHERE payment_id = ${p.id} ORDER BY created_at, source`);
    expect(ledger.map((l) => l.posting)).toEqual(['capture', 'refund']);
    const transitions = await q<{ from_state: string; to_state: string }>(sql`SELECT from_state, to_state FROM payment_transitions WHERE payment_id = ${p.id} AND outcome = 'applied' ORDER BY id`);
    for (const t of transitions) expect(RANK[t.to_state]! >= RANK[t.from_state]!, `${t.from_state} -> ${t.to_state}`).toBe(true);
    const types = await until(() => merchantEventTypes(p.id), (t) => t.includes('refund.succeeded'));
    expect(types.sort()).toEqual(['payment.authorized', 'payment.captured', 'refund.succeeded']);
    capturedId = p.id;
  });

  it('a late approval and a late decline for a captured payment are recorded as ignored, with the reason', async () => {
    const p = await gw.waitFor(capturedId, () => true);
    const attempt = p.attempts[0]!;
    const pi = { id: attempt.providerRef, amount: 5000, currency: 'eur', metadata: { attempt_id: attempt.id }, latest_charge: 'ch_x' };
    const approval = piEvent('payment_intent.amount_capturable_updated', { ...pi, status: 'requires_capture', amount_capturable: 5000, amount_received: 0 });
    const decline = piEvent('payment_intent.payment_failed', { ...pi, status: 'requires_payment_method', last_payment_error: { code: 'card_declined', decline_code: 'generic_decline' } });
    expect((await signedPost(approval)).status).toBe(200);
    expect((await signedPost(decline)).status).toBe(200);
    await inboundSettled(p.id);
    // By their ids: the sandbox's own event ids are random and one may start with evt_t too (seen in .ci/run).
    const ids = [approval, decline].map((b) => (JSON.parse(b) as { id: string }).id);
    const ignored = await q<{ reason: string; outcome: string }>(sql`SELECT outcome, reason FROM inbound_events WHERE payment_id = ${p.id} AND provider_event_id IN (${ids[0]!}, ${ids[1]!}) ORDER BY id`);
    expect(ignored.map((r) => r.outcome)).toEqual(['ignored', 'ignored']);
    expect(ignored[0]!.reason).toMatch(/duplicate approval/);
    const after = await gw.waitFor(p.id, () => true);
    expect([after.state, after.version, after.amountCaptured]).toEqual([p.state, p.version, p.amountCaptured]);
  });

  it('a refund that fails after it succeeded is reversed: refunded amount back, refund.reversed sent', async () => {
    const p = await gw.waitFor(capturedId, () => true);
    await sb.failRefund(p.refunds[0]!.providerRef!);
    const reversed = await gw.waitFor(p.id, (x) => x.refunds[0]!.status === 'reversed');
    expect([reversed.state, reversed.amountRefunded, reversed.amountCaptured]).toEqual(['captured', 0, 5000]);
    await until(() => merchantEventTypes(p.id), (t) => t.includes('refund.reversed'));
    const ledger = await q<{ posting: string }>(sql`SELECT kind AS posting FROM ledger_transactions WHERE payment_id = ${p.id} ORDER BY created_at, source`);
    expect(ledger.map((l) => l.posting)).toEqual(['capture', 'refund', 'refund_reversed']);
  });

  it('a dispute creates a dispute record, dispute.opened and dispute.funds_withdrawn, and leaves the payment as it was', async () => {
    const p = await gw.waitFor(capturedId, () => true);
    await sb.createDispute(p.attempts[0]!.providerRef!, { amount: 2000, reason: 'fraudulent' });
    const disputes = await until(() => q<{ status: string; amount: string; currency: string; connector: string }>(sql`SELECT status, amount, currency, connector FROM disputes WHERE payment_id = ${p.id}`), (r) => r[0]?.status === 'funds_withdrawn');
    expect(disputes[0]).toMatchObject({ status: 'funds_withdrawn', amount: '2000', currency: 'EUR', connector: 'stripe_a' });
    await until(() => merchantEventTypes(p.id), (t) => t.includes('dispute.opened') && t.includes('dispute.funds_withdrawn'));
    const after = await gw.waitFor(p.id, () => true);
    expect([after.state, after.version]).toEqual([p.state, p.version]);
  });

  it('an event that arrives before its payment is committed is retried, and applied once the payment exists', async () => {
    const attemptId = newId('attempt');
    held.add(attemptId);
    const body = piEvent('payment_intent.amount_capturable_updated', {
      id: `pi_race${randomBytes(4).toString('hex')}`, status: 'requires_capture', amount: 1200, amount_capturable: 1200, amount_received: 0, currency: 'eur', latest_charge: 'ch_r', metadata: { attempt_id: attemptId },
    });
    expect((await signedPost(body)).status).toBe(200);
    const eventId = (JSON.parse(body) as { id: string }).id;
    const waiting = await until(() => q<{ outcome: string; reason: string | null; tries: number }>(sql`SELECT outcome, reason, tries FROM inbound_events WHERE provider_event_id = ${eventId}`), (r) => (r[0]?.tries ?? 0) >= 1);
    expect(waiting[0]).toMatchObject({ outcome: 'pending', reason: expect.stringMatching(/not known yet/) as string });

    const { snapshot } = gw.rt.config.current();
    const env = { ...gw.rt.envs.current(snapshot.maxAttempts), newId: (k: Parameters<typeof newId>[0]) => (k === 'attempt' ? attemptId : newId(k)) };
    const created = await createPayment(gw.rt.database.db, {
      id: newId('payment'), merchantId: gw.merchantId, livemode: false, reference: 'race', amount: 1200, currency: 'EUR', captureMethod: 'manual', allowPartialAuthorization: false,
      routing: { snapshot: snapshot.version, rule: 'default', candidates: ['stripe_a'], skipped: [] }, metadata: {},
    }, env, { paymentMethod: { test_card: '4242424242424242' }, onCommitted: () => gw.rt.relay.kick() });
    const authorized = await gw.waitFor(created.payment.id, (x) => x.state === 'authorized');
    expect(authorized.attempts[0]!.id).toBe(attemptId);
    const applied = await q<{ outcome: string }>(sql`SELECT outcome FROM inbound_events WHERE provider_event_id = ${eventId}`);
    expect(applied[0]!.outcome).toBe('applied');
    const byWebhook = await q<{ to_state: string }>(sql`SELECT to_state FROM payment_transitions WHERE payment_id = ${authorized.id} AND origin = 'webhook' AND outcome = 'applied'`);
    expect(byWebhook.map((t) => t.to_state)).toEqual(['authorized']);
  });
});
