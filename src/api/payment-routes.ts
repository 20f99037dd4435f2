// Payments: create (waiting for the authorization outcome), read, list, timeline.

import express from 'express';
import type { Router } from 'express';
import { startPayment, waitForPayment } from '../app/payment-service.ts';
import type { StartPaymentRequest } from '../app/payment-service.ts';
import type { StoredPaymentMethod } from '../jobs/call-executor.ts';
import type { Payment } from '../core/payment.ts';
import type { PaymentState } from '../core/states.ts';
import { attachPaymentToClaim } from '../store/idempotency.ts';
import { listPayments, loadTimeline } from '../store/payment-queries.ts';
import { inSnapshot, paymentResources, paymentSnapshot } from './api-context.ts';
import type { ApiContext } from './api-context.ts';
import type { StoredKeyMode } from '../core/api-keys.ts';
import { livemodeScopeOf, merchantIdOf, notFound, sendEncoded, encodeResult } from './http.ts';
import { idempotentPost } from './idempotent-post.ts';
import { readPage } from './list-params.ts';
import { paymentListQuery } from './list-queries.ts';
import { ApiProblem } from './problems.ts';
import { createPaymentBody } from './request-schemas.ts';
import type { CreatePaymentBody } from './request-schemas.ts';
import { listResource, pageResource, paymentResource, transitionResource } from './serializers.ts';

/**
 * States in which the authorization outcome is not known yet: the API answers 202 in these. Not
 * requires_action: the create answers 201 with next_action at once (the customer must be sent on).
 */
const AUTHORIZATION_PENDING: ReadonlySet<PaymentState> = new Set<PaymentState>(['created', 'authorizing', 'auth_unknown']);

export const authorizationKnown = (p: Payment): boolean => !AUTHORIZATION_PENDING.has(p.state);

function startRequest(b: CreatePaymentBody, keyMode: StoredKeyMode): StartPaymentRequest {
  const pm = b.payment_method;
  const paymentMethod: StoredPaymentMethod = {
    ...(pm.id === undefined ? {} : { id: pm.id }),
    ...(pm.tokens === undefined ? {} : { tokens: pm.tokens }),
    ...(pm.test_card === undefined ? {} : { test_card: pm.test_card }),
    ...(pm.brand === undefined ? {} : { brand: pm.brand }),
    ...(pm.country === undefined ? {} : { country: pm.country }),
  };
  const shopper = { ...(b.browser_info === undefined ? {} : { browser_info: b.browser_info }), ...(b.shopper_ip === undefined ? {} : { shopper_ip: b.shopper_ip }) };
  return {
    amount: b.amount, currency: b.currency, reference: b.reference, captureMethod: b.capture_method,
    allowPartialAuthorization: b.allow_partial_authorization ?? false, paymentMethod, metadata: b.metadata ?? {},
    authentication: { mode: b.authentication ?? 'automatic', returnUrl: b.return_url ?? null },
    ...(Object.keys(shopper).length === 0 ? {} : { shopper }),
    keyMode,
  };
}

export function paymentRoutes(ctx: ApiContext): Router {
  const router = express.Router();
  const db = ctx.rt.database.db;

  router.post('/v1/payments', idempotentPost(ctx.idempotency, createPaymentBody, async ({ merchantId, body, claim, keyMode, livemode }) => {
    // A resumed key whose payment was committed continues with that payment instead of creating another.
    let paymentId = claim.paymentId;
    if (paymentId === null) {
      const started = await startPayment(ctx.rt, merchantId, startRequest(body, keyMode), { inTransaction: (tx, id) => attachPaymentToClaim(tx, claim, id) });
      if (!started.ok) throw new ApiProblem('validation_error', started.message, [{ path: started.field, message: started.message }]);
      // Decided at creation (no connector could take it): nothing to wait for, and the version just
      // committed is the answer (written at its creation instant).
      if (authorizationKnown(started.payment)) return { status: 201, body: paymentResource(started.payment, started.payment.createdAt) };
      paymentId = started.payment.id;
    }
    await waitForPayment(ctx.rt, merchantId, paymentId, authorizationKnown, ctx.authorizationWaitMs);
    const seen = await paymentSnapshot(ctx, merchantId, paymentId, livemode);
    if (seen === null) throw notFound('payment', paymentId);
    return { status: authorizationKnown(seen.payment) ? 201 : 202, body: seen.resource };
  }));

  router.get('/v1/payments', async (req, res) => {
    const { filters, page } = paymentListQuery(req.query);
    const merchantId = merchantIdOf(res);
    const body = await readPage('payment', () => inSnapshot(ctx, async (tx) => {
      const found = await listPayments(tx, merchantId, livemodeScopeOf(res), filters, page);
      return pageResource(await paymentResources(tx, found.data), found.hasMore, page);
    }));
    sendEncoded(res, encodeResult({ status: 200, body }));
  });

  router.get('/v1/payments/:id', async (req, res) => {
    const seen = await paymentSnapshot(ctx, merchantIdOf(res), req.params.id, livemodeScopeOf(res));
    if (seen === null) throw notFound('payment', req.params.id);
    sendEncoded(res, encodeResult({ status: 200, body: seen.resource }));
  });

  router.get('/v1/payments/:id/timeline', async (req, res) => {
    const entries = await loadTimeline(db, merchantIdOf(res), req.params.id, livemodeScopeOf(res));
    if (entries === null) throw notFound('payment', req.params.id);
    sendEncoded(res, encodeResult({ status: 200, body: listResource(entries.map(transitionResource), false, (t) => String(t.id)) }));
  });

  return router;
}
