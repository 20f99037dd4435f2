// Capture, void and refunds of an existing payment: each asks the core for the operation, then
// waits a little for the provider's answer. Confirmed: 200 (capture, void) or 201 (refund). Still in
// flight: 202, the operation visible as pending. Declined by the provider: 402 *_declined. Rejected
// as invalid, or never sent: 409 *_rejected. Never a 2xx that looks like success (docs/api.md).

import express from 'express';
import type { Router } from 'express';
import { requestCapture, requestRefund, requestVoid, updateMetadata, waitForPayment } from '../app/payment-service.ts';
import type { OperationFailure, Payment } from '../core/payment.ts';
import type { RefundState } from '../core/states.ts';
import { bindClaimToPayment } from '../store/idempotency.ts';
import { loadPayment } from '../store/payment-queries.ts';
import { findRefundPaymentId } from '../store/refund-queries.ts';
import type { TransitionResult } from '../store/transition.ts';
import { inSnapshot, paymentSnapshot } from './api-context.ts';
import type { PaymentResource } from './resource-schemas.ts';
import type { ApiContext } from './api-context.ts';
import { encodeResult, livemodeScopeOf, merchantIdOf, notFound, sendEncoded } from './http.ts';
import { idempotentPost, operationIdFor } from './idempotent-post.ts';
import { ApiProblem } from './problems.ts';
import { captureBody, refundBody, updatePaymentBody, voidBody } from './request-schemas.ts';
import { refundResource } from './serializers.ts';

const REFUND_FINAL: ReadonlySet<RefundState> = new Set<RefundState>(['succeeded', 'failed', 'reversed']);

/** The core's refusal as the merchant's problem. */
export function refusal(r: Extract<TransitionResult, { kind: 'illegal' }>): ApiProblem {
  switch (r.code) {
    case 'invalid_state':
    case 'not_supported':
      return new ApiProblem('invalid_state', r.reason);
    case 'amount_exceeds_authorized':
    case 'amount_exceeds_captured':
      return new ApiProblem(r.code, r.reason, [{ path: 'amount', message: r.reason }]);
    case 'invalid_amount':
      return new ApiProblem('validation_error', r.reason, [{ path: 'amount', message: r.reason }]);
    case 'multicapture_unsupported':
      return new ApiProblem('multicapture_unsupported', r.reason, [{ path: 'final', message: r.reason }]);
    case 'too_many_metadata_keys':
      return new ApiProblem('validation_error', r.reason, [{ path: 'metadata', message: r.reason }]);
  }
}

type Operation = 'capture' | 'refund' | 'void';

const PAST: Record<Operation, string> = { capture: 'captured', refund: 'refunded', void: 'voided' };

/** A failed operation as the merchant's problem: 402 when the provider declined it, else 409. */
export function failureProblem(op: Operation, paymentId: string, f: OperationFailure): ApiProblem {
  const said = f.message === null ? '' : `: ${f.message}`;
  const members = { failure_code: f.code, payment_id: paymentId };
  if (f.kind === 'declined') {
    return new ApiProblem(`${op}_declined`, `the provider declined the ${op} (${f.code})${said}`, undefined, undefined, {
      ...members, ...(f.providerCode === null ? {} : { decline_code: f.providerCode }), ...(f.declineClass === null ? {} : { decline_class: f.declineClass }),
    });
  }
  const detail = f.kind === 'rejected'
    ? `the provider rejected the ${op} as invalid (${f.code})${said}; nothing was ${PAST[op]}`
    : `the ${op} never reached the provider (${f.code})${said}; nothing was ${PAST[op]}`;
  return new ApiProblem(`${op}_rejected`, detail, undefined, undefined, members);
}

/** Failed rows written before failures were kept carry none: the provider's failure, without a code of its own. */
const UNRECORDED = (op: Operation): OperationFailure => ({ kind: 'declined', code: `${op}_failed`, providerCode: null, declineClass: null, message: null });

const captureSettled = (captureId: string) => (p: Payment): boolean => {
  const c = p.captures.find((x) => x.id === captureId);
  return p.state === 'needs_review' || (c !== undefined && c.status !== 'requested' && c.status !== 'pending');
};

const refundSettled = (refundId: string) => (p: Payment): boolean => {
  const r = p.refunds.find((x) => x.id === refundId);
  return r !== undefined && REFUND_FINAL.has(r.status);
};

export function modificationRoutes(ctx: ApiContext): Router {
  const router = express.Router();
  const db = ctx.rt.database.db;

  /** The payment, when it is this merchant's and of the key's mode (`livemode`; null: either). */
  async function paymentOf(merchantId: string, id: string, livemode: boolean | null): Promise<Payment> {
    const p = await loadPayment(db, merchantId, id, livemode);
    if (p === null) throw notFound('payment', id);
    return p;
  }

  /** Waits for `done`, then answers from one consistent snapshot (which decides the status). */
  async function settle(merchantId: string, id: string, done: (p: Payment) => boolean): Promise<{ payment: Payment; resource: PaymentResource }> {
    await waitForPayment(ctx.rt, merchantId, id, done, ctx.modificationWaitMs);
    // Found in the key's scope before it was changed, and a payment's mode never changes.
    const seen = await paymentSnapshot(ctx, merchantId, id, null);
    if (seen === null) throw notFound('payment', id);
    return seen;
  }

  router.post('/v1/payments/:id/capture', idempotentPost(ctx.idempotency, captureBody, async ({ merchantId, body, params, claim, livemode }) => {
    const p = await paymentOf(merchantId, params['id']!, livemode);
    await bindClaimToPayment(db, claim, p.id);
    const captureId = operationIdFor('capture', claim);
    const r = await requestCapture(ctx.rt, merchantId, p, body.amount, body.final ?? true, captureId);
    if (r.kind === 'illegal') throw refusal(r);
    const { payment, resource } = await settle(merchantId, p.id, captureSettled(captureId));
    const capture = payment.captures.find((x) => x.id === captureId);
    if (capture?.status === 'failed') throw failureProblem('capture', p.id, capture.failure ?? UNRECORDED('capture'));
    // Anything but a confirmed capture (in flight, parked for review) is 202: the capture shows as pending.
    return { status: capture?.status === 'succeeded' ? 200 : 202, body: resource };
  }));

  router.post('/v1/payments/:id', idempotentPost(ctx.idempotency, updatePaymentBody, async ({ merchantId, body, params, claim, livemode }) => {
    const p = await paymentOf(merchantId, params['id']!, livemode);
    await bindClaimToPayment(db, claim, p.id);
    const r = await updateMetadata(ctx.rt, merchantId, p, body.metadata);
    if (r.kind === 'illegal') throw refusal(r);
    const seen = await paymentSnapshot(ctx, merchantId, p.id, null);
    if (seen === null) throw notFound('payment', p.id);
    return { status: 200, body: seen.resource };
  }));

  router.post('/v1/payments/:id/void', idempotentPost(ctx.idempotency, voidBody, async ({ merchantId, params, livemode }) => {
    const p = await paymentOf(merchantId, params['id']!, livemode);
    const r = await requestVoid(ctx.rt, merchantId, p.id);
    if (r.kind === 'illegal') throw refusal(r);
    const { payment, resource } = await settle(merchantId, p.id, (x) => x.state !== 'voiding');
    // Back where it was voided from (authorized, or requires_action): this void failed (the core records why in the void operation).
    if (payment.state === 'authorized' || payment.state === 'requires_action') throw failureProblem('void', p.id, payment.voidOp?.failure ?? UNRECORDED('void'));
    return { status: payment.state === 'voided' ? 200 : 202, body: resource };
  }));

  router.post('/v1/payments/:id/refunds', idempotentPost(ctx.idempotency, refundBody, async ({ merchantId, body, params, claim, livemode }) => {
    const p = await paymentOf(merchantId, params['id']!, livemode);
    await bindClaimToPayment(db, claim, p.id);
    const refundId = operationIdFor('refund', claim);
    const r = await requestRefund(ctx.rt, merchantId, p, body.amount, body.reason ?? null, refundId);
    if (r.kind === 'illegal') throw refusal(r);
    const { payment } = await settle(merchantId, p.id, refundSettled(refundId));
    const refund = payment.refunds.find((x) => x.id === refundId);
    if (refund === undefined) throw new Error(`refund ${refundId} missing after it was requested`);
    if (refund.status === 'failed') throw failureProblem('refund', p.id, refund.failure ?? UNRECORDED('refund'));
    return { status: refund.status === 'requested' || refund.status === 'pending' ? 202 : 201, body: refundResource(payment, refund) };
  }));

  router.get('/v1/refunds/:id', async (req, res) => {
    const merchantId = merchantIdOf(res);
    const livemode = livemodeScopeOf(res);
    const p = await inSnapshot(ctx, async (tx) => {
      const paymentId = await findRefundPaymentId(tx, merchantId, req.params.id);
      return paymentId === null ? null : loadPayment(tx, merchantId, paymentId, livemode);
    });
    const refund = p?.refunds.find((x) => x.id === req.params.id);
    if (p === null || p === undefined || refund === undefined) throw notFound('refund', req.params.id);
    sendEncoded(res, encodeResult({ status: REFUND_FINAL.has(refund.status) ? 200 : 202, body: refundResource(p, refund) }));
  });

  return router;
}
