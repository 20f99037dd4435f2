// Fault injection and outages in the Stripe sandbox, seen through the real stripe SDK.

import { setTimeout as sleep } from 'node:timers/promises';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { rejectionOf, startSandbox, stripeFor } from './helpers.ts';

let sandbox: StripeSandbox;
let stripe: Stripe;

beforeAll(async () => {
  sandbox = await startSandbox();
  stripe = stripeFor(sandbox);
});
afterAll(() => sandbox.close());

const withReference = async (reference: string) => (await sandbox.ledger()).filter((entry) => entry.reference === reference);

const authorize = (reference: string, client = stripe) =>
  client.paymentIntents.create(
    { amount: 1000, currency: 'usd', capture_method: 'manual', confirm: true, payment_method: 'pm_card_visa', metadata: { attempt_id: reference } },
    { idempotencyKey: `key-${reference}` },
  );

/** Counts the attempts the SDK makes (it retries a reset connection once even with maxNetworkRetries 0). */
function countAttempts(client: Stripe): () => number {
  let attempts = 0;
  // stripe-node types `on` as any; this is its documented signature.
  const on = client.on as (event: 'request', handler: (event: Stripe.RequestEvent) => void) => void;
  on.call(client, 'request', () => {
    attempts += 1;
  });
  return () => attempts;
}

describe('fault modes', () => {
  it('error_503 answers 503 before processing anything', async () => {
    await sandbox.scheduleFault({ op: 'authorize', mode: 'error_503', count: 1 });
    const err = await rejectionOf(authorize('att_503'));
    expect(err).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(err).toMatchObject({ statusCode: 503 });
    expect((await withReference('att_503'))).toHaveLength(0);
    // Nothing was stored under the key either: the same request now executes.
    expect((await authorize('att_503')).status).toBe('requires_capture');
  });

  it('rate_limited answers 429 after its latency, processing nothing, and lists the key it hit', async () => {
    await sandbox.scheduleFault({ op: 'authorize', mode: 'rate_limited', count: 1, latencyMs: 300 });
    const started = Date.now();
    const err = await rejectionOf(authorize('att_429'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(err).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    expect(err).toMatchObject({ statusCode: 429, code: 'rate_limit' });
    expect(await withReference('att_429')).toHaveLength(0);
    const fired = (await sandbox.faults()).filter((f) => f.mode === 'rate_limited');
    expect(fired.at(-1)).toMatchObject({ op: 'authorize', remaining: 0, hitKeys: ['key-att_429'] });
    // Nothing stored under the key: the same request now executes.
    expect((await authorize('att_429')).status).toBe('requires_capture');
  });

  it('reset_before_processing destroys the socket on every request it hits, recording nothing', async () => {
    const client = stripeFor(sandbox);
    const attempts = countAttempts(client);
    const before = sandbox.requestsReceived();
    await sandbox.scheduleFault({ op: 'authorize', mode: 'reset_before_processing', count: 2 });
    const err = await rejectionOf(authorize('att_reset', client));
    expect(err).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect(attempts()).toBe(2);
    expect(sandbox.requestsReceived() - before).toBe(2);
    expect((await withReference('att_reset'))).toHaveLength(0);
  });

  it('reset_before_processing with count 1 is absorbed by the SDK retry, and charges once', async () => {
    const client = stripeFor(sandbox);
    const attempts = countAttempts(client);
    await sandbox.scheduleFault({ op: 'authorize', mode: 'reset_before_processing', count: 1 });
    const pi = await authorize('att_reset_once', client);
    expect(attempts()).toBe(2);
    expect((await withReference('att_reset_once'))).toMatchObject([{ id: pi.id, authorized: 1000 }]);
  });

  it('accept_then_drop performs the operation, then drops the connection', async () => {
    await sandbox.scheduleFault({ op: 'authorize', mode: 'accept_then_drop', count: 2 });
    const err = await rejectionOf(authorize('att_drop'));
    expect(err).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    const [entry] = (await withReference('att_drop'));
    expect(entry).toMatchObject({ status: 'requires_capture', authorized: 1000 });
    // The SDK's own retry was a replay of the same key: still one PaymentIntent.
    expect((await withReference('att_drop'))).toHaveLength(1);
    expect((await authorize('att_drop')).id).toBe(entry?.id);
  });

  it('accept_then_drop on capture captures', async () => {
    const { id } = await authorize('att_drop_capture');
    await sandbox.scheduleFault({ op: 'capture', mode: 'accept_then_drop', count: 2 });
    expect(await rejectionOf(stripe.paymentIntents.capture(id))).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect((await withReference('att_drop_capture'))).toMatchObject([{ status: 'succeeded', captured: 1000 }]);
  });

  it('a cancel whose answer was dropped is replayed to a same-key resend, as live Stripe does; "already canceled" needs a new key', async () => {
    const { id } = await authorize('att_drop_cancel');
    await sandbox.scheduleFault({ op: 'void', mode: 'accept_then_drop', count: 2 });
    expect(await rejectionOf(stripe.paymentIntents.cancel(id, {}, { idempotencyKey: 'key-cancel-1' }))).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    const replayed = await stripe.paymentIntents.cancel(id, {}, { idempotencyKey: 'key-cancel-1' });
    expect(replayed.status).toBe('canceled');
    expect(replayed.lastResponse.headers['idempotent-replayed']).toBe('true');
    const err = await rejectionOf(stripe.paymentIntents.cancel(id, {}, { idempotencyKey: 'key-cancel-2' }));
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(err).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state', payment_intent: { id, status: 'canceled' } });
  });

  it('already_done performs, drops the answer and stores none: the same-key resend gets "already in that state", stored from then on', async () => {
    const { id } = await authorize('att_already_done');
    await sandbox.scheduleFault({ op: 'void', mode: 'already_done', count: 1 });
    const attempts = countAttempts(stripe);
    // The SDK resends the dropped request once by itself, with the same key: it meets the refusal.
    const err = await rejectionOf(stripe.paymentIntents.cancel(id, {}, { idempotencyKey: 'key-already-1' }));
    expect(attempts()).toBe(2);
    expect(err).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state', payment_intent: { id, status: 'canceled' } });
    expect(await withReference('att_already_done')).toMatchObject([{ cancelled: true }]);
    const again = await rejectionOf(stripe.paymentIntents.cancel(id, {}, { idempotencyKey: 'key-already-1' }));
    expect(again).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state', headers: expect.objectContaining({ 'idempotent-replayed': 'true' }) as unknown });
  });

  it('latency with process=before performs on arrival, even when the client gives up', async () => {
    await sandbox.scheduleFault({ op: 'authorize', mode: 'latency', count: 1, latencyMs: 600, process: 'before' });
    const err = await rejectionOf(authorize('att_slow_before', stripeFor(sandbox, { timeout: 200 })));
    expect(err).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect((err as Stripe.errors.StripeConnectionError).message).toMatch(/timeout/);
    expect((await withReference('att_slow_before'))).toMatchObject([{ authorized: 1000 }]);
  });

  it('latency with process=after performs when the delay ends', async () => {
    await sandbox.scheduleFault({ op: 'authorize', mode: 'latency', count: 1, latencyMs: 500, process: 'after' });
    const err = await rejectionOf(authorize('att_slow_after', stripeFor(sandbox, { timeout: 150 })));
    expect(err).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect((await withReference('att_slow_after'))).toHaveLength(0);
    await sleep(500);
    expect((await withReference('att_slow_after'))).toMatchObject([{ authorized: 1000 }]);
  });

  it('latency delays the answer by latency_ms', async () => {
    await sandbox.scheduleFault({ op: 'create', mode: 'latency', count: 1, latencyMs: 300 });
    const started = Date.now();
    await stripe.paymentIntents.create({ amount: 100, currency: 'usd' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('targets faults by op, and op any hits every request', async () => {
    const { id } = await authorize('att_ops');
    await sandbox.scheduleFault({ op: 'refund', mode: 'error_503', count: 1 });
    const captured = await stripe.paymentIntents.capture(id);
    expect(captured.status).toBe('succeeded');
    expect(await rejectionOf(stripe.refunds.create({ payment_intent: id }))).toMatchObject({ statusCode: 503 });
    await sandbox.scheduleFault({ op: 'any', mode: 'error_503', count: 1 });
    expect(await rejectionOf(stripe.paymentIntents.retrieve(id))).toMatchObject({ statusCode: 503 });
    expect((await stripe.paymentIntents.retrieve(id)).status).toBe('succeeded');
  });

  it('op resume targets the PaymentIntent retrieve (how the gateway resumes after 3-D Secure), and nothing else', async () => {
    await sandbox.scheduleFault({ op: 'resume', mode: 'error_503', count: 1 });
    // A confirm (authorize) and a capture pass untouched; the next retrieve takes the fault.
    const { id } = await authorize('att_resume');
    await stripe.paymentIntents.capture(id);
    expect(await rejectionOf(stripe.paymentIntents.retrieve(id))).toMatchObject({ statusCode: 503 });
    expect((await stripe.paymentIntents.retrieve(id)).status).toBe('succeeded');
    expect((await sandbox.faults()).at(-1)).toMatchObject({ op: 'resume', remaining: 0 });
  });

  it('op resume hits the retrieve (the call after authentication), not the confirm; the ledger keeps the customer\'s completion', async () => {
    await sandbox.scheduleFault({ op: 'resume', mode: 'error_503', count: 1 });
    const pi = await stripe.paymentIntents.create(
      { amount: 1000, currency: 'usd', capture_method: 'manual', confirm: true, payment_method: 'pm_card_authenticationRequired', return_url: 'http://127.0.0.1:9/back', metadata: { attempt_id: 'att_resume_auth' } },
      { idempotencyKey: 'key-att_resume_auth' },
    );
    expect(pi.status).toBe('requires_action');
    expect((await withReference('att_resume_auth'))[0]?.authentication).toMatchObject({ completed_at: null, outcome: null });
    expect(await rejectionOf(stripe.paymentIntents.retrieve(pi.id))).toMatchObject({ statusCode: 503 });
    // The customer completes on the hosted page: a POST of its form.
    const url = new URL(pi.next_action!.redirect_to_url!.url!);
    const res = await fetch(`http://127.0.0.1:${sandbox.port}${url.pathname}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${url.searchParams.get('token')}&outcome=complete` });
    expect(res.status).toBe(303);
    expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe('requires_capture');
    const [entry] = await withReference('att_resume_auth');
    expect(entry?.authentication?.outcome).toBe('completed');
    expect(Date.parse(entry!.authentication!.completed_at!)).toBeGreaterThanOrEqual(Date.parse(entry!.authentication!.asked_at));
  });
});

describe('outage', () => {
  it('refuses connections for n seconds, then listens again on the same port', async () => {
    const own = await startSandbox();
    const client = stripeFor(own);
    await client.paymentIntents.create({ amount: 100, currency: 'usd' }); // leaves a keep-alive socket open
    const port = own.port;
    await own.outage(1);
    const started = Date.now();
    const err = await rejectionOf(client.paymentIntents.create({ amount: 100, currency: 'usd' }));
    expect(err).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect((err as Stripe.errors.StripeConnectionError).detail).toMatchObject({ code: 'ECONNREFUSED' });
    await sleep(Math.max(0, 1_100 - (Date.now() - started)));
    const pi = await client.paymentIntents.create({ amount: 100, currency: 'usd' });
    expect(pi.status).toBe('requires_payment_method');
    expect(own.port).toBe(port);
    await own.close();
  });

  it('destroys requests in flight, and outage(0) ends an outage early', async () => {
    const own = await startSandbox();
    const client = stripeFor(own);
    await own.scheduleFault({ op: 'create', mode: 'latency', count: 1, latencyMs: 2_000, process: 'after' });
    const inFlight = rejectionOf(client.paymentIntents.create({ amount: 100, currency: 'usd' }));
    await sleep(100);
    await own.outage(30);
    expect(await inFlight).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    await own.outage(0);
    expect((await client.paymentIntents.create({ amount: 100, currency: 'usd' })).object).toBe('payment_intent');
    await own.close();
  });
});
