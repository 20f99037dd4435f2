// Webhooks from the Stripe sandbox, verified with the SDK's own verifier (stripe.webhooks.constructEvent).

import Stripe from 'stripe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STRIPE_DEFAULT_DECLINES } from '../../../src/connectors/stripe/defaults.ts';
import { normalizeStripeEvent } from '../../../src/connectors/stripe/webhook.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { rejectionOf, startSandbox, startWebhookReceiver, stripeFor, WEBHOOK_SECRET } from './helpers.ts';
import type { ReceivedWebhook, WebhookReceiver } from './helpers.ts';

let sandbox: StripeSandbox;
let stripe: Stripe;
let receiver: WebhookReceiver;

beforeEach(async () => {
  receiver = await startWebhookReceiver();
  sandbox = await startSandbox({ webhook: { url: receiver.url, secret: WEBHOOK_SECRET }, webhookRetry: { baseMs: 20 } });
  stripe = stripeFor(sandbox);
});
afterEach(async () => {
  await sandbox.close();
  await receiver.close();
});

const verify = (webhook: ReceivedWebhook): Stripe.Event => stripe.webhooks.constructEvent(webhook.body, webhook.signature, WEBHOOK_SECRET);

const authorize = () =>
  stripe.paymentIntents.create(
    { amount: 1000, currency: 'usd', capture_method: 'manual', confirm: true, payment_method: 'pm_card_visa', metadata: { attempt_id: 'att_wh' } },
    { idempotencyKey: 'key-wh' },
  );

describe('webhook delivery', () => {
  it('sends each state change as a signed Stripe event, in order', async () => {
    const pi = await authorize();
    await stripe.paymentIntents.capture(pi.id);
    const events = (await receiver.waitFor(5)).map(verify);
    expect(events.map((e) => e.type)).toEqual([
      'payment_intent.created',
      'charge.succeeded',
      'payment_intent.amount_capturable_updated',
      'charge.captured',
      'payment_intent.succeeded',
    ]);
    const [created] = events;
    expect(created).toMatchObject({ object: 'event', livemode: false, api_version: expect.any(String) as string, request: { idempotency_key: 'key-wh' } });
    expect(created?.id).toMatch(/^evt_/);
    expect(created?.data.object).toMatchObject({ object: 'payment_intent', id: pi.id, metadata: { attempt_id: 'att_wh' } });
    expect(events[4]?.data.object).toMatchObject({ status: 'succeeded', amount_received: 1000 });
  });

  it('signs the exact bytes: a tampered body or another secret fails verification', async () => {
    await stripe.paymentIntents.create({ amount: 100, currency: 'usd' });
    const [webhook] = await receiver.waitFor(1);
    if (webhook === undefined) throw new Error('no webhook');
    expect(() => stripe.webhooks.constructEvent(webhook.body.replace('100', '999'), webhook.signature, WEBHOOK_SECRET)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    expect(() => stripe.webhooks.constructEvent(webhook.body, webhook.signature, 'whsec_other')).toThrow(Stripe.errors.StripeSignatureVerificationError);
    expect(webhook.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  });

  it('reports declines, cancels, refunds, refund failures and disputes', async () => {
    await rejectionOf(stripe.paymentIntents.create({ amount: 500, currency: 'usd', confirm: true, payment_method: 'pm_card_visa_chargeDeclined' }));
    const voided = await authorize();
    await stripe.paymentIntents.cancel(voided.id);
    const pi = await stripe.paymentIntents.create({ amount: 800, currency: 'usd', confirm: true, payment_method: 'pm_card_mastercard' });
    const refund = await stripe.refunds.create({ payment_intent: pi.id, amount: 300 });
    await sandbox.failRefund(refund.id);
    await sandbox.createDispute(pi.id);
    await sandbox.webhooksIdle();
    const types = receiver.received.map(verify).map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining([
        'charge.failed',
        'payment_intent.payment_failed',
        'payment_intent.canceled',
        'payment_intent.succeeded',
        'refund.created',
        'charge.refunded',
        'refund.updated',
        'refund.failed',
        'charge.dispute.created',
      ]),
    );
    const dispute = receiver.received.map(verify).find((e) => e.type === 'charge.dispute.created');
    expect(dispute?.data.object).toMatchObject({ object: 'dispute', amount: 800, payment_intent: pi.id });
  });

  it('renders charges as the pinned API version does: no embedded refunds unless expanded; refunds are listed by charge', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 800, currency: 'usd', confirm: true, payment_method: 'pm_card_mastercard' });
    const first = await stripe.refunds.create({ payment_intent: pi.id, amount: 300 });
    const second = await stripe.refunds.create({ payment_intent: pi.id, amount: 200 });
    const chargeId = pi.latest_charge as string;
    // Since 2022-11-15 the charge does not carry `refunds`; `expand[]=refunds` brings them back.
    const plain = await stripe.charges.retrieve(chargeId);
    expect(Object.hasOwn(plain, 'refunds')).toBe(false);
    expect(plain).toMatchObject({ amount_refunded: 500, refunded: false });
    expect((await stripe.charges.retrieve(chargeId, { expand: ['refunds'] })).refunds?.data.map((r) => r.id)).toEqual([second.id, first.id]);
    const viaIntent = await stripe.paymentIntents.retrieve(pi.id, { expand: ['latest_charge'] });
    expect(Object.hasOwn(viaIntent.latest_charge as object, 'refunds')).toBe(false);
    // The refunds list, newest first, by charge or PaymentIntent, paginated.
    expect((await stripe.refunds.list({ charge: chargeId })).data.map((r) => r.id)).toEqual([second.id, first.id]);
    expect((await stripe.refunds.list({ payment_intent: pi.id, limit: 1 }))).toMatchObject({ has_more: true, data: [{ id: second.id }] });
    const all: string[] = [];
    for await (const r of stripe.refunds.list({ charge: chargeId, limit: 1 })) all.push(r.id);
    expect(all).toEqual([second.id, first.id]);
    await sandbox.webhooksIdle();
    const refundedEvents = receiver.received.map(verify).filter((e) => e.type === 'charge.refunded');
    const refunded = refundedEvents.map((e) => e.data.object);
    expect(refunded.map((c) => c.amount_refunded)).toEqual([300, 500]);
    expect(refunded.every((c) => !Object.hasOwn(c, 'refunds'))).toBe(true);
    // The gateway's connector reads them from amount_refunded (it used to read the embedded list, and saw nothing).
    expect(refundedEvents.flatMap((e) => normalizeStripeEvent(e, STRIPE_DEFAULT_DECLINES))).toMatchObject([
      { kind: 'refund_total', amount: 300, currency: 'USD', providerRef: pi.id },
      { kind: 'refund_total', amount: 500, currency: 'USD', providerRef: pi.id },
    ]);
  });

  it('*.updated events carry previous_attributes (refund.updated, charge.dispute.updated)', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 800, currency: 'usd', confirm: true, payment_method: 'pm_card_mastercard' });
    const refund = await stripe.refunds.create({ payment_intent: pi.id, amount: 300 });
    await sandbox.failRefund(refund.id);
    const dispute = await sandbox.createDispute(pi.id, { amount: 500 });
    await sandbox.advanceDispute(String(dispute['id']), 'under_review');
    await sandbox.webhooksIdle();
    const updated = receiver.received.map(verify).filter((e) => e.type.endsWith('.updated'));
    expect(updated.map((e) => [e.type, e.data.previous_attributes])).toEqual([
      ['refund.updated', { status: 'succeeded', failure_reason: null }],
      ['charge.dispute.updated', { status: 'needs_response' }],
    ]);
    // With the previous status the connector tells a refund returned after success from one that failed.
    expect(normalizeStripeEvent(updated[0]!, STRIPE_DEFAULT_DECLINES)).toMatchObject([{ kind: 'refund_reversed', amount: 300, modificationRef: refund.id }]);
  });

  it('retries a non-2xx answer with a short backoff', async () => {
    receiver.answerWith([500, 503]);
    await stripe.paymentIntents.create({ amount: 100, currency: 'usd' });
    await sandbox.webhooksIdle();
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((w) => verify(w).id)).size).toBe(1);
    expect((await sandbox.webhookDeliveries()).map((d) => d.status)).toEqual([500, 503, 200]);
  });

  it('gives up after a bounded number of attempts', async () => {
    receiver.answerWith([500, 500, 500, 500, 500, 500]);
    await stripe.paymentIntents.create({ amount: 100, currency: 'usd' });
    await sandbox.webhooksIdle();
    expect(receiver.received).toHaveLength(5);
  });

  it('keeps retrying a receiver that fails (5xx) longer than one that refuses (4xx), when told to (switchyard sandbox does)', async () => {
    const patient = await startSandbox({ webhook: { url: receiver.url, secret: WEBHOOK_SECRET }, webhookRetry: { baseMs: 5, transientAttempts: 8 } });
    try {
      const client = stripeFor(patient);
      receiver.answerWith([500, 503, 500, 502, 500, 500, 500]);
      await client.paymentIntents.create({ amount: 100, currency: 'usd' });
      await patient.webhooksIdle();
      expect((await patient.webhookDeliveries()).map((d) => d.status)).toEqual([500, 503, 500, 502, 500, 500, 500, 200]);
      receiver.answerWith([400, 400, 400, 400, 400, 400, 400, 400]);
      await client.paymentIntents.create({ amount: 200, currency: 'usd' });
      await patient.webhooksIdle();
      expect((await patient.webhookDeliveries()).slice(8).map((d) => d.status)).toEqual([400, 400, 400, 400, 400]);
    } finally {
      await patient.close();
    }
  });
});

describe('webhook settings', () => {
  it('sends nothing when disabled', async () => {
    await sandbox.configureWebhooks({ enabled: false });
    await authorize();
    await sandbox.webhooksIdle();
    expect(receiver.received).toHaveLength(0);
  });

  it('duplicates every event when duplicate is 1', async () => {
    await sandbox.configureWebhooks({ duplicate: 1 });
    await stripe.paymentIntents.create({ amount: 100, currency: 'usd' });
    const [first, second] = (await receiver.waitFor(2)).map(verify);
    expect(second?.id).toBe(first?.id);
  });

  it('reorders the events of a burst', async () => {
    await sandbox.configureWebhooks({ reorder: true });
    await authorize();
    const types = (await receiver.waitFor(3)).map(verify).map((e) => e.type);
    expect(types).toEqual(['payment_intent.amount_capturable_updated', 'charge.succeeded', 'payment_intent.created']);
  });

  it('delays delivery by delay_ms', async () => {
    await sandbox.configureWebhooks({ delayMs: 300 });
    const sentAt = Date.now();
    await stripe.paymentIntents.create({ amount: 100, currency: 'usd' });
    const [webhook] = await receiver.waitFor(1);
    expect((webhook?.at ?? 0) - sentAt).toBeGreaterThanOrEqual(290);
  });
});
