// Outbound merchant webhooks: endpoints API, one delivery per subscribed endpoint, JWS signatures
// that verify with jose against the published JWKS, a failing endpoint retried on its schedule
// (and dead after three days on an injected clock) while the others get theirs, a slow endpoint
// that blocks nobody, manual redelivery and the attempt log.
import { compactVerify, createRemoteJWKSet } from 'jose';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPayment } from '../../../src/store/payment-queries.ts';
import { outbox } from '../../../src/store/schema.ts';
import type { MerchantEventRowPayload } from '../../../src/resources/event-body.ts';
import { recordMerchantEvent } from '../../../src/store/merchant-event-record.ts';
import { settled } from '../helpers/runtime.ts';
import { startReceiver, startWebhookGateway, until } from './helpers.ts';
import type { Receiver, WebhookGateway } from './helpers.ts';

let gw: WebhookGateway;
let rx: Receiver;
let clockOffsetMs = 0;
const DAY = 24 * 3600_000;

beforeAll(async () => {
  rx = await startReceiver();
  rx.behave('/fail', { status: 500 });
  rx.behave('/slow', { delayMs: 4_000 });
  gw = await startWebhookGateway('wh_deliveries', `
connectors:
  stripe_a: { type: stripe, secret_key: sk_test_d, webhook_secrets: [whsec_d] }
routing:
  default: { priority: [stripe_a] }
`, {
    now: () => new Date(Date.now() + clockOffsetMs),
    webhooks: { deliveryTimeoutMs: 1_000, deliverySchedule: { baseMs: 300, capMs: 1_000 }, random: () => 1 },
  });
});
afterAll(async () => {
  await gw?.close();
  await rx?.close();
});

const endpoints: Record<string, string> = {};
const jwksUrls: Record<string, string> = {};

describe('webhook endpoints API', () => {
  it('refuses an invalid endpoint with a problem+json naming the field', async () => {
    const bad = await gw.api('POST', '/v1/webhook_endpoints', { url: 'ftp://example.com', events: ['payment.nope'] });
    expect(bad.status).toBe(400);
    expect(bad.contentType).toMatch(/^application\/problem\+json/);
    expect(bad.body).toMatchObject({ code: 'validation_error', status: 400 });
    expect((bad.body['errors'] as { path: string }[]).map((e) => e.path).sort()).toEqual(['events.0', 'url']);
  });

  it('creates, lists and deletes endpoints, scoped to the merchant', async () => {
    for (const [name, events] of [['ok', undefined], ['fail', ['payment.authorized']], ['slow', undefined], ['other', ['refund.succeeded']]] as const) {
      const r = await gw.api('POST', '/v1/webhook_endpoints', { url: `${rx.url}/${name}`, ...(events === undefined ? {} : { events }) });
      expect(r.status).toBe(201);
      endpoints[name] = r.body['id'] as string;
      jwksUrls[name] = (r.body['signing'] as { jwks_url: string }).jwks_url;
    }
    const list = await gw.api('GET', '/v1/webhook_endpoints');
    expect((list.body['data'] as { id: string }[]).map((e) => e.id).sort()).toEqual(Object.values(endpoints).sort());
    expect((await gw.api('DELETE', `/v1/webhook_endpoints/${endpoints['other']}`)).status).toBe(200);
    expect((await gw.api('DELETE', `/v1/webhook_endpoints/${endpoints['other']}`)).status).toBe(404);
    const anonymous = await fetch(`${gw.url}/v1/webhook_endpoints`);
    expect(anonymous.status).toBe(401);
  });
});

describe('deliveries', () => {
  let eventId = '';

  it('delivers payment.authorized to every subscribed endpoint, signed so that jose verifies it against the JWKS; the slow one blocks nobody', async () => {
    const started = Date.now();
    const p = await gw.waitFor((await gw.pay()).id, settled);
    expect(p.state).toBe('authorized');
    // The /ok delivery, whichever endpoint's came first (deliveries are taken fairly, not in order).
    const ok = (await rx.waitFor((r) => r.some((x) => x.path === '/ok'))).find((x) => x.path === '/ok');
    expect(ok!.at - started).toBeLessThan(3_000);
    // Each endpoint's own key set: what its merchant pins.
    const jwks = createRemoteJWKSet(new URL(jwksUrls['ok']!));
    // What docs/webhooks.md tells merchants to do:
    const [h, payload, s] = String(ok!.headers['switchyard-signature']).split('.');
    expect(payload).toBe('');
    // Signed with this endpoint's own key (its kid names the endpoint and key version).
    expect(JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')), `delivery ${JSON.stringify({ path: ok!.path, headers: ok!.headers })}`).toMatchObject({ alg: 'ES256', kid: `${endpoints['ok']}.v1` });
    const { protectedHeader } = await compactVerify(`${h}.${ok!.body.toString('base64url')}.${s}`, jwks, { algorithms: ['ES256'] });
    expect(Math.abs(Date.now() / 1000 - (protectedHeader.iat as number))).toBeLessThan(300);
    expect(protectedHeader.kid).toBe(`${endpoints['ok']}.v1`);
    const body = JSON.parse(ok!.body.toString('utf8')) as { id: string; type: string; data: { payment: { id: string; status: string } } };
    expect(body).toMatchObject({ type: 'payment.authorized', data: { payment: { id: p.id, status: 'authorized' } } });
    expect(ok!.headers['switchyard-event-id']).toBe(body.id);
    eventId = body.id;
    // A tampered body does not verify.
    const tampered = Buffer.from(ok!.body.toString('utf8').replace('authorized', 'captured!!'));
    await expect(compactVerify(`${h}.${tampered.toString('base64url')}.${s}`, jwks)).rejects.toThrow();
  });

  it('retries the failing endpoint with exponential backoff and shows every attempt on the event', async () => {
    const view = await until(() => gw.api('GET', `/v1/events/${eventId}`), (r) => (r.body['deliveries'] as { endpoint_id: string; attempts: number }[]).some((d) => d.endpoint_id === endpoints['fail'] && d.attempts >= 3));
    const deliveries = view.body['deliveries'] as { endpoint_id: string; status: string; attempts: number; attempt_log: { at: string; status_code: number | null; error: string | null }[] }[];
    const fail = deliveries.find((d) => d.endpoint_id === endpoints['fail'])!;
    expect(fail.status).toBe('pending');
    expect(fail.attempt_log.slice(0, 3).map((a) => a.status_code)).toEqual([500, 500, 500]);
    const at = fail.attempt_log.map((a) => Date.parse(a.at));
    // random() = 1: waits are base·2^(n-1) exactly (300, 600, then capped at 1000), plus processing time.
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(300);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(600);
    const okDelivery = deliveries.find((d) => d.endpoint_id === endpoints['ok'])!;
    expect([okDelivery.status, okDelivery.attempts]).toEqual(['succeeded', 1]);
    const slow = await until(() => gw.api('GET', `/v1/events/${eventId}`), (r) => (r.body['deliveries'] as { endpoint_id: string; attempts: number }[]).some((d) => d.endpoint_id === endpoints['slow'] && d.attempts >= 1));
    const slowLog = (slow.body['deliveries'] as { endpoint_id: string; attempt_log: { error: string | null }[] }[]).find((d) => d.endpoint_id === endpoints['slow'])!.attempt_log;
    expect(slowLog[0]!.error).toMatch(/no answer within 1000 ms/);
  });

  it('a manual redelivery sends the event again', async () => {
    const before = rx.received.filter((r) => r.path === '/ok').length;
    const r = await gw.api('POST', `/v1/events/${eventId}/redeliver`, { endpoint_id: endpoints['ok'] });
    expect(r.status).toBe(202);
    await rx.waitFor((all) => all.filter((x) => x.path === '/ok').length === before + 1);
    expect((await gw.api('POST', '/v1/events/evt_nope/redeliver')).status).toBe(404);
  });

  it('gives up after three days: the delivery is dead and stays visible', async () => {
    rx.behave('/slow', { status: 500 });
    clockOffsetMs = 3 * DAY + 3600_000;
    const view = await until(() => gw.api('GET', `/v1/events/${eventId}`), (r) => (r.body['deliveries'] as { endpoint_id: string; status: string }[]).find((d) => d.endpoint_id === endpoints['fail'])?.status === 'dead', 20_000);
    const fail = (view.body['deliveries'] as { endpoint_id: string; next_attempt_at: string | null; last_status_code: number }[]).find((d) => d.endpoint_id === endpoints['fail'])!;
    expect([fail.next_attempt_at, fail.last_status_code]).toEqual([null, 500]);
  });
});

describe('merchant_event outbox rows written before transitions recorded their own events', () => {
  it('are still fanned out by the worker, once: a second run of the same row records nothing', async () => {
    clockOffsetMs = 0;
    const db = gw.rt.database.db;
    const p = await gw.waitFor((await gw.pay()).id, settled);
    const payment = (await loadPayment(db, gw.merchantId, p.id))!;
    const payload: MerchantEventRowPayload = { type: 'merchant_event', event: 'payment.authorized', payment };
    const [row] = await db.insert(outbox).values({ paymentId: p.id, kind: 'merchant_event', payload, runAt: new Date() }).returning({ id: outbox.id });
    gw.rt.relay.kick([row!.id]);
    const events = await until(
      () => db.execute<{ id: string }>(sql`SELECT id FROM merchant_events WHERE source_outbox_id = ${row!.id}`).then((r) => r.rows),
      (r) => r.length === 1,
    );
    await rx.waitFor((all) => all.some((x) => x.path === '/ok' && x.headers['switchyard-event-id'] === events[0]!.id));
    const again = await db.transaction((tx) => recordMerchantEvent(tx, payload, new Date(), row!.id));
    expect(again).toMatchObject({ created: false, deliveries: 0, outboxIds: [] });
    const count = await db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM merchant_events WHERE source_outbox_id = ${row!.id}`);
    expect(count.rows[0]!.n).toBe(1);
  });
});
