// Merchant routes for outbound webhooks, scoped to res.locals.merchantId (set by the auth
// middleware given here, or by the API's own /v1 auth when mounted after it):
//   POST /v1/webhook_endpoints { url, events? }   GET /v1/webhook_endpoints   DELETE /v1/webhook_endpoints/:id
//   GET /v1/events/:id (deliveries and every attempt)   POST /v1/events/:id/redeliver { endpoint_id? }
// and, public, GET /.well-known/jwks.json. Errors are application/problem+json (RFC 9457) in the
// API's shape: { type, title, status, detail, code, errors? }.

import express from 'express';
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { z } from 'zod';
import { MERCHANT_EVENT_TYPES } from '../../core/effects.ts';
import type { WebhookServices } from '../webhook-services.ts';
import { publishedJwks, RETIRED_KEY_GRACE_MS } from './delivery-signature.ts';
import { createEndpoint, deleteEndpoint, EndpointLimitError, listEndpoints, loadEventView, publishedEndpointVersions, redeliverEvent, rotateEndpointKey, RotationPendingError } from './endpoint-store.ts';
import type { EndpointView } from './endpoint-store.ts';
import { safeErrorText } from '../../observability/safe-error-text.ts';

const PROBLEM_TYPE_BASE = 'https://switchyard.dev/problems/';
const TITLES = {
  validation_error: 'The request is not valid', unauthorized: 'Unauthorized', not_found: 'Not found',
  endpoint_limit_reached: 'The merchant has as many webhook endpoints as allowed', internal_error: 'Internal error',
  signing_key_rotation_pending: 'The last rotation\'s key has not started signing yet',
} as const;
const STATUS = { validation_error: 400, unauthorized: 401, not_found: 404, endpoint_limit_reached: 409, signing_key_rotation_pending: 409, internal_error: 500 } as const;
type Code = keyof typeof TITLES;

function problem(res: Response, code: Code, detail: string, errors?: readonly { path: string; message: string }[]): void {
  const body = { type: `${PROBLEM_TYPE_BASE}${code}`, title: TITLES[code], status: STATUS[code], detail, code, ...(errors === undefined ? {} : { errors }) };
  res.status(STATUS[code]).set('Content-Type', 'application/problem+json; charset=utf-8').send(JSON.stringify(body));
}

export const endpointBody = z.strictObject({
  url: z.string().max(2048).refine((u) => URL.canParse(u) && ['http:', 'https:'].includes(new URL(u).protocol), 'must be an absolute http(s) URL'),
  events: z.array(z.enum(MERCHANT_EVENT_TYPES)).min(1).max(MERCHANT_EVENT_TYPES.length).optional(),
});
export const rotateBody = z.strictObject({});
export const redeliverBody = z.strictObject({ endpoint_id: z.string().max(64).optional() }).optional();

function merchantOf(res: Response): string | null {
  const id: unknown = res.locals['merchantId'];
  return typeof id === 'string' ? id : null;
}

/** The events the key may see: its mode's (a live key true, a test key false), or both (null: a legacy key, or an auth that names no key). */
function livemodeOf(res: Response): boolean | null {
  const mode = (res.locals['apiKey'] as { mode?: unknown } | undefined)?.mode;
  return mode === 'test' || mode === 'live' ? mode === 'live' : null;
}

type Handler = (req: Request, res: Response, merchantId: string) => Promise<void>;

/** Wraps a route: requires the merchant, answers every failure as a problem, logs no body. */
function route(s: WebhookServices, handler: Handler): RequestHandler {
  return async (req: Request, res: Response) => {
    const merchantId = merchantOf(res);
    if (merchantId === null) return problem(res, 'unauthorized', 'send Authorization: Bearer <api_key>');
    try {
      await handler(req, res, merchantId);
    } catch (err) {
      s.log(`webhooks api: ${req.method} ${req.path} failed: ${safeErrorText(err)}`);
      if (!res.headersSent) problem(res, 'internal_error', 'an unexpected error occurred');
    }
  };
}

function invalid(res: Response, error: z.ZodError): void {
  const errors = error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(body)', message: i.message }));
  problem(res, 'validation_error', `${errors[0]?.path ?? '(body)'}: ${errors[0]?.message ?? 'invalid'}`, errors);
}

/**
 * The merchant routes. `auth` (optional) runs first and must set res.locals.merchantId; leave it
 * out when mounting after the API's own /v1 authentication.
 */
export function createWebhookEndpointsRouter(s: WebhookServices, auth?: RequestHandler): Router {
  const router = express.Router();
  const paths = ['/v1/webhook_endpoints', '/v1/events'];
  if (auth !== undefined) router.use(paths, auth);
  // A body the API's parser already read is left alone (body-parser marks it).
  router.use(paths, express.json({ limit: '16kb', type: () => true }));
  router.use(paths, (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if ((err as { type?: unknown }).type === 'entity.parse.failed') return problem(res, 'validation_error', 'the body is not valid JSON');
    next(err);
  });

  router.post('/v1/webhook_endpoints', route(s, async (req, res, merchantId) => {
    const parsed = endpointBody.safeParse(req.body ?? {});
    if (!parsed.success) return invalid(res, parsed.error);
    const refused = await s.settings.addressPolicy.urlRefusal(parsed.data.url);
    if (refused !== null) {
      if (refused.address !== null) s.log(`webhooks: endpoint for ${merchantId} refused: ${new URL(parsed.data.url).host} resolved to the internal address ${refused.address}`);
      return problem(res, 'validation_error', `url: ${refused.reason}`, [{ path: 'url', message: refused.reason }]);
    }
    try {
      res.status(201).json(withJwksUrl(originOf(req), await createEndpoint(s.db, merchantId, parsed.data.url, parsed.data.events, s.now(), s.settings.maxEndpointsPerMerchant)));
    } catch (err) {
      if (err instanceof EndpointLimitError) return problem(res, 'endpoint_limit_reached', err.message);
      throw err;
    }
  }));
  router.get('/v1/webhook_endpoints', route(s, async (req, res, merchantId) => {
    // Every enabled endpoint (SWITCHYARD_WEBHOOK_MAX_ENDPOINTS at most): one page.
    res.json({ object: 'list', data: (await listEndpoints(s.db, merchantId, s.now())).map((e) => withJwksUrl(originOf(req), e)), has_more: false, next_cursor: null });
  }));
  router.post('/v1/webhook_endpoints/:id/rotate_signing_key', route(s, async (req, res, merchantId) => {
    const id = String(req.params['id']);
    let rotated;
    try {
      rotated = await rotateEndpointKey(s.db, merchantId, id, s.now());
    } catch (err) {
      if (err instanceof RotationPendingError) return problem(res, 'signing_key_rotation_pending', err.message);
      throw err;
    }
    if (rotated === null) return problem(res, 'not_found', `no webhook endpoint ${id}`);
    res.json(withJwksUrl(originOf(req), rotated));
  }));
  router.delete('/v1/webhook_endpoints/:id', route(s, async (req, res, merchantId) => {
    const id = String(req.params['id']);
    if (!(await deleteEndpoint(s.db, merchantId, id, s.now()))) return problem(res, 'not_found', `no webhook endpoint ${id}`);
    res.json({ id, object: 'webhook_endpoint', deleted: true });
  }));
  router.get('/v1/events/:id', route(s, async (req, res, merchantId) => {
    const id = String(req.params['id']);
    const view = await loadEventView(s.db, merchantId, id, livemodeOf(res));
    if (view === null) return problem(res, 'not_found', `no event ${id}`);
    res.json(view);
  }));
  router.post('/v1/events/:id/redeliver', route(s, async (req, res, merchantId) => {
    const id = String(req.params['id']);
    const parsed = redeliverBody.safeParse(req.body === undefined || Object.keys(req.body as object).length === 0 ? undefined : req.body);
    if (!parsed.success) return invalid(res, parsed.error);
    const ids = await redeliverEvent(s.db, merchantId, id, s.now(), parsed.data?.endpoint_id, undefined, livemodeOf(res));
    if (ids === null) return problem(res, 'not_found', `no event ${id}`);
    s.kick();
    res.status(202).json({ event_id: id, deliveries: ids });
  }));
  // One endpoint's public keys: what its merchant pins. Public (a public key is no secret; the id
  // is unguessable), so the merchant's verifier fetches it without credentials.
  router.get('/.well-known/webhook-endpoints/:id/jwks.json', async (req: Request, res: Response) => {
    const id = String(req.params['id']);
    try {
      const versions = await publishedEndpointVersions(s.db, id, s.now(), RETIRED_KEY_GRACE_MS);
      if (versions === null) return problem(res, 'not_found', `no webhook endpoint ${id}`);
      const keys = await Promise.all(versions.map(async (v) => (await s.endpointKeys.key(id, v)).publicJwk));
      res.set('Cache-Control', 'public, max-age=60').json({ keys });
    } catch (err) {
      s.log(`webhooks: endpoint jwks failed: ${safeErrorText(err)}`);
      problem(res, 'internal_error', 'the key set is not available right now');
    }
  });
  return router;
}

/** The endpoint as answered: its JWKS as a full URL on the origin (`https://host`) the merchant called. */
export function withJwksUrl(origin: string, e: EndpointView): EndpointView & { signing: { jwks_url: string } } {
  return { ...e, signing: { ...e.signing, jwks_url: `${origin}${e.signing.jwks_path}` } };
}

const originOf = (req: Request): string => `${req.protocol}://${req.get('host') ?? 'localhost'}`;

/** GET /.well-known/jwks.json: public, cacheable for a short while (rotation publishes the new kid first). */
export function createJwksRouter(s: WebhookServices): Router {
  const router = express.Router();
  router.get('/.well-known/jwks.json', async (_req: Request, res: Response) => {
    try {
      res.set('Cache-Control', 'public, max-age=300').json(await publishedJwks(s.db, s.keys, s.now()));
    } catch (err) {
      s.log(`webhooks: jwks failed: ${safeErrorText(err)}`);
      problem(res, 'internal_error', 'the key set is not available right now');
    }
  });
  return router;
}
