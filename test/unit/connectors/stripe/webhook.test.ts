import { describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { STRIPE_DEFAULT_DECLINES } from '../../../../src/connectors/stripe/defaults.ts';
import { normalizeStripeEvent, stripeSignatureHeader, verifyStripeSignature, verifyStripeWebhook } from '../../../../src/connectors/stripe/webhook.ts';
import { pi, refundObject } from './fixtures.ts';

const SECRET = 'whsec_current';
const OLD = 'whsec_previous';
const now = new Date('2026-11-30T12:00:00Z');
const t = Math.floor(now.getTime() / 1000);
const body = Buffer.from(JSON.stringify({ id: 'evt_1', object: 'event', type: 'payment_intent.amount_capturable_updated', created: t, data: { object: { ...pi({ status: 'requires_capture', amount_capturable: 1000 }) } } }));

describe('Stripe-Signature verification', () => {
  it('accepts a header the official SDK generates, and the SDK accepts ours', () => {
    const sdkHeader = Stripe.webhooks.generateTestHeaderString({ payload: body.toString(), secret: SECRET, timestamp: t });
    expect(verifyStripeSignature(body, sdkHeader, [SECRET], now)).toEqual({ ok: true });
    const ours = stripeSignatureHeader(body, SECRET, t);
    expect(() => Stripe.webhooks.constructEvent(body, ours, SECRET, 300, undefined, now.getTime())).not.toThrow();
  });

  it('accepts any active secret (rotation) and any of several v1 entries', () => {
    expect(verifyStripeSignature(body, stripeSignatureHeader(body, OLD, t), [OLD, SECRET], now).ok).toBe(true);
    const both = `${stripeSignatureHeader(body, 'whsec_other', t)},v1=${stripeSignatureHeader(body, SECRET, t).split('v1=')[1] ?? ''}`;
    expect(verifyStripeSignature(body, both, [SECRET], now).ok).toBe(true);
    expect(verifyStripeSignature(body, stripeSignatureHeader(body, OLD, t), [SECRET], now)).toMatchObject({ ok: false, status: 401 });
  });

  it('refuses a space after the comma, as stripe-node does', () => {
    const spaced = stripeSignatureHeader(body, SECRET, t).replace(',', ', ');
    expect(verifyStripeSignature(body, spaced, [SECRET], now)).toMatchObject({ ok: false, status: 400 });
  });

  it('refuses a tampered body', () => {
    const header = stripeSignatureHeader(body, SECRET, t);
    const tampered = Buffer.from(body.toString().replace('1000', '9000'));
    expect(verifyStripeSignature(tampered, header, [SECRET], now)).toMatchObject({ ok: false, status: 401 });
  });

  it('refuses a timestamp older than 300 s; a future one passes like stripe-node', () => {
    expect(verifyStripeSignature(body, stripeSignatureHeader(body, SECRET, t - 301), [SECRET], now)).toMatchObject({ ok: false, status: 401 });
    expect(verifyStripeSignature(body, stripeSignatureHeader(body, SECRET, t - 299), [SECRET], now).ok).toBe(true);
    expect(verifyStripeSignature(body, stripeSignatureHeader(body, SECRET, t + 600), [SECRET], now).ok).toBe(true);
  });

  it.each([[undefined], [''], ['v1=abc'], ['t=abc,v1=00'], [`t=${t}`], [`t=${t},x=1`]])('refuses the malformed header %j', (header) => {
    expect(verifyStripeSignature(body, header, [SECRET], now)).toMatchObject({ ok: false, status: 400 });
  });

  it('finds the header case-insensitively and refuses a body that is not an event', () => {
    const v = verifyStripeWebhook(body, { 'Stripe-Signature': stripeSignatureHeader(body, SECRET, t) }, [SECRET], now, STRIPE_DEFAULT_DECLINES);
    expect(v).toMatchObject({ ok: true, events: [{ kind: 'authorization', attemptId: 'att_1', providerRef: 'pi_1', providerEventId: 'evt_1' }] });
    const notEvent = Buffer.from('{"hello":1}');
    expect(verifyStripeWebhook(notEvent, { 'stripe-signature': stripeSignatureHeader(notEvent, SECRET, t) }, [SECRET], now, STRIPE_DEFAULT_DECLINES)).toMatchObject({ ok: false, status: 400 });
  });
});

function event(type: string, object: unknown, previous?: Record<string, unknown>): Stripe.Event {
  return { id: 'evt_x', object: 'event', type, created: t, data: { object, ...(previous ? { previous_attributes: previous } : {}) } } as unknown as Stripe.Event;
}

describe('event normalization', () => {
  const charge = { id: 'ch_1', object: 'charge', payment_intent: 'pi_1', amount_captured: 600, currency: 'eur', metadata: { attempt_id: 'att_1' }, failure_code: 'card_declined', outcome: { reason: 'insufficient_funds' } };
  it.each([
    ['payment_intent.amount_capturable_updated', pi({ status: 'requires_capture', amount_capturable: 1000 }), undefined, { kind: 'authorization', outcome: { kind: 'succeeded', amount: 1000 } }],
    ['payment_intent.succeeded', pi({ status: 'succeeded', amount_received: 1000 }), undefined, { kind: 'authorization', outcome: { kind: 'succeeded' } }],
    ['payment_intent.payment_failed', pi({ status: 'requires_payment_method', last_payment_error: { code: 'card_declined', decline_code: 'lost_card' } }), undefined, { kind: 'authorization', outcome: { kind: 'declined', class: 'hard', code: 'lost_card' } }],
    ['payment_intent.canceled', pi({ status: 'canceled', latest_charge: 'ch_1' }), undefined, { kind: 'void_succeeded', providerRef: 'pi_1' }],
    ['payment_intent.canceled', pi({ status: 'canceled' }), undefined, { kind: 'fence_confirmed', attemptId: 'att_1' }],
    ['payment_intent.created', pi(), undefined, { kind: 'ignored' }],
    ['charge.captured', charge, undefined, { kind: 'capture_succeeded', amount: 600, currency: 'EUR', modificationRef: 'ch_1', providerRef: 'pi_1' }],
    ['charge.failed', charge, undefined, { kind: 'authorization', outcome: { kind: 'declined', code: 'insufficient_funds', class: 'soft' } }],
    // The pinned API version's charge embeds no refunds: the event says the total refunded.
    ['charge.refunded', { ...charge, amount_refunded: 500 }, undefined, { kind: 'refund_total', amount: 500, currency: 'EUR', providerRef: 'pi_1' }],
    ['refund.updated', refundObject(), { status: 'pending' }, { kind: 'refund_succeeded', amount: 300, modificationRef: 're_1', attemptId: 'att_1', providerRef: 'pi_1' }],
    ['refund.created', refundObject({ status: 'pending' }), undefined, { kind: 'ignored' }],
    ['refund.failed', refundObject({ status: 'failed' }), { status: 'succeeded' }, { kind: 'refund_reversed', modificationRef: 're_1' }],
    ['refund.failed', refundObject({ status: 'failed' }), { status: 'pending' }, { kind: 'refund_failed' }],
    ['charge.dispute.created', { id: 'dp_1', amount: 1000, currency: 'eur', payment_intent: 'pi_1', reason: 'fraudulent', status: 'warning_needs_response', balance_transactions: [], metadata: {} }, undefined,
      { kind: 'dispute', disputeRef: 'dp_1', amount: 1000, reason: 'fraudulent', fact: { provider: 'stripe', eventType: 'charge.dispute.created', status: 'warning_needs_response', balanceTransactions: [] } }],
    ['charge.dispute.funds_withdrawn', { id: 'dp_1', amount: 1000, currency: 'eur', payment_intent: 'pi_1', reason: 'fraudulent', status: 'needs_response', balance_transactions: [{ id: 'txn_1', amount: -1000, fee: 1500, currency: 'eur' }], metadata: {} }, undefined,
      { kind: 'dispute', fact: { status: 'needs_response', balanceTransactions: [{ id: 'txn_1', amount: -1000, fee: 1500, currency: 'EUR' }] } }],
    ['charge.dispute.closed', { id: 'dp_1', amount: 1000, currency: 'eur', payment_intent: 'pi_1', reason: 'fraudulent', status: 'won', balance_transactions: [{ id: 'txn_1', amount: -1000, fee: 1500, currency: 'eur' }, { id: 'txn_2', amount: 1000, fee: -1500, currency: 'eur' }], metadata: {} }, undefined,
      { kind: 'dispute', fact: { status: 'won', balanceTransactions: [{ id: 'txn_1', amount: -1000, fee: 1500 }, { id: 'txn_2', amount: 1000, fee: -1500 }] } }],
    ['customer.created', { id: 'cus_1' }, undefined, { kind: 'ignored', attemptId: null }],
  ])('%s -> %j', (type, object, previous, expected) => {
    const [e] = normalizeStripeEvent(event(type, object, previous), STRIPE_DEFAULT_DECLINES);
    expect(e).toMatchObject({ ...expected, rawType: type, connectorType: 'stripe', providerEventId: 'evt_x', occurredAt: now.toISOString() });
  });
});
