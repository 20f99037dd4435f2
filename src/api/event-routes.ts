// GET /v1/events: the merchant's events of the last 30 days, newest first, by type and creation
// time; each as its webhook delivered it. An older event stays readable by id (GET
// /v1/events/{id}, with its deliveries: webhooks/outbound/merchant-routes.ts).

import express from 'express';
import type { Router } from 'express';
import { listMerchantEvents } from '../store/merchant-event-queries.ts';
import { inSnapshot } from './api-context.ts';
import type { ApiContext } from './api-context.ts';
import { encodeResult, livemodeScopeOf, merchantIdOf, sendEncoded } from './http.ts';
import { readPage } from './list-params.ts';
import { eventListQuery } from './list-queries.ts';
import { eventListItem, pageResource } from './serializers.ts';

export function eventRoutes(ctx: ApiContext): Router {
  const router = express.Router();
  router.get('/v1/events', async (req, res) => {
    const { filters, page } = eventListQuery(req.query, ctx.rt.now());
    const merchantId = merchantIdOf(res);
    const found = await readPage('event', () => inSnapshot(ctx, (tx) => listMerchantEvents(tx, merchantId, livemodeScopeOf(res), filters, page)));
    sendEncoded(res, encodeResult({ status: 200, body: pageResource(found.data.map(eventListItem), found.hasMore, page) }));
  });
  return router;
}
