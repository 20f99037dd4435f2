// HTTP observation: a request id per request (kept from X-Request-Id when sane, echoed back),
// one structured log line (with the merchant and the id of the key it authenticated with) and the request metrics when the response is sent, and GET /metrics.

import { timingSafeEqual } from 'node:crypto';
import express from 'express';
import type { Request, RequestHandler, Response, Router } from 'express';
import type { Logger } from './logger.ts';
import type { GatewayMetrics } from './metrics.ts';
import { requestIdFor, runInRequestContext } from './request-context.ts';
import type { RequestContext } from './request-context.ts';

/** A bounded route label: the matched route pattern, never the raw path (ids would explode the series). */
function routeLabel(req: Request, res: Response): string {
  const route = (req as { route?: { path?: unknown } }).route;
  if (route !== undefined && typeof route.path === 'string') return `${req.baseUrl}${route.path}`;
  return res.statusCode === 404 ? 'unmatched' : 'middleware';
}

/** What the idempotency layer did for this request, from the answer (the error handler leaves the problem code in res.locals). */
function idempotencyOutcome(res: Response): string | null {
  if (res.getHeader('Idempotent-Replayed') === 'true') return 'replayed';
  const code: unknown = res.locals['problemCode'];
  if (code === 'idempotency_request_in_progress') return 'in_progress';
  if (code === 'idempotency_key_reused') return 'key_reused';
  return null;
}

export function observeRequests(logger: Logger, metrics: GatewayMetrics): RequestHandler {
  return (req, res, next) => {
    const ctx: RequestContext = { requestId: requestIdFor(req.get('x-request-id')) };
    res.locals['requestContext'] = ctx;
    res.setHeader('X-Request-Id', ctx.requestId);
    const started = performance.now();
    res.on('finish', () => {
      const ms = performance.now() - started;
      const route = routeLabel(req, res);
      metrics.request(req.method, route, res.statusCode, ms / 1000, idempotencyOutcome(res));
      const merchant: unknown = res.locals['merchantId'];
      // The key's id, set by authentication (never the key itself).
      const keyId: unknown = (res.locals['apiKey'] as { id?: unknown } | undefined)?.id;
      const problem: unknown = res.locals['problemCode'];
      const idParam: unknown = (req.params as Record<string, unknown> | undefined)?.['id'];
      const paymentId = ctx.paymentId ?? (typeof idParam === 'string' && idParam.startsWith('pay_') ? idParam : undefined);
      // Method, path, status, time, merchant, key id, payment: never headers, query or body.
      logger.info(
        {
          request_id: ctx.requestId, method: req.method, path: req.originalUrl.split('?')[0], route, status: res.statusCode, duration_ms: Math.round(ms),
          ...(typeof merchant === 'string' ? { merchant_id: merchant } : {}), ...(typeof keyId === 'string' ? { key_id: keyId } : {}), ...(paymentId === undefined ? {} : { payment_id: paymentId }),
          ...(typeof problem === 'string' ? { problem } : {}),
        },
        'request',
      );
    });
    runInRequestContext(ctx, next);
  };
}

/**
 * How /metrics is served on a listener. `open`: anyone who reaches the port (keep that port
 * private); `token`: a bearer token is required (SWITCHYARD_METRICS_TOKEN); `elsewhere`: not on this
 * listener — it has its own (SWITCHYARD_METRICS_PORT), and this one answers 404.
 */
export type MetricsExposure = { readonly mode: 'open' } | { readonly mode: 'token'; readonly token: string } | { readonly mode: 'elsewhere' };

function bearerIs(req: Request, token: string): boolean {
  const auth = req.get('authorization') ?? '';
  if (!auth.startsWith('Bearer ')) return false;
  const given = Buffer.from(auth.slice(7).trim());
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

/** GET /metrics in the Prometheus text format. */
export function metricsRouter(metrics: GatewayMetrics, exposure: MetricsExposure = { mode: 'open' }): Router {
  const router = express.Router();
  if (exposure.mode === 'elsewhere') return router;
  router.get('/metrics', async (req, res) => {
    if (exposure.mode === 'token' && !bearerIs(req, exposure.token)) {
      res.status(401).set('WWW-Authenticate', 'Bearer realm="switchyard-metrics"').type('text/plain').send('metrics token required (Authorization: Bearer <SWITCHYARD_METRICS_TOKEN>)\n');
      return;
    }
    const { contentType, body } = await metrics.text();
    res.set('Content-Type', contentType).set('Cache-Control', 'no-store').send(body);
  });
  return router;
}
