// Provider intake for Stripe, with the SDK's own signer as the other side: what verifies is stored
// once and acknowledged; what does not is answered 400/401, counted by account and reason, logged
// in one line without the body, and writes nothing.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookGateway } from './helpers.ts';
import type { WebhookGateway } from './helpers.ts';

const OLD = 'whsec_old_secret';
const NEW = 'whsec_new_secret';
let gw: WebhookGateway;
const logs: string[] = [];

beforeAll(async () => {
  gw = await startWebhookGateway('wh_stripe_intake', `
connectors:
  stripe_a: { type: stripe, endpoint: "http://127.0.0.1:9", secret_key: sk_test_a, webhook_secrets: [${NEW}, ${OLD}] }
routing:
  default: { priority: [stripe_a] }
`, { log: (l) => logs.push(l) });
});

async function rejectedCount(connector: string, reason: string): Promise<number> {
  const { values } = await gw.rt.metrics.registry.getSingleMetric('switchyard_webhooks_rejected_total')!.get();
  return values.find((v) => v.labels['connector'] === connector && v.labels['reason'] === reason)?.value ?? 0;
}

const allRows = sql`SELECT count(*) AS n FROM inbound_events`;
afterAll(async () => gw?.close());

function eventBody(type = 'payment_intent.amount_capturable_updated'): string {
  const id = `evt_${randomBytes(8).toString('hex')}`;
  return JSON.stringify({
    id, object: 'event', type, created: Math.floor(Date.now() / 1000), livemode: false,
    data: { object: { id: `pi_${randomBytes(6).toString('hex')}`, object: 'payment_intent', status: 'requires_capture', amount: 1000, amount_capturable: 1000, amount_received: 0, currency: 'eur', latest_charge: 'ch_1', metadata: { attempt_id: `att_missing${randomBytes(4).toString('hex')}` } } },
  });
}

const sign = (payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)) => Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });

async function post(body: string, signature: string | undefined) {
  const res = await fetch(`${gw.url}/webhooks/stripe_a`, { method: 'POST', headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { 'stripe-signature': signature }) }, body });
  return { status: res.status, body: await res.text() };
}

async function rows(eventId: string) {
  const r = await gw.db.db.execute<{ outcome: string; verified: boolean; n: string }>(sql`SELECT outcome, verified, count(*) OVER () AS n FROM inbound_events WHERE provider_event_id = ${eventId}`);
  return r.rows;
}

const idOf = (body: string) => (JSON.parse(body) as { id: string }).id;

describe('Stripe intake', () => {
  it('accepts an event signed with the current secret, and with the previous one during rotation', async () => {
    for (const secret of [NEW, OLD]) {
      const body = eventBody();
      const res = await post(body, sign(body, secret));
      expect(res.status).toBe(200);
      expect(await rows(idOf(body))).toEqual([expect.objectContaining({ verified: true, outcome: expect.stringMatching(/pending|failed|applied|ignored/) as string })]);
    }
  });

  it('acknowledges a duplicate delivery and stores it once (one processing job)', async () => {
    const body = eventBody();
    const first = await post(body, sign(body, NEW));
    const again = await post(body, sign(body, NEW));
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(JSON.parse(again.body)).toEqual({ received: 0, duplicates: 1 });
    expect(await rows(idOf(body))).toHaveLength(1);
    // Jobs the intake wrote run at once (run_at = their request's time). The worker may already have
    // tried the first: the event names no payment we know, so it scheduled a retry a second later,
    // which is not a second delivery.
    const jobs = await gw.db.db.execute<{ n: string }>(sql`
      SELECT count(*) AS n FROM outbox o JOIN inbound_events i ON (o.payload->>'inboundEventId')::bigint = i.id
       WHERE o.kind = 'inbound_event' AND i.provider_event_id = ${idOf(body)} AND o.run_at < i.received_at + interval '500 milliseconds'`);
    expect(Number(jobs.rows[0]!.n)).toBe(1);
  });

  const rejected: [string, () => { body: string; signature: string | undefined }, number, string][] = [
    ['a tampered body', () => { const b = eventBody(); return { body: b.replace('"amount":1000', '"amount":9000'), signature: sign(b, NEW) }; }, 401, 'bad_signature'],
    ['a wrong secret', () => { const b = eventBody(); return { body: b, signature: sign(b, 'whsec_someone_else') }; }, 401, 'bad_signature'],
    ['a stale timestamp (301 s)', () => { const b = eventBody(); return { body: b, signature: sign(b, NEW, Math.floor(Date.now() / 1000) - 301) }; }, 401, 'stale_timestamp'],
    ['a space after the comma', () => { const b = eventBody(); return { body: b, signature: sign(b, NEW).replace(',', ', ') }; }, 400, 'signature_header'],
    ['no signature', () => ({ body: eventBody(), signature: undefined }), 400, 'signature_header'],
  ];
  for (const [what, make, status, reason] of rejected) {
    it(`rejects ${what} with ${status}: no row written, counted as ${reason}, one log line without the body`, async () => {
      const { body, signature } = make();
      const before = await gw.db.db.execute<{ n: string }>(allRows);
      const counted = await rejectedCount('stripe_a', reason);
      const logged = logs.length;
      const res = await post(body, signature);
      expect(res.status).toBe(status);
      const after = await gw.db.db.execute<{ n: string }>(allRows);
      expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
      expect(await rows(idOf(body))).toHaveLength(0);
      expect(await rejectedCount('stripe_a', reason)).toBe(counted + 1);
      const lines = logs.slice(logged).filter((l) => l.includes('webhooks: stripe_a rejected'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^webhooks: stripe_a rejected ${status} \\(${Buffer.byteLength(body)} bytes\\): `));
      expect(lines[0]).not.toContain(idOf(body));
      expect(lines[0]).not.toContain('v1=');
    });
  }

  it('counts requests to an account that is not configured under one label, and writes nothing', async () => {
    const before = await gw.db.db.execute<{ n: string }>(allRows);
    const counted = await rejectedCount('(unknown)', 'unknown_account');
    const res = await fetch(`${gw.url}/webhooks/attacker_${randomBytes(4).toString('hex')}`, { method: 'POST', body: eventBody() });
    expect(res.status).toBe(404);
    expect(await rejectedCount('(unknown)', 'unknown_account')).toBe(counted + 1);
    expect((await gw.db.db.execute<{ n: string }>(allRows)).rows[0]!.n).toBe(before.rows[0]!.n);
  });

  it('answers 404 for an account that is not configured', async () => {
    const body = eventBody();
    const res = await fetch(`${gw.url}/webhooks/nobody`, { method: 'POST', headers: { 'stripe-signature': sign(body, NEW) }, body });
    expect(res.status).toBe(404);
  });
});
