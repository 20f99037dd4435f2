// The merchant API as an express app over a running runtime. Order matters: the request target
// and the bodies of unauthenticated routes checked for bytes PostgreSQL cannot store, health without
// auth, then the admission bound, bearer auth, rate limit and the JSON body parser for /v1, routes, and one error
// handler that answers every failure as application/problem+json.

import { answerVersion, pinnedVersion } from './api-versions.ts';
import express from 'express';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Runtime } from '../app/runtime.ts';
import { createControlRouter } from '../sandboxes/shared/control-router.ts';
import { liveAccounts } from '../routing/snapshot.ts';
import type { ApiContext } from './api-context.ts';
import { apiKeyRoutes } from './api-key-routes.ts';
import { bearerAuth } from './auth.ts';
import { requireRole } from './key-roles.ts';
import { balanceRoutes } from './balance-routes.ts';
import { disputeRoutes } from './dispute-routes.ts';
import { fileRoutes } from './file-routes.ts';
import { healthRoutes } from './health-routes.ts';
import { sendProblem } from './http.ts';
import { eventRoutes } from './event-routes.ts';
import { modificationRoutes } from './modification-routes.ts';
import { openApiDocument } from './openapi.ts';
import { paymentRoutes } from './payment-routes.ts';
import { refundRoutes } from './refund-routes.ts';
import { webhookEndpointPostRoutes } from './webhook-endpoint-routes.ts';
import { authenticationRoutes, DEFAULT_AUTHENTICATION_LIMITS } from './authentication-routes.ts';
import type { AuthenticationLimits } from './authentication-routes.ts';
import { createJwksRouter, createWebhookEndpointsRouter, createWebhookIntakeRouter } from '../webhooks/index.ts';
import { ApiProblem, vaultUnavailableProblem } from './problems.ts';
import { rateLimitRequests } from './rate-limit.ts';
import type { BucketLimit } from './rate-limit.ts';
import { DEFAULT_RATE_LIMITS } from './rate-limit-policy.ts';
import type { Quota, RateLimitSettings } from './rate-limit-policy.ts';
import { refuseUnstorableTarget, refuseUnstorableText, UnstorableBodyError, verifyStorableBody, verifyStorableForm, verifyStorableRawBody } from './unstorable-text.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';
import { metricsRouter, observeRequests } from '../observability/http.ts';
import { createOpsRouter } from '../ops/dashboard-routes.ts';
import { Operators } from '../ops/operators.ts';
import type { CookiePolicy } from '../ops/operator-auth.ts';
import type { MetricsExposure } from '../observability/http.ts';
import { cardFormRoutes } from './card-form-routes.ts';
import { paymentMethodRoutes } from './payment-method-routes.ts';
import { tokenRoutes } from './token-routes.ts';

import { admissionGate } from './admission.ts';
import type { Admission } from './admission.ts';
import { DEFAULT_IDEMPOTENCY_RETENTION_MS, DEFAULT_MAX_IN_FLIGHT, DEFAULT_TOKENS_PER_HOUR, DEFAULT_WAIT_MS, OVERLOAD_RETRY_AFTER_S } from './defaults.ts';

export { DEFAULT_IDEMPOTENCY_RETENTION_MS, DEFAULT_WAIT_MS };

export interface ApiOptions {
  readonly authorizationWaitMs?: number;
  readonly modificationWaitMs?: number;
  readonly idempotencyRetentionMs?: number;
  /** Default: the longer wait plus 20 s, so a live request never loses its key to a retry. */
  readonly idempotencyLeaseMs?: number;
  /** JSON body limit (bytes or a size like "64kb"). */
  readonly bodyLimit?: number | string;
  /**
   * The merchant API's limits (per merchant, key and operation; POST /v1/tokens per publishable key
   * and client address), shared by every API process through Redis (src/api/rate-limit.ts). Default
   * DEFAULT_RATE_LIMITS; null turns them all off.
   */
  readonly rateLimits?: RateLimitSettings | null;
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
  /**
   * POST /v1/tokens: the payment methods a merchant may store per hour (SWITCHYARD_TOKENS_PER_HOUR,
   * default DEFAULT_TOKENS_PER_HOUR; also counts POST /v1/payment_methods). Its rate limits are in rateLimits.
   */
  readonly tokens?: { readonly perHour?: number };
}

function bodyParserProblem(err: unknown): ApiProblem | null {
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') {
    const limit = (err as { limit?: number }).limit;
    return new ApiProblem('payload_too_large', `the body is larger than ${limit ?? 'the limit of'} bytes`);
  }
  if (type === 'entity.parse.failed') return new ApiProblem('malformed_json', 'the body is not valid JSON (an object is expected)');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new ApiProblem('malformed_json', 'the body must be UTF-8 JSON');
  if (err instanceof UnstorableBodyError) return err.toProblem();
  return null;
}

/** Any other error that carries a 4xx status (express's "Failed to decode param", a parser's refusal) is the client's: never a 500. */
function clientErrorProblem(err: unknown): ApiProblem | null {
  const e = err as { status?: unknown; statusCode?: unknown; message?: unknown } | null;
  const status = e?.status ?? e?.statusCode;
  if (typeof status !== 'number' || status < 400 || status > 499) return null;
  const message = typeof e?.message === 'string' && e.message !== '' ? e.message.slice(0, 200) : 'the request is malformed';
  if (status === 404) return new ApiProblem('not_found', message);
  if (status === 413) return new ApiProblem('payload_too_large', message);
  return new ApiProblem('validation_error', message, [{ path: '(request)', message }]);
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

  const rateLimits = opts.rateLimits === undefined ? DEFAULT_RATE_LIMITS : opts.rateLimits;

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // One structured line per request (request id, method, path, status, time, merchant) and the request metrics.
  app.use(observeRequests(rt.logger, rt.metrics));
  // Before any route: a path or query that does not decode to text PostgreSQL can store is a 400.
  app.use(refuseUnstorableTarget());
  // The bodies of routes without an API key are read here, so bytes PostgreSQL cannot store are
  // refused before their routers run (their own parsers then find the body read).
  app.use('/webhooks', express.raw({ type: () => true, limit: rt.webhooks.settings.inboundBodyLimit, verify: verifyStorableRawBody }));
  app.use('/authenticate', express.urlencoded({ extended: false, limit: '64kb', verify: verifyStorableForm }), refuseUnstorableText());
  app.use('/ops/login', express.urlencoded({ extended: false, limit: '4kb', verify: verifyStorableForm }), express.json({ limit: '4kb', verify: verifyStorableBody }), refuseUnstorableText());
  app.use('/ops/api', express.json({ limit: '16kb', verify: verifyStorableBody }), refuseUnstorableText());

  app.use(healthRoutes(rt));
  app.use(metricsRouter(rt.metrics, opts.metrics ?? { mode: 'open' }));
  const adminOnly = new Operators(opts.adminToken === undefined || opts.adminToken === null ? [] : [{ name: 'admin', token: opts.adminToken }]);
  app.use(createOpsRouter(rt, opts.ops ?? { operators: adminOnly, cookies: { secure: false, trustedProxies: [] } }));
  const document = openApiDocument();
  app.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  if (opts.sandboxControl !== false && rt.sandboxes.length > 0) {
    // Faults, outages and clocks are for sandbox-only setups: with any live account (at start or
    // after a reload) the control API answers as if it were not there.
    const control = createControlRouter(rt.sandboxes);
    app.use((req, res, next) => (liveAccounts(rt.config.current().snapshot).length === 0 ? control(req, res, next) : next()));
  }
  // Provider webhooks take the raw bytes: mounted before any JSON parser. The JWKS is public.
  app.use(createWebhookIntakeRouter(rt.webhooks));
  app.use(createJwksRouter(rt.webhooks));
  // The shopper's browser (no API key): the authentication redirect page and the provider's return.
  app.use(authenticationRoutes(ctx, {
    limits: opts.authenticationLimits === undefined ? DEFAULT_AUTHENTICATION_LIMITS : opts.authenticationLimits,
    trustedProxies: opts.ops?.cookies.trustedProxies ?? [],
  }));
  const limiter = rateLimits === null ? null : rt.rateLimiter;
  const bucketLimit = (q: Quota | null): BucketLimit | null => (limiter === null || q === null ? null : { limiter, quota: q });
  const tokenLimits = { perKey: bucketLimit(rateLimits?.publishableKey ?? null), perClient: bucketLimit(rateLimits?.client ?? null) };
  const tokensPerHour = opts.tokens?.perHour ?? DEFAULT_TOKENS_PER_HOUR;
  const trustedProxies = opts.ops?.cookies.trustedProxies ?? [];
  // The hosted card form (a publishable key in the query; no API key).
  app.use(cardFormRoutes(ctx, { perClient: tokenLimits.perClient, trustedProxies }));
  opts.mount?.(app);

  // Every /v1 answer names its API version (src/api/api-versions.ts); an unknown one is a 400 before anything else.
  app.use('/v1', answerVersion());
  // First for /v1: a shed request costs no database round trip and writes nothing.
  app.use('/v1', admissionGate({ maxInFlight: opts.admission?.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT, retryAfterS: opts.admission?.retryAfterS ?? OVERLOAD_RETRY_AFTER_S }));
  // The one /v1 route of the publishable key, before the secret key's authentication (which refuses it everywhere else).
  app.use(tokenRoutes(ctx, { limits: tokenLimits, tokensPerHour, trustedProxies }));
  // The key's role is checked before anything is read or claimed (src/api/key-roles.ts); a refusal spends no rate limit.
  app.use('/v1', bearerAuth(rt.database.db, rt.now), requireRole(), pinnedVersion());
  if (rateLimits !== null && limiter !== null) app.use('/v1', rateLimitRequests({ limiter, settings: rateLimits }));
  // File uploads are multipart (their own parser and 4 MB limit): before the JSON parser.
  app.use(fileRoutes(ctx));
  // Every content type is read as JSON: a form-encoded body is malformed JSON, not an empty one.
  app.use('/v1', express.json({ limit: opts.bodyLimit ?? '64kb', type: () => true, strict: true, verify: verifyStorableBody }));
  app.use('/v1', refuseUnstorableText());
  app.use(paymentRoutes(ctx));
  app.use(modificationRoutes(ctx));
  app.use(refundRoutes(ctx));
  app.use(eventRoutes(ctx));
  app.use(balanceRoutes(ctx));
  app.use(disputeRoutes(ctx));
  app.use(paymentMethodRoutes(ctx, { tokensPerHour }));
  app.use(webhookEndpointPostRoutes(ctx, rt));
  app.use(createWebhookEndpointsRouter(rt.webhooks));
  app.use(apiKeyRoutes(ctx));

  app.use((req: Request) => {
    throw new ApiProblem('not_found', `no route ${req.method} ${req.path}`);
  });
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const problem = err instanceof ApiProblem ? err : bodyParserProblem(err) ?? clientErrorProblem(err) ?? vaultUnavailableProblem(err);
    if (problem !== null) {
      // The vault process not answering is the operator's to see (the merchant gets the 503).
      if (problem !== err && problem.code === 'service_unavailable') log(`api: ${safeErrorText(err)}`);
      res.locals['problemCode'] = problem.code;
      sendProblem(res, problem);
      return;
    }
    // The driver's cause, never drizzle's "Failed query: … params: …" (a customer's return, a payment's fields).
    log(`api: unexpected error: ${safeErrorText(err)}`);
    sendProblem(res, new ApiProblem('internal_error', 'an unexpected error occurred; the request may be retried with the same Idempotency-Key'));
  });
  return app;
}
