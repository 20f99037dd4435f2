// GET /v1/refunds: the merchant's refunds, newest first, by payment, status and creation time.
// (A refund is created through its payment, POST /v1/payments/{id}/refunds, and read by id in
// modification-routes.ts.)

import express from 'express';
import type { Router } from 'express';
import { listRefunds } from '../store/refund-queries.ts';
import { inSnapshot } from './api-context.ts';
import type { ApiContext } from './api-context.ts';
import { encodeResult, livemodeScopeOf, merchantIdOf, sendEncoded } from './http.ts';
import { readPage } from './list-params.ts';
import { refundListQuery } from './list-queries.ts';
import { pageResource, refundResource } from './serializers.ts';

export function refundRoutes(ctx: ApiContext): Router {
  const router = express.Router();
  router.get('/v1/refunds', async (req, res) => {
    const { filters, page } = refundListQuery(req.query);
    const merchantId = merchantIdOf(res);
    const found = await readPage('refund', () => inSnapshot(ctx, (tx) => listRefunds(tx, merchantId, livemodeScopeOf(res), filters, page)));
    const body = pageResource(found.data.map((r) => refundResource(r.payment, r.refund)), found.hasMore, page);
    sendEncoded(res, encodeResult({ status: 200, body }));
  });
  return router;
}
