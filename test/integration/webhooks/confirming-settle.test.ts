// A provider event that only confirms what the payment already shows is settled at intake in one
// statement, with no job (src/webhooks/inbound/confirming-settle.ts); an event that changes the
// payment still goes through the inbox job, the worker and transition(). The sandbox's own
// webhooks are off: the only events are the ones this file signs and posts.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCapture } from '../../../src/app/payment-service.ts';
import type { StepEnvFactory } from '../../../src/jobs/step-env.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { storeConfirmingEvent } from '../../../src/webhooks/inbound/confirming-settle.ts';
import { settled } from '../helpers/runtime.ts';
import { startWebhookGateway, until } from './helpers.ts';
import type { WebhookGateway } from './helpers.ts';

const SECRET = 'whsec_confirming';
let gw: WebhookGateway;
/** While set, provider calls wait for it: the payment stays `authorizing` with its call in flight. */
let gate: Promise<void> | null = null;
let callsWaiting = 0;

beforeAll(async () => {
  gw = await startWebhookGateway('wh_confirming', `
connectors:
  stripe_c: { type: stripe, secret_key: sk_test_confirming, webhook_secrets: [${SECRET}] }
routing:
  default: { priority: [stripe_c] }
`, {
    aroundCall: async (_effect, call) => {
      if (gate !== null) {
        callsWaiting++;
        await gate;
      }
      return call();
    },
  });
  await (gw.rt.sandboxes[0] as StripeSandbox).configureWebhooks({ enabled: false });
});
afterAll(async () => gw?.close());

const q = async <T extends Record<string, unknown>>(query: ReturnType<typeof sql>) => (await gw.db.db.execute<T>(query)).rows;

function authorizationEvent(attempt: { id: string; providerRef: string | null }, amount: number, eventId: string): string {
  return JSON.stringify({
    id: eventId, object: 'event', type: 'payment_intent.amount_capturable_updated', created: Math.floor(Date.now() / 1000), livemode: false,
    data: { object: {
      object: 'payment_intent', id: attempt.providerRef ?? `pi_c${randomBytes(6).toString('hex')}`, status: 'requires_capture', amount, amount_capturable: amount,
      amount_received: 0, currency: 'eur', latest_charge: 'ch_c', metadata: { attempt_id: attempt.id },
    } },
  });
}

const sign = (body: string) => Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) });

async function postAuthorizationEvent(attempt: { id: string; providerRef: string | null }, amount: number, eventId = `evt_c${randomBytes(8).toString('hex')}`): Promise<{ status: number; eventId: string; body: unknown }> {
  const body = authorizationEvent(attempt, amount, eventId);
  const signature = sign(body);
  const res = await fetch(`${gw.url}/webhooks/stripe_c`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body });
  return { status: res.status, eventId, body: await res.json() };
}

const inboxRow = async (eventId: string) =>
  (await q<{ id: string; outcome: string; reason: string | null; tries: number; payment_id: string | null; processed: boolean }>(
    sql`SELECT id::text, outcome, reason, tries, payment_id, processed_at IS NOT NULL AS processed FROM inbound_events WHERE provider_event_id = ${eventId}`,
  ))[0];

const jobsFor = (inboundId: string) =>
  q<{ status: string; published: boolean; attempts: number }>(
    sql`SELECT status, published_at IS NOT NULL AS published, attempts FROM outbox WHERE kind = 'inbound_event' AND (payload->>'inboundEventId') = ${inboundId}`,
  );

describe('confirming webhook events', () => {
  it('an authorization event after the authorize answer was applied is settled at intake: inbox row ignored, no job, one noop transition row', async () => {
    const p = await gw.waitFor((await gw.pay({ amount: 4100 })).id, settled);
    expect(p.state).toBe('authorized');
    const attempt = p.attempts[0]!;
    const sent = await postAuthorizationEvent(attempt, 4100);
    expect([sent.status, sent.body]).toEqual([200, { received: 1, duplicates: 0 }]);

    // Settled by the time the provider has its answer: nothing is left for a worker to do.
    const row = await inboxRow(sent.eventId);
    expect(row).toMatchObject({ outcome: 'ignored', tries: 0, payment_id: p.id, processed: true });
    expect(row!.reason).toMatch(/^payment_intent\.amount_capturable_updated: .*duplicate approval/);
    expect(await jobsFor(row!.id)).toEqual([]);
    const logged = await q<{ outcome: string; code: string; version: number; origin: string; attempt_id: string; from_state: string; to_state: string }>(
      sql`SELECT outcome, code, version, origin, attempt_id, from_state, to_state FROM payment_transitions WHERE payment_id = ${p.id} AND origin = 'webhook'`,
    );
    expect(logged).toEqual([{ outcome: 'ignored', code: 'noop', version: p.version, origin: 'webhook', attempt_id: attempt.id, from_state: 'authorized', to_state: 'authorized' }]);
    const after = await gw.waitFor(p.id, () => true);
    expect([after.state, after.version]).toEqual([p.state, p.version]);

    // The same event again is a duplicate: acknowledged, nothing stored, no second log row.
    const again = await postAuthorizationEvent(attempt, 4100, sent.eventId);
    expect([again.status, again.body]).toEqual([200, { received: 0, duplicates: 1 }]);
    expect(await q(sql`SELECT id FROM payment_transitions WHERE payment_id = ${p.id} AND origin = 'webhook'`)).toHaveLength(1);
  });

  it('an authorization event that arrives while the call is still in flight applies through the job path', async () => {
    let release!: () => void;
    gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      const waitingBefore = callsWaiting;
      const created = await gw.pay({ amount: 4200 });
      await until(async () => callsWaiting, (n) => n > waitingBefore);
      const p = await gw.waitFor(created.id, () => true);
      expect(p.state).toBe('authorizing');
      const sent = await postAuthorizationEvent(p.attempts[0]!, 4200);
      expect(sent.status).toBe(200);

      // The worker applies it: the payment authorized by the webhook, the inbox row applied, its job done.
      const authorized = await gw.waitFor(p.id, (x) => x.state === 'authorized');
      const row = await until(() => inboxRow(sent.eventId), (r) => r?.outcome !== 'pending');
      expect(row).toMatchObject({ outcome: 'applied', payment_id: p.id });
      const jobs = await until(() => jobsFor(row!.id), (j) => j[0]?.status === 'done');
      expect(jobs).toEqual([{ status: 'done', published: true, attempts: 1 }]);
      const byWebhook = await q<{ outcome: string; to_state: string }>(sql`SELECT outcome, to_state FROM payment_transitions WHERE payment_id = ${p.id} AND origin = 'webhook'`);
      expect(byWebhook).toEqual([{ outcome: 'applied', to_state: 'authorized' }]);
      expect(authorized.version).toBe(p.version + 1);
    } finally {
      gate = null;
      release();
    }
    await until(async () => (await q<{ n: string }>(sql`SELECT count(*) AS n FROM outbox WHERE status = 'pending' AND kind = 'provider_call'`))[0]!.n, (n) => n === '0');
  });

  it('a payment that moves between the judgement and the settling statement: the event is stored pending with its job instead', async () => {
    const p = await gw.waitFor((await gw.pay({ amount: 4300 })).id, settled);
    expect(p.state).toBe('authorized');
    const eventId = `evt_c${randomBytes(8).toString('hex')}`;
    const body = authorizationEvent(p.attempts[0]!, 4300, eventId);
    const s = gw.rt.webhooks;
    const verdict = s.connectors.get('stripe_c')!.verifyWebhook(Buffer.from(body), { 'stripe-signature': sign(body) }, s.now());
    if (!verdict.ok) throw new Error(verdict.reason);
    // After the payment was read and mapped, before step() and the statement: a capture is requested.
    const envs = Object.create(s.envs, {
      forSnapshot: { value: async (db: Parameters<StepEnvFactory['forSnapshot']>[0], v: string) => {
        await requestCapture(gw.rt, gw.merchantId, p, undefined, true);
        return s.envs.forSnapshot(db, v);
      } },
    }) as StepEnvFactory;
    const stored = await storeConfirmingEvent({ ...s, envs }, 'stripe_c', Buffer.from(body), '{}', verdict.events[0]!, s.now());
    expect(stored).toMatchObject({ inserted: 1, duplicates: 0 });
    expect(stored!.outboxIds).toHaveLength(1);
    const row = await inboxRow(eventId);
    expect(row).toMatchObject({ outcome: 'pending', payment_id: null, processed: false });
    expect(await q(sql`SELECT id FROM payment_transitions WHERE payment_id = ${p.id} AND origin = 'webhook'`)).toEqual([]);
    // The job path then decides it on the payment as it is (an approval already applied: ignored).
    s.kick(stored!.outboxIds);
    const settledRow = await until(() => inboxRow(eventId), (r) => r?.outcome !== 'pending');
    expect(settledRow).toMatchObject({ outcome: 'ignored', payment_id: p.id });
    expect(await jobsFor(row!.id)).toEqual([{ status: 'done', published: true, attempts: 1 }]);
    await gw.waitFor(p.id, (x) => x.state === 'captured');
  });
});
