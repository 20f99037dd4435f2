// The merchant's webhook POSTs under /v1 go through the same idempotency as every other POST:
// a retried endpoint registration or redelivery replays its first answer instead of doing it twice.
// Reads and deletes are served by the webhooks module's own router, mounted after this one.

import express from 'express';
import type { Router } from 'express';
import type { Runtime } from '../app/runtime.ts';
import { endpointBody, redeliverBody, rotateBody } from '../webhooks/outbound/merchant-routes.ts';
import { createEndpoint, EndpointLimitError, redeliverEvent, rotateEndpointKey, RotationPendingError } from '../webhooks/outbound/endpoint-store.ts';
import { withJwksUrl } from '../webhooks/outbound/merchant-routes.ts';
import type { ApiContext } from './api-context.ts';
import { idempotentPost } from './idempotent-post.ts';
import { ApiProblem } from './problems.ts';

export function webhookEndpointPostRoutes(ctx: ApiContext, rt: Runtime): Router {
  const router = express.Router();
  router.post('/v1/webhook_endpoints', idempotentPost(ctx.idempotency, endpointBody, async ({ merchantId, body, origin }) => {
    // Internal addresses are refused here and again at every delivery (the name may resolve elsewhere then).
    const refused = await rt.webhooks.settings.addressPolicy.urlRefusal(body.url);
    if (refused !== null) {
      // The answer names the host only: where it resolved here is ours to know.
      if (refused.address !== null) rt.webhooks.log(`webhooks: endpoint for ${merchantId} refused: ${new URL(body.url).host} resolved to the internal address ${refused.address}`);
      throw new ApiProblem('validation_error', `url: ${refused.reason}`, [{ path: 'url', message: refused.reason }]);
    }
    try {
      return { status: 201, body: withJwksUrl(origin, await createEndpoint(rt.database.db, merchantId, body.url, body.events, rt.now(), rt.webhooks.settings.maxEndpointsPerMerchant)) };
    } catch (err) {
      // Not stored with the key (NOT_STORED): after deleting an endpoint, the same request may succeed.
      if (err instanceof EndpointLimitError) throw new ApiProblem('endpoint_limit_reached', err.message);
      throw err;
    }
  }));
  router.post('/v1/webhook_endpoints/:id/rotate_signing_key', idempotentPost(ctx.idempotency, rotateBody, async ({ merchantId, params, origin }) => {
    const id = params['id']!;
    let rotated;
    try {
      rotated = await rotateEndpointKey(rt.database.db, merchantId, id, rt.now());
    } catch (err) {
      if (err instanceof RotationPendingError) throw new ApiProblem('signing_key_rotation_pending', err.message);
      throw err;
    }
    if (rotated === null) throw new ApiProblem('not_found', `no webhook endpoint ${id}`);
    return { status: 200, body: withJwksUrl(origin, rotated) };
  }));
  router.post('/v1/events/:id/redeliver', idempotentPost(ctx.idempotency, redeliverBody.unwrap().prefault({}), async ({ merchantId, body, params, livemode }) => {
    const id = params['id']!;
    const ids = await redeliverEvent(rt.database.db, merchantId, id, rt.now(), body.endpoint_id, undefined, livemode);
    if (ids === null) throw new ApiProblem('not_found', `no event ${id}`);
    rt.webhooks.kick();
    return { status: 202, body: { event_id: id, deliveries: ids } };
  }));
  return router;
}
