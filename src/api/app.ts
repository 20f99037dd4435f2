// The merchant API as an express app over a running runtime. Order matters: health without
// auth, then the admission bound, bearer auth, rate limit and the JSON body parser for /v1, routes, and one error
// handler that answers every failure as application/problem+json.

import express from 'express';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Runtime } from '../app/runtime.ts';
import { createControlRouter } from '../sandboxes/shared/control-router.ts';
import type { ApiContext } from './api-context.ts';
import { bearerAuth } from './auth.ts';
import { balanceRoutes } from './balance-routes.ts';
import { healthRoutes } from './health-routes.ts';
import { sendProblem } from './http.ts';
import { redact } from './log-redaction.ts';
import { modificationRoutes } from './modification-routes.ts';
import { openApiDocument } from './openapi.ts';
import { paymentRoutes } from './payment-routes.ts';
import { webhookEndpointPostRoutes } from './webhook-endpoint-routes.ts';
import { authenticationRoutes, DEFAULT_AUTHENTICATION_LIMITS } from './authentication-routes.ts';
import type { AuthenticationLimits } from './authentication-routes.ts';
import { createJwksRouter, createWebhookEndpointsRouter, createWebhookIntakeRouter } from '../webhooks/index.ts';
import { ApiProblem } from './problems.ts';
import { rateLimitByMerchant } from './rate-limit.ts';
import { refuseUnstorableText } from './unstorable-text.ts';
import { metricsRouter, observeRequests } from '../observability/http.ts';
import { createOpsRouter } from '../ops/dashboard-routes.ts';
import { Operators } from '../ops/operators.ts';
import type { CookiePolicy } from '../ops/operator-auth.ts';
import type { MetricsExposure } from '../observability/http.ts';
import type { RateLimit } from './rate-limit.ts';

import { admissionGate } from './admission.ts';
import type { Admission } from './admission.ts';
import { DEFAULT_IDEMPOTENCY_RETENTION_MS, DEFAULT_MAX_IN_FLIGHT, DEFAULT_WAIT_MS, OVERLOAD_RETRY_AFTER_S } from './defaults.ts';

export { DEFAULT_IDEMPOTENCY_RETENTION_MS, DEFAULT_WAIT_MS };

export interface ApiOptions {
  readonly authorizationWaitMs?: number;
  readonly modificationWaitMs?: number;
  readonly idempotencyRetentionMs?: number;
  /** Default: the longer wait plus 20 s, so a live request never loses its key to a retry. */
  readonly idempotencyLeaseMs?: number;
  /** JSON body limit (bytes or a size like "64kb"). */
  readonly bodyLimit?: number | string;
  /** Per merchant and process; null turns it off. */
  readonly rateLimit?: RateLimit | null;
  /** The bound on /v1 requests in flight in this process (src/api/admission.ts); default 64, Retry-After 1 s. */
  readonly admission?: Partial<Admission>;
  /** Serve the in-process sandboxes' control API (/_sandbox/...) when there are any. Default true. */
  readonly sandboxControl?: boolean;
  /** More routes before the 404 fallback (the providers' webhook intake mounts here). */
  readonly mount?: (app: Express) => void;
  readonly log?: (line: string) => void;
  /** Who may use /ops (src/ops/operators.ts) and how its cookie is marked; no operators: /ops is off. */
  readonly ops?: { readonly operators: Operators; readonly cookies: CookiePolicy };
  /** Shorthand for one operator, "admin", with this token (what SWITCHYARD_ADMIN_TOKEN alone configures). */
  readonly adminToken?: string | null;
  /** How /metrics is served on this listener (default: open, for a private port). */
  readonly metrics?: MetricsExposure;
  /** Rate limits of the customer's authentication routes (default DEFAULT_AUTHENTICATION_LIMITS); null turns them off. */
  readonly authenticationLimits?: AuthenticationLimits | null;
}

function bodyParserProblem(err: unknown): ApiProblem | null {
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') {
    const limit = (err as { limit?: number }).limit;
    return new ApiProblem('payload_too_large', `the body is larger than ${limit ?? 'the limit of'} bytes`);
  }
  if (type === 'entity.parse.failed') return new ApiProblem('malformed_json', 'the body is not valid JSON (an object is expected)');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new ApiProblem('malformed_json', 'the body must be UTF-8 JSON');
  return null;
}

export function createApiApp(rt: Runtime, opts: ApiOptions = {}): Express {
  const log = opts.log ?? ((line: string) => console.error(line));
  const authorizationWaitMs = opts.authorizationWaitMs ?? DEFAULT_WAIT_MS;
  const modificationWaitMs = opts.modificationWaitMs ?? DEFAULT_WAIT_MS;
  const ctx: ApiContext = {
    rt, authorizationWaitMs, modificationWaitMs,
    idempotency: {
      db: rt.database.db, now: rt.now, log,
      leaseMs: opts.idempotencyLeaseMs ?? Math.max(authorizationWaitMs, modificationWaitMs) + 20_000,
      retentionMs: opts.idempotencyRetentionMs ?? DEFAULT_IDEMPOTENCY_RETENTION_MS,
    },
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // One structured line per request (request id, method, path, status, time, merchant) and the request metrics.
  app.use(observeRequests(rt.logger, rt.metrics));

  app.use(healthRoutes(rt));
  app.use(metricsRouter(rt.metrics, opts.metrics ?? { mode: 'open' }));
  const adminOnly = new Operators(opts.adminToken === undefined || opts.adminToken === null ? [] : [{ name: 'admin', token: opts.adminToken }]);
  app.use(createOpsRouter(rt, opts.ops ?? { operators: adminOnly, cookies: { secure: false, trustedProxies: [] } }));
  const document = openApiDocument();
  app.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  if (opts.sandboxControl !== false && rt.sandboxes.length > 0) app.use(createControlRouter(rt.sandboxes));
  // Provider webhooks take the raw bytes: mounted before any JSON parser. The JWKS is public.
  app.use(createWebhookIntakeRouter(rt.webhooks));
  app.use(createJwksRouter(rt.webhooks));
  // The shopper's browser (no API key): the authentication redirect page and the provider's return.
  app.use(authenticationRoutes(ctx, {
    limits: opts.authenticationLimits === undefined ? DEFAULT_AUTHENTICATION_LIMITS : opts.authenticationLimits,
    trustedProxies: opts.ops?.cookies.trustedProxies ?? [],
  }));
  opts.mount?.(app);

  // First for /v1: a shed request costs no database round trip and writes nothing.
  app.use('/v1', admissionGate({ maxInFlight: opts.admission?.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT, retryAfterS: opts.admission?.retryAfterS ?? OVERLOAD_RETRY_AFTER_S }));
  app.use('/v1', bearerAuth(rt.database.db));
  if (opts.rateLimit !== null) app.use('/v1', rateLimitByMerchant(opts.rateLimit ?? { perSecond: 100, burst: 200 }));
  // Every content type is read as JSON: a form-encoded body is malformed JSON, not an empty one.
  app.use('/v1', express.json({ limit: opts.bodyLimit ?? '64kb', type: () => true, strict: true }));
  app.use('/v1', refuseUnstorableText());
  app.use(paymentRoutes(ctx));
  app.use(modificationRoutes(ctx));
  app.use(balanceRoutes(ctx));
  app.use(webhookEndpointPostRoutes(ctx, rt));
  app.use(createWebhookEndpointsRouter(rt.webhooks));

  app.use((req: Request) => {
    throw new ApiProblem('not_found', `no route ${req.method} ${req.path}`);
  });
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const problem = err instanceof ApiProblem ? err : bodyParserProblem(err);
    if (problem !== null) {
      res.locals['problemCode'] = problem.code;
      sendProblem(res, problem);
      return;
    }
    // drizzle wraps the driver's error ("Failed query: …"): its cause says what happened (a refused connection, a pool timeout).
    const cause = (err as { cause?: unknown } | null)?.cause;
    const why = cause instanceof Error ? ` (cause: ${cause.message})` : '';
    log(redact(`api: unexpected ${(err as Error).name ?? 'error'}: ${(err as Error).message ?? String(err)}${why}`));
    sendProblem(res, new ApiProblem('internal_error', 'an unexpected error occurred; the request may be retried with the same Idempotency-Key'));
  });
  return app;
}
