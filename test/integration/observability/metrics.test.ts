// GET /metrics: counters of what this process did (transitions, provider calls with latency,
// idempotency replays/409/422, webhook intake) and gauges read from Postgres and Redis at scrape
// time (payments in flight and their age, needs_review, dead letters, failing deliveries,
// discrepancies, queues, breakers) — the latter the same from any process on the database.
import { sql } from 'drizzle-orm';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForPayment } from '../../../src/app/payment-service.ts';
import { startRuntime } from '../../../src/app/runtime.ts';
import type { Payment } from '../../../src/core/payment.ts';
import type { Runtime } from '../../../src/app/runtime.ts';
import { newKey, paymentBody, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { startPrivateRedis } from '../helpers/redis-server.ts';
import { REDIS_URL, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import { metricSeries, metricValue, until } from './helpers.ts';

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('obs_metrics', { authorizationWaitMs: 5_000 });
});
afterAll(async () => api?.close());

async function scrape(base = api.url): Promise<string> {
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
}

async function waitFor(id: string, done: (p: Payment) => boolean): Promise<Payment> {
  const p = await waitForPayment(api.gw.rt, api.merchantId, id, done, 15_000);
  if (p === null || !done(p)) throw new Error(`payment ${id} did not get there: ${p?.state}`);
  return p;
}

const sandbox = (account: string) => api.gw.rt.sandboxes.find((s) => s.account === account)!;

describe('GET /metrics', () => {
  it('counts transitions by edge, connector and origin, and provider calls by outcome with latency', async () => {
    const ok = await api.call('POST', '/v1/payments', { body: paymentBody() });
    expect(ok.json.status).toBe('authorized');
    const declined = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: '4000000000000002' } }) });
    expect(declined.json.status).toBe('declined');
    await sandbox('stripe_a').scheduleFault({ op: 'authorize', mode: 'error_503', count: 1 });
    const unknownFirst = await api.call('POST', '/v1/payments', { body: paymentBody() });
    await waitFor(unknownFirst.json.id, (p) => p.state === 'authorized');

    const text = await scrape();
    expect(metricValue(text, 'switchyard_transitions_total', { from: 'created', to: 'authorizing', connector: 'stripe_a', origin: 'api' })).toBe(3);
    expect(metricValue(text, 'switchyard_transitions_total', { from: 'authorizing', to: 'authorized', connector: 'stripe_a', origin: 'worker' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'switchyard_transitions_total', { from: 'authorizing', to: 'declined', connector: 'stripe_a', origin: 'worker' })).toBe(1);
    expect(metricValue(text, 'switchyard_transitions_total', { from: 'authorizing', to: 'auth_unknown', connector: 'stripe_a', origin: 'worker' })).toBe(1);
    expect(metricValue(text, 'switchyard_provider_calls_total', { connector: 'stripe_a', op: 'authorize', outcome: 'succeeded', reason: '' })).toBeGreaterThanOrEqual(2);
    expect(metricValue(text, 'switchyard_provider_calls_total', { connector: 'stripe_a', op: 'authorize', outcome: 'declined_soft', reason: '' })).toBe(1);
    expect(metricValue(text, 'switchyard_provider_calls_total', { connector: 'stripe_a', op: 'authorize', outcome: 'unknown', reason: 'server_error' })).toBe(1);
    const calls = metricValue(text, 'switchyard_provider_call_duration_seconds_count', { connector: 'stripe_a', op: 'authorize', outcome: 'succeeded' });
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(metricValue(text, 'switchyard_provider_call_duration_seconds_sum', { connector: 'stripe_a', op: 'authorize', outcome: 'succeeded' })).toBeGreaterThan(0);
    expect(metricValue(text, 'switchyard_http_requests_total', { method: 'POST', route: '/v1/payments', status: '201' })).toBeGreaterThanOrEqual(2);
  });

  it('counts idempotency replays, 409 (in progress) and 422 (key reused)', async () => {
    const key = newKey();
    const body = paymentBody();
    // The first request is held by a slow provider while the same key arrives again.
    await sandbox('stripe_a').scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 1_500, count: 1 });
    const first = api.call('POST', '/v1/payments', { idem: key, body });
    await new Promise((r) => setTimeout(r, 400));
    const concurrent = await api.call('POST', '/v1/payments', { idem: key, body });
    expect(concurrent.status).toBe(409);
    expect((await first).status).toBe(201);
    const replay = await api.call('POST', '/v1/payments', { idem: key, body });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await api.call('POST', '/v1/payments', { idem: key, body: { ...body, amount: 1 } })).status).toBe(422);

    const text = await scrape();
    expect(metricValue(text, 'switchyard_idempotency_total', { outcome: 'replayed' })).toBe(1);
    expect(metricValue(text, 'switchyard_idempotency_total', { outcome: 'in_progress' })).toBe(1);
    expect(metricValue(text, 'switchyard_idempotency_total', { outcome: 'key_reused' })).toBe(1);
  });

  it('counts provider webhooks received, rejected by reason, and ignored as stale', async () => {
    // A repeat of the authorization the gateway already applied: verified, stored, and — since it only
    // confirms the payment's current version — settled at intake as stale, with no inbound job.
    const paid = await api.call('POST', '/v1/payments', { body: paymentBody() });
    const attempt = (paid.json.attempts as readonly { id: string; provider_reference?: string }[])[0]!;
    const ref = (await api.gw.db.db.execute<{ provider_ref: string }>(sql`SELECT provider_ref FROM payment_attempts WHERE id = ${attempt.id}`)).rows[0]!.provider_ref;
    const pi = { id: ref, object: 'payment_intent', status: 'requires_capture', amount: 5000, amount_capturable: 5000, amount_received: 0, currency: 'eur', metadata: { attempt_id: attempt.id }, latest_charge: 'ch_obs_1', last_payment_error: null };
    const event = JSON.stringify({ id: 'evt_obs_1', object: 'event', type: 'payment_intent.amount_capturable_updated', created: Math.floor(Date.now() / 1000), data: { object: pi } });
    const signed = Stripe.webhooks.generateTestHeaderString({ payload: event, secret: 'whsec_a' });
    const post = (signature: string | null) => fetch(`${api.url}/webhooks/stripe_a`, { method: 'POST', headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'stripe-signature': signature }) }, body: event });
    expect((await post(signed)).status).toBe(200);
    expect((await post(null)).status).toBe(400);
    expect((await post(Stripe.webhooks.generateTestHeaderString({ payload: event, secret: 'whsec_wrong' }))).status).toBe(401);

    const text = await until(scrape, (t) => (metricValue(t, 'switchyard_webhook_events_ignored_total', { connector: 'stripe_a', reason: 'stale' }) ?? 0) >= 1);
    expect(metricValue(text, 'switchyard_webhook_events_ignored_total', { connector: 'stripe_a', reason: 'stale' })).toBe(1);
    expect(metricValue(text, 'switchyard_webhook_jobs_total', { queue: 'webhooks.inbound', result: 'ignored' })).toBeUndefined();
    expect(metricValue(text, 'switchyard_webhooks_received_total', { connector: 'stripe_a' })).toBe(1);
    expect(metricValue(text, 'switchyard_webhooks_rejected_total', { connector: 'stripe_a', reason: 'signature_header' })).toBe(1);
    expect(metricValue(text, 'switchyard_webhooks_rejected_total', { connector: 'stripe_a', reason: 'bad_signature' })).toBe(1);
  });

  it('reads shared state at scrape time: in-flight payments and age, needs_review, dead letters, failing deliveries, discrepancies, queues, breakers — the same from another process', async () => {
    const db = api.gw.db.db;
    // A captured payment later reversed by the scheme is parked for review (a legal edge).
    const p = await api.call('POST', '/v1/payments', { body: paymentBody({ capture_method: 'automatic' }) });
    await waitFor(p.json.id, (x) => x.state === 'captured');
    await db.execute(sql`UPDATE payments SET state = 'needs_review', created_at = now() - interval '2 hours' WHERE id = ${p.json.id}`);
    await db.execute(sql`INSERT INTO outbox (kind, payload, connector, run_at, status, attempts, last_error, created_at) VALUES ('provider_call', '{}'::jsonb, 'stripe_a', now(), 'dead', 8, 'boom', now() - interval '10 minutes')`);
    await db.execute(sql`INSERT INTO discrepancies (id, kind, detail, category, status) VALUES ('dsc_obs_1', 'amount_mismatch', 'test', 'amount_mismatch', 'open')`);
    const endpoint = await api.call('POST', '/v1/webhook_endpoints', { body: { url: 'http://127.0.0.1:1/hook' } });
    expect(endpoint.status).toBe(201);
    await api.call('POST', '/v1/payments', { body: paymentBody() });

    const text = await until(scrape, (t) => (metricValue(t, 'switchyard_webhook_deliveries', { state: 'failing', age: 'lt_1m' }) ?? 0) >= 1);
    expect(metricValue(text, 'switchyard_payments_needs_review')).toBe(1);
    expect(metricValue(text, 'switchyard_payments_nonterminal', { state: 'needs_review', connector: 'stripe_a' })).toBe(1);
    expect(metricValue(text, 'switchyard_payments_oldest_nonterminal_age_seconds', { state: 'needs_review', connector: 'stripe_a' })).toBeGreaterThan(7_000);
    expect(metricValue(text, 'switchyard_payments_auth_unknown')).toBe(0);
    expect(metricValue(text, 'switchyard_dead_letters', { kind: 'provider_call' })).toBe(1);
    expect(metricValue(text, 'switchyard_dead_letter_oldest_age_seconds', { kind: 'provider_call' })).toBeGreaterThan(500);
    expect(metricValue(text, 'switchyard_discrepancies_open', { category: 'amount_mismatch' })).toBe(1);
    expect(metricValue(text, 'switchyard_webhook_endpoints_failing', { failing: '1_9' })).toBe(1);
    expect(metricValue(text, 'switchyard_webhook_endpoints_failing', { failing: '50_plus' })).toBe(0);
    expect(metricValue(text, 'switchyard_webhook_deliveries', { state: 'failing', age: 'gt_1d' })).toBe(0);
    // No merchant or endpoint identifier is a label value: scraping does not reveal whose webhooks are failing.
    expect(text).not.toContain(endpoint.json.id);
    expect(text).not.toContain(api.merchantId);
    expect(metricValue(text, 'switchyard_breaker_state', { connector: 'stripe_a', state: 'closed' })).toBe(1);
    expect(metricValue(text, 'switchyard_breaker_state', { connector: 'stripe_a', state: 'open' })).toBe(0);
    expect(metricValue(text, 'switchyard_breaker_processes', { connector: 'stripe_a', state: 'closed' })).toBe(1);
    const queues = metricSeries(text, 'switchyard_queue_jobs').map((s) => s.labels['queue']);
    expect(queues).toEqual(expect.arrayContaining(['call.stripe_a', 'call.stripe_b', 'timers', 'webhooks.inbound', 'webhooks.deliveries']));
    expect(metricValue(text, 'switchyard_queue_oldest_waiting_age_seconds', { queue: 'call.stripe_a' })).toBeGreaterThanOrEqual(0);
    expect(metricValue(text, 'switchyard_indicator_read_errors')).toBe(0);

    // Another process on the same database reports the same shared state, though it did none of the work.
    let other: Runtime | null = null;
    try {
      other = await startRuntime({ role: 'api', databaseUrl: api.gw.db.url, redisUrl: REDIS_URL, configFile: api.gw.rt.config.file, queuePrefix: api.gw.prefix, log: () => undefined });
      const theirs = await other.metrics.text();
      expect(metricValue(theirs.body, 'switchyard_payments_needs_review')).toBe(1);
      expect(metricValue(theirs.body, 'switchyard_dead_letters', { kind: 'provider_call' })).toBe(1);
      expect(metricValue(theirs.body, 'switchyard_discrepancies_open', { category: 'amount_mismatch' })).toBe(1);
      // It reports the fleet's breakers from Redis: the first process's and its own (every process publishes, since every process may call providers).
      expect(metricValue(theirs.body, 'switchyard_breaker_processes', { connector: 'stripe_b', state: 'closed' })).toBe(2);
    } finally {
      await other?.stop();
    }

    // Resolved state leaves the gauges: they are read, not accumulated.
    await db.execute(sql`INSERT INTO discrepancy_resolutions (discrepancy_id, operator, note) VALUES ('dsc_obs_1', 'admin', 'test done')`);
    await db.execute(sql`UPDATE outbox SET status = 'done' WHERE status = 'dead'`);
    await new Promise((r) => setTimeout(r, 1_100));
    const after = await scrape();
    expect(metricValue(after, 'switchyard_discrepancies_open', { category: 'amount_mismatch' })).toBeUndefined();
    expect(metricValue(after, 'switchyard_dead_letters', { kind: 'provider_call' })).toBeUndefined();
  });

  it('still answers when Redis is gone: the queue gauges drop out, the read error is counted, Postgres gauges stay', async () => {
    const redis = await startPrivateRedis();
    const gw = await startTestGateway('obs_metrics_noredis', twoStripeConfig(), { role: 'api', redisUrl: redis.url });
    try {
      const before = (await gw.rt.metrics.text()).body;
      expect(metricSeries(before, 'switchyard_queue_jobs').length).toBeGreaterThan(0);
      await redis.stop();
      await new Promise((r) => setTimeout(r, 1_100));
      const after = (await gw.rt.metrics.text()).body;
      expect(metricSeries(after, 'switchyard_queue_jobs')).toEqual([]);
      expect(metricValue(after, 'switchyard_indicator_read_errors')).toBeGreaterThanOrEqual(1);
      expect(metricValue(after, 'switchyard_payments_needs_review')).toBe(0);
    } finally {
      await gw.close();
    }
  });
});
