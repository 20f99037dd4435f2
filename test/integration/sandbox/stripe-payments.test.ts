// The Stripe sandbox's payment behaviour, driven by the real stripe SDK over real sockets.

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

const authorize = (payment_method: string, extra: Partial<Stripe.PaymentIntentCreateParams> = {}) =>
  stripe.paymentIntents.create({ amount: 1000, currency: 'eur', capture_method: 'manual', confirm: true, payment_method, ...extra });

const ledgerOf = async (id: string) => (await sandbox.ledger()).find((entry) => entry.id === id);

/** latest_charge is an id unless expanded. */
const chargeId = (pi: { latest_charge: string | Stripe.Charge | null } | undefined): string => {
  const charge = pi?.latest_charge;
  if (typeof charge !== 'string') throw new Error('expected latest_charge to be an id');
  return charge;
};

describe('authorization', () => {
  it.each([
    ['pm_card_visa', 'visa', '4242'],
    ['pm_card_mastercard', 'mastercard', '4444'],
    ['pm_card_amex', 'amex', '0005'],
  ])('approves %s', async (pm, brand, last4) => {
    const pi = await authorize(pm, { metadata: { attempt_id: 'att_approve', payment_id: 'pay_approve' } });
    expect(pi).toMatchObject({ object: 'payment_intent', status: 'requires_capture', amount: 1000, amount_capturable: 1000, amount_received: 0, currency: 'eur' });
    expect(pi.id).toMatch(/^pi_/);
    expect(pi.lastResponse.requestId).toMatch(/^req_/);
    const charge = await stripe.charges.retrieve(chargeId(pi));
    expect(charge).toMatchObject({ captured: false, amount_captured: 0, status: 'succeeded', payment_intent: pi.id });
    expect(charge.payment_method_details?.card).toMatchObject({ brand, last4 });
    expect((await ledgerOf(pi.id))).toMatchObject({ reference: 'att_approve', payment_id: 'pay_approve', authorized: 1000, captured: 0, cancelled: false });
  });

  it.each([
    ['pm_card_visa_chargeDeclined', 'card_declined', 'generic_decline'],
    ['pm_card_visa_chargeDeclinedInsufficientFunds', 'card_declined', 'insufficient_funds'],
    ['pm_card_visa_chargeDeclinedLostCard', 'card_declined', 'lost_card'],
    ['pm_card_visa_chargeDeclinedStolenCard', 'card_declined', 'stolen_card'],
    ['pm_card_chargeDeclinedExpiredCard', 'expired_card', undefined],
    ['pm_card_chargeDeclinedIncorrectCvc', 'incorrect_cvc', undefined],
    ['pm_card_chargeDeclinedProcessingError', 'processing_error', undefined],
  ])('declines %s with a 402 card error carrying the PaymentIntent', async (pm, code, declineCode) => {
    const err = await rejectionOf(authorize(pm));
    expect(err).toBeInstanceOf(Stripe.errors.StripeCardError);
    const cardError = err as Stripe.errors.StripeCardError;
    expect(cardError.statusCode).toBe(402);
    expect(cardError.code).toBe(code);
    // The SDK turns a missing decline_code into ''.
    expect(cardError.decline_code || undefined).toBe(declineCode);
    const pi = cardError.payment_intent;
    expect(pi?.status).toBe('requires_payment_method');
    expect(pi?.last_payment_error).toMatchObject({ type: 'card_error', code });
    expect((await ledgerOf(pi?.id ?? ''))).toMatchObject({ status: 'requires_payment_method', authorized: 0 });
    const charge = await stripe.charges.retrieve(chargeId(pi));
    expect(charge).toMatchObject({ status: 'failed', failure_code: code, paid: false });
  });

  it('lets a declined PaymentIntent be confirmed again with another card', async () => {
    const err = (await rejectionOf(authorize('pm_card_visa_chargeDeclined'))) as Stripe.errors.StripeCardError;
    const pi = await stripe.paymentIntents.confirm(err.payment_intent?.id ?? '', { payment_method: 'pm_card_visa' });
    expect(pi).toMatchObject({ status: 'requires_capture', amount_capturable: 1000, last_payment_error: null });
  });

  it('creates without confirming, then confirms', async () => {
    const created = await stripe.paymentIntents.create({ amount: 700, currency: 'usd', capture_method: 'manual', payment_method: 'pm_card_visa' });
    expect(created.status).toBe('requires_confirmation');
    expect((await ledgerOf(created.id))).toMatchObject({ authorized: 0 });
    const confirmed = await stripe.paymentIntents.confirm(created.id);
    expect(confirmed.status).toBe('requires_capture');
    const again = await rejectionOf(stripe.paymentIntents.confirm(created.id));
    expect(again).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((again as Stripe.errors.StripeError).code).toBe('payment_intent_unexpected_state');
  });

  it('captures automatically when capture_method is automatic', async () => {
    const pi = await authorize('pm_card_visa', { capture_method: 'automatic' });
    expect(pi).toMatchObject({ status: 'succeeded', amount_received: 1000, amount_capturable: 0 });
    expect((await ledgerOf(pi.id))).toMatchObject({ authorized: 1000, captured: 1000 });
  });

  it('authorizes part of the amount with the partial-authorization test method', async () => {
    const partial = await authorize('pm_card_visa_partialAuthorization');
    expect(partial).toMatchObject({ status: 'requires_capture', amount: 1000, amount_capturable: 500 });
    const charge = await stripe.charges.retrieve(chargeId(partial));
    expect(charge.payment_method_details?.card?.amount_authorized).toBe(500);
    expect((await ledgerOf(partial.id))).toMatchObject({ authorized: 500 });
    expect(await rejectionOf(stripe.paymentIntents.capture(partial.id, { amount_to_capture: 501 }))).toMatchObject({ code: 'amount_too_large' });
  });
});

describe('capture and cancel', () => {
  it('captures in full', async () => {
    const pi = await stripe.paymentIntents.capture((await authorize('pm_card_visa')).id);
    expect(pi).toMatchObject({ status: 'succeeded', amount_received: 1000, amount_capturable: 0 });
    const charge = await stripe.charges.retrieve(chargeId(pi));
    expect(charge).toMatchObject({ captured: true, amount_captured: 1000 });
    expect((await ledgerOf(pi.id))).toMatchObject({ authorized: 1000, captured: 1000 });
  });

  it('captures part and releases the rest', async () => {
    const pi = await stripe.paymentIntents.capture((await authorize('pm_card_visa')).id, { amount_to_capture: 400 });
    expect(pi).toMatchObject({ status: 'succeeded', amount_received: 400, amount_capturable: 0 });
    expect((await ledgerOf(pi.id))).toMatchObject({ captured: 400 });
  });

  it('refuses to capture more than is capturable, or twice', async () => {
    const { id } = await authorize('pm_card_visa');
    const tooMuch = await rejectionOf(stripe.paymentIntents.capture(id, { amount_to_capture: 1001 }));
    expect(tooMuch).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(tooMuch).toMatchObject({ code: 'amount_too_large', param: 'amount_to_capture', statusCode: 400 });
    await stripe.paymentIntents.capture(id);
    const twice = await rejectionOf(stripe.paymentIntents.capture(id));
    expect(twice).toMatchObject({ code: 'payment_intent_unexpected_state' });
  });

  it('captures several times with multicapture, until the final capture', async () => {
    const authorized = await authorize('pm_card_visa', { payment_method_options: { card: { request_multicapture: 'if_available' } } });
    const { id } = authorized;
    const charge = await stripe.charges.retrieve(chargeId(authorized));
    expect(charge.payment_method_details?.card?.multicapture?.status).toBe('available');
    const first = await stripe.paymentIntents.capture(id, { amount_to_capture: 300, final_capture: false });
    expect(first).toMatchObject({ status: 'requires_capture', amount_received: 300, amount_capturable: 700 });
    await stripe.paymentIntents.capture(id, { amount_to_capture: 200, final_capture: false });
    const last = await stripe.paymentIntents.capture(id, { amount_to_capture: 100, final_capture: true });
    expect(last).toMatchObject({ status: 'succeeded', amount_received: 600, amount_capturable: 0 });
    expect((await stripe.charges.retrieve(chargeId(authorized))).amount_captured).toBe(600);
    expect((await ledgerOf(id))).toMatchObject({ authorized: 1000, captured: 600 });
  });

  it('refuses final_capture=false without multicapture', async () => {
    const { id } = await authorize('pm_card_visa');
    const err = await rejectionOf(stripe.paymentIntents.capture(id, { amount_to_capture: 100, final_capture: false }));
    expect(err).toMatchObject({ param: 'final_capture', statusCode: 400 });
  });

  it('cancels an authorization and refuses to cancel twice', async () => {
    const { id } = await authorize('pm_card_visa');
    const pi = await stripe.paymentIntents.cancel(id, { cancellation_reason: 'abandoned' });
    expect(pi).toMatchObject({ status: 'canceled', cancellation_reason: 'abandoned', amount_capturable: 0 });
    expect(pi.canceled_at).toEqual(expect.any(Number));
    expect((await ledgerOf(id))).toMatchObject({ status: 'canceled', cancelled: true, captured: 0 });
    expect(await rejectionOf(stripe.paymentIntents.cancel(id))).toMatchObject({ code: 'payment_intent_unexpected_state' });
  });
});

describe('refunds', () => {
  it('refunds partially, then the rest, and refuses more', async () => {
    const pi = await stripe.paymentIntents.capture((await authorize('pm_card_visa')).id);
    const first = await stripe.refunds.create({ payment_intent: pi.id, amount: 300, reason: 'requested_by_customer', metadata: { refund_id: 'rf_1' } });
    expect(first).toMatchObject({ object: 'refund', status: 'succeeded', amount: 300, payment_intent: pi.id, reason: 'requested_by_customer' });
    expect(first.id).toMatch(/^re_/);
    const rest = await stripe.refunds.create({ payment_intent: pi.id });
    expect(rest.amount).toBe(700);
    expect(await stripe.refunds.retrieve(first.id)).toMatchObject({ id: first.id, amount: 300 });
    const charge = await stripe.charges.retrieve(chargeId(pi));
    expect(charge).toMatchObject({ amount_refunded: 1000, refunded: true });
    expect((await ledgerOf(pi.id))).toMatchObject({ captured: 1000, refunded: 1000 });
    expect(await rejectionOf(stripe.refunds.create({ payment_intent: pi.id, amount: 1 }))).toMatchObject({ code: 'charge_already_refunded' });
  });

  it('refuses to refund more than was captured, or an uncaptured payment', async () => {
    const captured = await stripe.paymentIntents.capture((await authorize('pm_card_visa')).id, { amount_to_capture: 500 });
    expect(await rejectionOf(stripe.refunds.create({ payment_intent: captured.id, amount: 501 }))).toMatchObject({ code: 'amount_too_large', param: 'amount' });
    const uncaptured = await authorize('pm_card_visa');
    expect(await rejectionOf(stripe.refunds.create({ payment_intent: uncaptured.id }))).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
  });

  it('fails a succeeded refund and opens a dispute from code', async () => {
    const pi = await stripe.paymentIntents.capture((await authorize('pm_card_visa')).id);
    const refund = await stripe.refunds.create({ payment_intent: pi.id, amount: 250 });
    expect(await sandbox.failRefund(refund.id)).toMatchObject({ status: 'failed', failure_reason: 'expired_or_canceled_card' });
    expect(await stripe.refunds.retrieve(refund.id)).toMatchObject({ status: 'failed' });
    expect((await ledgerOf(pi.id))).toMatchObject({ refunded: 0 });
    const dispute = await sandbox.createDispute(pi.id, { amount: 1000 });
    expect(dispute).toMatchObject({ object: 'dispute', amount: 1000, payment_intent: pi.id, status: 'needs_response' });
    expect((await stripe.charges.retrieve(chargeId(pi))).disputed).toBe(true);
  });
});

describe('disputes', () => {
  const dispute = (id: string) => stripe.disputes.retrieve(id);
  const captured = async () => stripe.paymentIntents.capture((await authorize('pm_card_visa')).id);
  const eventTypes = async (id: string) => (await stripe.events.list({ limit: 100 })).data.filter((e) => (e.data.object as { id?: string }).id === id).map((e) => e.type).reverse();

  it('an inquiry withdraws nothing until it escalates; the chargeback withdraws the amount and the fee, a win returns both', async () => {
    const pi = await captured();
    const opened = await sandbox.createDispute(pi.id, { inquiry: true });
    const id = String(opened['id']);
    expect(await dispute(id)).toMatchObject({ status: 'warning_needs_response', balance_transactions: [], is_charge_refundable: true });
    await sandbox.advanceDispute(id, 'warning_under_review');
    await sandbox.advanceDispute(id, 'needs_response');
    const escalated = await dispute(id);
    expect(escalated.balance_transactions.map((t) => [t.amount, t.fee, t.net, t.reporting_category, t.type])).toEqual([[-1000, 1500, -2500, 'dispute', 'adjustment']]);
    await sandbox.advanceDispute(id, 'under_review');
    await sandbox.advanceDispute(id, 'won');
    const won = await dispute(id);
    expect(won.status).toBe('won');
    expect(won.balance_transactions.map((t) => [t.amount, t.fee, t.reporting_category])).toEqual([[-1000, 1500, 'dispute'], [1000, -1500, 'dispute_reversal']]);
    expect(await stripe.balanceTransactions.retrieve(won.balance_transactions[1]!.id)).toMatchObject({ source: id, fee: -1500, net: 2500 });
    expect(await eventTypes(id)).toEqual(['charge.dispute.created', 'charge.dispute.updated', 'charge.dispute.updated', 'charge.dispute.funds_withdrawn', 'charge.dispute.updated', 'charge.dispute.funds_reinstated', 'charge.dispute.closed']);
  });

  it('moves only along stripe@23.1.0 statuses; a closed dispute takes nothing more; a path runs in one go', async () => {
    const pi = await captured();
    const id = String((await sandbox.createDispute(pi.id))['id']);
    await expect(sandbox.advanceDispute(id, 'warning_closed')).rejects.toThrow(/cannot become warning_closed/);
    await sandbox.advanceDispute(id, 'lost');
    await expect(sandbox.advanceDispute(id, 'won')).rejects.toThrow(/cannot become won/);
    expect((await dispute(id)).balance_transactions.map((t) => t.amount)).toEqual([-1000]);
    const path = await sandbox.disputePath((await captured()).id, ['warning_needs_response', 'warning_closed']);
    expect(await eventTypes(String(path['id']))).toEqual(['charge.dispute.created', 'charge.dispute.closed']);
    expect((await dispute(String(path['id']))).balance_transactions).toEqual([]);
  });
});

describe('retrieve, list and request errors', () => {
  it('answers 404 resource_missing for an unknown PaymentIntent', async () => {
    const err = await rejectionOf(stripe.paymentIntents.retrieve('pi_doesnotexist'));
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(err).toMatchObject({ statusCode: 404, code: 'resource_missing' });
  });

  it('expands latest_charge on retrieve', async () => {
    const { id } = await authorize('pm_card_visa');
    const pi = await stripe.paymentIntents.retrieve(id, { expand: ['latest_charge'] });
    expect(pi.latest_charge).toMatchObject({ object: 'charge', payment_intent: id });
  });

  it('lists newest first with created filters, limit and starting_after', async () => {
    const own = await startSandbox();
    const client = stripeFor(own);
    const early = await client.paymentIntents.create({ amount: 100, currency: 'usd' });
    await own.advanceClock(100);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.paymentIntents.create({ amount: 100 + i, currency: 'usd' })).id);
    const page = await client.paymentIntents.list({ limit: 2, created: { gte: early.created + 50 } });
    expect(page.data.map((pi) => pi.id)).toEqual([ids[2], ids[1]]);
    expect(page.has_more).toBe(true);
    const next = await client.paymentIntents.list({ limit: 2, created: { gte: early.created + 50 }, starting_after: ids[1] ?? '' });
    expect(next.data.map((pi) => pi.id)).toEqual([ids[0]]);
    expect(next.has_more).toBe(false);
    const all = await client.paymentIntents.list({ limit: 1 }).autoPagingToArray({ limit: 10 });
    expect(all.map((pi) => pi.id)).toEqual([...ids].reverse().concat(early.id));
    const before = await client.paymentIntents.list({ created: { lte: early.created } });
    expect(before.data.map((pi) => pi.id)).toEqual([early.id]);
    await own.close();
  });

  it('answers 401 to a wrong key', async () => {
    const err = await rejectionOf(stripeFor(sandbox, {}, 'sk_test_wrong').paymentIntents.create({ amount: 100, currency: 'usd' }));
    expect(err).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
  });

  it('names the parameter it rejects', async () => {
    const unknown = await rejectionOf(stripe.paymentIntents.create({ amount: 100, currency: 'usd', surprise: 'x' } as Stripe.PaymentIntentCreateParams));
    expect(unknown).toMatchObject({ statusCode: 400, code: 'parameter_unknown', param: 'surprise' });
    const missing = await rejectionOf(stripe.paymentIntents.create({ currency: 'usd' } as Stripe.PaymentIntentCreateParams));
    expect(missing).toMatchObject({ code: 'parameter_missing', param: 'amount' });
    const badPm = await rejectionOf(authorize('pm_card_nonexistent'));
    expect(badPm).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'payment_method' });
  });
});
