// Refunds (create, retrieve, fail later), charges (retrieve) and disputes (open from code): the
// money that comes back after a capture.

import { bookBalanceTransaction } from './balance.ts';
import type { OperationContext } from './context.ts';
import { invalidParam, missingParam, resourceMissing, stateError } from './errors.ts';
import type { FormParams } from './form-encoding.ts';
import { stripeId } from './ids.ts';
import { renderCharge, renderDispute, renderList, renderRefund } from './objects.ts';
import type { StripeObject } from './objects.ts';
import { findPaymentIntent } from './payment-intents.ts';
import { assertWholeUnits } from './currencies.ts';
import { assertKnownParams, createdFilter, readAmount, readEnum, readExpand, readInteger, readMetadata, readString } from './params.ts';
import type { ChargeRecord, DisputeRecord, RefundRecord } from './state.ts';

const REFUND_PARAMS = new Set(['payment_intent', 'charge', 'amount', 'reason', 'metadata', 'expand', 'refund_application_fee', 'reverse_transfer', 'instructions_email']);

export function createRefund(ctx: OperationContext, params: FormParams): StripeObject {
  assertKnownParams(params, REFUND_PARAMS);
  const paymentIntentId = readString(params, 'payment_intent');
  const chargeId = readString(params, 'charge');
  const requested = readAmount(params, 'amount');
  const reason = readEnum(params, 'reason', ['duplicate', 'fraudulent', 'requested_by_customer'] as const) ?? null;
  const metadata = readMetadata(params, 'metadata');
  if (paymentIntentId === undefined && chargeId === undefined) throw missingParam('payment_intent');
  if (paymentIntentId !== undefined && !ctx.state.paymentIntents.has(paymentIntentId)) throw resourceMissing('payment_intent', paymentIntentId, 'payment_intent');
  const charge = chargeId !== undefined ? findCharge(ctx, chargeId, 'charge') : capturedChargeOf(ctx, paymentIntentId ?? '');
  if (!charge.captured) {
    throw stateError('charge_not_refundable', `This charge (${charge.id}) has not been captured; cancel the PaymentIntent instead.`);
  }
  const refundable = charge.amountCaptured - charge.amountRefunded;
  if (refundable === 0) throw stateError('charge_already_refunded', `Charge ${charge.id} has already been refunded.`);
  const amount = requested ?? refundable;
  assertWholeUnits(amount, charge.currency, 'amount');
  if (amount > refundable) {
    throw stateError('amount_too_large', `Refund amount (${amount}) is greater than unrefunded amount on charge (${refundable}).`, { param: 'amount' });
  }
  const refund: RefundRecord = {
    id: stripeId('re'),
    created: ctx.now,
    charge: charge.id,
    paymentIntent: charge.paymentIntent,
    amount,
    currency: charge.currency,
    reason,
    metadata,
    status: ctx.failModification === true ? 'pending' : 'succeeded',
    failureReason: null,
  };
  ctx.state.refunds.set(refund.id, refund);
  charge.refunds.push(refund.id);
  if (ctx.failModification === true) {
    // Fault release_fail_later: accepted as pending, never performed; its events say it failed.
    const accepted = renderRefund(refund);
    ctx.emit('refund.created', accepted);
    refund.status = 'failed';
    refund.failureReason = 'unknown';
    ctx.emit('refund.failed', renderRefund(refund));
    return accepted;
  }
  charge.amountRefunded += amount;
  bookBalanceTransaction(ctx, { id: `txn_${refund.id.slice(3)}`, paymentIntent: refund.paymentIntent, source: refund.id, type: 'refund', reportingCategory: 'refund', amount: -amount, currency: refund.currency });
  ctx.emit('refund.created', renderRefund(refund));
  ctx.emit('charge.refunded', renderCharge(charge, ctx.state));
  return renderRefund(refund);
}

export function retrieveRefund(ctx: OperationContext, id: string, params: FormParams): StripeObject {
  readExpand(params);
  const refund = ctx.state.refunds.get(id);
  if (refund === undefined) throw resourceMissing('refund', id);
  return renderRefund(refund);
}

export function retrieveCharge(ctx: OperationContext, id: string, params: FormParams): StripeObject {
  return renderCharge(findCharge(ctx, id), ctx.state, readExpand(params));
}

const REFUND_LIST_PARAMS = new Set(['charge', 'payment_intent', 'created', 'limit', 'starting_after', 'ending_before', 'expand']);

/** GET /v1/refunds: newest first, filtered by charge or PaymentIntent and `created`, paginated like every Stripe list. */
export function listRefunds(ctx: OperationContext, params: FormParams): StripeObject {
  assertKnownParams(params, REFUND_LIST_PARAMS);
  readExpand(params);
  const limit = readInteger(params, 'limit', 1, 100) ?? 10;
  const chargeId = readString(params, 'charge');
  const paymentIntentId = readString(params, 'payment_intent');
  const startingAfter = readString(params, 'starting_after');
  const matches = createdFilter(params);
  let all = [...ctx.state.refunds.values()]
    .filter((r) => (chargeId === undefined || r.charge === chargeId) && (paymentIntentId === undefined || r.paymentIntent === paymentIntentId) && matches(r.created))
    .reverse()
    .sort((a, b) => b.created - a.created);
  if (startingAfter !== undefined) {
    const index = all.findIndex((r) => r.id === startingAfter);
    if (index < 0) throw resourceMissing('refund', startingAfter, 'starting_after');
    all = all.slice(index + 1);
  }
  return renderList('/v1/refunds', all.slice(0, limit).map(renderRefund), all.length > limit);
}

export function retrieveDispute(ctx: OperationContext, id: string): StripeObject {
  const dispute = ctx.state.disputes.get(id);
  if (dispute === undefined) throw resourceMissing('dispute', id);
  return renderDispute(dispute, ctx.state);
}

/** A refund that succeeded and later failed (e.g. the card was closed): the money is back with the merchant. */
export function failRefund(ctx: OperationContext, refundId: string, failureReason: string): StripeObject {
  const refund = ctx.state.refunds.get(refundId);
  if (refund === undefined) throw resourceMissing('refund', refundId);
  if (refund.status !== 'succeeded' && refund.status !== 'pending') throw stateError('refund_not_failable', `Refund ${refundId} is ${refund.status}.`);
  const charge = findCharge(ctx, refund.charge);
  const previous = { status: refund.status, failure_reason: refund.failureReason };
  refund.status = 'failed';
  refund.failureReason = failureReason;
  charge.amountRefunded -= refund.amount;
  // The money comes back to the balance when the refund fails, booked at that time.
  bookBalanceTransaction(ctx, { paymentIntent: refund.paymentIntent, source: refund.id, type: 'refund_failure', reportingCategory: 'refund_failure', amount: refund.amount, currency: refund.currency });
  ctx.emit('refund.updated', renderRefund(refund), previous);
  ctx.emit('refund.failed', renderRefund(refund));
  return renderRefund(refund);
}

/** Stripe's dispute fee, in minor units of the charge's currency (a flat fee; the sandbox uses one figure for every currency). */
export const STRIPE_DISPUTE_FEE = 1500;

/** The statuses a dispute may move to from each (stripe@23.1.0 Dispute.Status); won, lost, warning_closed and prevented are final. */
const NEXT_STATUS: Readonly<Record<string, readonly string[]>> = {
  warning_needs_response: ['warning_under_review', 'warning_closed', 'needs_response', 'prevented'],
  warning_under_review: ['warning_closed', 'needs_response'],
  needs_response: ['under_review', 'won', 'lost'],
  under_review: ['won', 'lost', 'appeal_needs_response'],
  appeal_needs_response: ['appeal_under_review', 'lost'],
  appeal_under_review: ['won', 'lost'],
};

function withdraw(ctx: OperationContext, dispute: DisputeRecord): void {
  bookBalanceTransaction(ctx, { paymentIntent: dispute.paymentIntent, source: dispute.id, type: 'adjustment', reportingCategory: 'dispute', amount: -dispute.amount, fee: STRIPE_DISPUTE_FEE, currency: dispute.currency });
  ctx.emit('charge.dispute.funds_withdrawn', renderDispute(dispute, ctx.state));
}

/**
 * Opens a dispute on the PaymentIntent's captured charge: a chargeback (needs_response: the amount
 * and the dispute fee are withdrawn at once, charge.dispute.created then funds_withdrawn), or an
 * inquiry (warning_needs_response: nothing moves until it escalates).
 */
export function openDispute(ctx: OperationContext, paymentIntentId: string, options: { amount?: number; reason?: string; inquiry?: boolean }): StripeObject {
  const charge = capturedChargeOf(ctx, paymentIntentId);
  const amount = options.amount ?? charge.amountCaptured;
  if (!Number.isInteger(amount) || amount < 1 || amount > charge.amountCaptured) {
    throw invalidParam('amount', `A dispute amount must be an integer between 1 and ${charge.amountCaptured}.`);
  }
  const dispute: DisputeRecord = {
    id: stripeId('dp'),
    created: ctx.now,
    charge: charge.id,
    paymentIntent: paymentIntentId,
    amount,
    currency: charge.currency,
    reason: options.reason ?? 'fraudulent',
    status: options.inquiry === true ? 'warning_needs_response' : 'needs_response',
  };
  ctx.state.disputes.set(dispute.id, dispute);
  charge.disputed = true;
  ctx.emit('charge.dispute.created', renderDispute(dispute, ctx.state));
  if (options.inquiry !== true) withdraw(ctx, dispute);
  return renderDispute(dispute, ctx.state);
}

/**
 * Moves a dispute on (evidence submitted: under_review; an inquiry escalated: needs_response, which
 * withdraws; an appeal) with charge.dispute.updated, or closes it (won: reinstated with the fee,
 * funds_reinstated; lost; warning_closed; prevented) with charge.dispute.closed.
 */
export function advanceDispute(ctx: OperationContext, disputeId: string, status: string): StripeObject {
  const dispute = ctx.state.disputes.get(disputeId);
  if (dispute === undefined) throw resourceMissing('dispute', disputeId);
  const allowed = NEXT_STATUS[dispute.status] ?? [];
  if (!allowed.includes(status)) throw stateError('dispute_status_invalid', `Dispute ${disputeId} is ${dispute.status}; it cannot become ${status}.`);
  const previous = { status: dispute.status };
  dispute.status = status;
  if (status === 'needs_response') {
    ctx.emit('charge.dispute.updated', renderDispute(dispute, ctx.state), previous);
    withdraw(ctx, dispute);
  } else if (status === 'won') {
    bookBalanceTransaction(ctx, { paymentIntent: dispute.paymentIntent, source: dispute.id, type: 'adjustment', reportingCategory: 'dispute_reversal', amount: dispute.amount, fee: -STRIPE_DISPUTE_FEE, currency: dispute.currency });
    ctx.emit('charge.dispute.funds_reinstated', renderDispute(dispute, ctx.state));
    ctx.emit('charge.dispute.closed', renderDispute(dispute, ctx.state));
  } else if (status === 'lost' || status === 'warning_closed' || status === 'prevented') {
    ctx.emit('charge.dispute.closed', renderDispute(dispute, ctx.state));
  } else {
    ctx.emit('charge.dispute.updated', renderDispute(dispute, ctx.state), previous);
  }
  return renderDispute(dispute, ctx.state);
}

/** The issuer decides an open dispute (charge.dispute.closed with status won or lost). */
export function closeDispute(ctx: OperationContext, disputeId: string, outcome: 'won' | 'lost'): StripeObject {
  const dispute = ctx.state.disputes.get(disputeId);
  if (dispute === undefined) throw resourceMissing('dispute', disputeId);
  if (dispute.status === 'won' || dispute.status === 'lost') throw stateError('dispute_already_closed', `Dispute ${disputeId} is already ${dispute.status}.`);
  return advanceDispute(ctx, disputeId, outcome);
}

function findCharge(ctx: OperationContext, id: string, param?: string): ChargeRecord {
  const charge = ctx.state.charges.get(id);
  if (charge === undefined) throw resourceMissing('charge', id, param);
  return charge;
}

function capturedChargeOf(ctx: OperationContext, paymentIntentId: string): ChargeRecord {
  const pi = findPaymentIntent(ctx, paymentIntentId);
  const charge = pi.latestCharge === null ? undefined : ctx.state.charges.get(pi.latestCharge);
  if (charge === undefined || charge.status !== 'succeeded') {
    throw stateError('charge_not_refundable', `This PaymentIntent (${pi.id}) does not have a successful charge to refund.`);
  }
  return charge;
}
