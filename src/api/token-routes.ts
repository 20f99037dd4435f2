// POST /v1/tokens: a customer's browser (the hosted card form, or the merchant's own page) hands a
// card to the vault with the merchant's publishable key (pk_sy_…) and gets the masked payment method.
// The one /v1 POST without an Idempotency-Key (a browser cannot keep one across a reload; a retry
// stores another payment method, which is harmless), and the only /v1 route a publishable key opens:
// it is mounted after the admission bound and before the secret-key authentication, which answers
// 401 to a publishable key on every other route.
//
// Order of checks: the client address's rate (before any database read), the key, the key's rate,
// the browser origin, then the body, the hourly quota and the vault. CORS: a browser sends the
// preflight without the key, so the preflight admits an origin that some merchant allowed; the POST
// itself is refused (403, nothing stored) when its Origin is not one of the key's merchant's. The
// hosted form posts from the gateway's own origin. The body is never logged (the request line
// carries method, path and status only) and nothing answered echoes the number or the code.

import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { trustList } from '../ops/operator-auth.ts';
import { authenticatePublishableKey, isAnyMerchantOrigin, PUBLISHABLE_KEY_PREFIX } from '../store/merchants.ts';
import type { MerchantCardSettings } from '../store/merchants.ts';
import type { KeyIdentity } from '../store/api-keys.ts';
import type { ApiContext } from './api-context.ts';
import { storeCard } from './card-storage.ts';
import { clientAddress } from './client-address.ts';
import { encodeResult, sendEncoded } from './http.ts';
import { requestOrigin } from './idempotent-post.ts';
import { cardBody, maskedCardProblem } from './payment-method-schemas.ts';
import { ApiProblem, validationProblem } from './problems.ts';
import { rateLimitedProblem, takeClientAddress, takePublishableKey } from './rate-limit.ts';
import type { BucketLimit } from './rate-limit.ts';
import { refuseUnstorableText, verifyStorableBody } from './unstorable-text.ts';

/**
 * The shared limits of these routes (src/api/rate-limit.ts, every API process draws from the same
 * buckets; SWITCHYARD_RATE_LIMIT_PUBLISHABLE_KEY and _CLIENT). A customer saves a card in a request
 * or two; a shop's busiest minute stays far below the key's rate.
 */
export interface TokenLimits {
  /** Per publishable key. */
  readonly perKey: BucketLimit | null;
  /** Per client address (SWITCHYARD_TRUSTED_PROXIES resolves it): tokens, preflights and form pages. */
  readonly perClient: BucketLimit | null;
}

export interface TokenRouteOptions {
  readonly limits: TokenLimits;
  readonly tokensPerHour: number;
  readonly trustedProxies: readonly string[];
}

export const TOKENS_PATH = '/v1/tokens';

/** The bearer token when it is one (any key shape; the lookup decides). */
export function bearerToken(req: Request): string | null {
  const header = req.get('authorization');
  const match = header === undefined ? null : /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(header.trim());
  return match === null ? null : match[1]!;
}

/** The merchant a publishable key opens, or a 401 saying what to send. */
export async function publishableKeyMerchant(ctx: ApiContext, req: Request, res: Response): Promise<MerchantCardSettings & { readonly key: KeyIdentity }> {
  const token = bearerToken(req);
  const merchant = token === null ? null : await authenticatePublishableKey(ctx.rt.database.db, token, ctx.rt.now());
  if (merchant === null) {
    res.set('WWW-Authenticate', 'Bearer realm="switchyard"');
    const why = token !== null && !token.startsWith(PUBLISHABLE_KEY_PREFIX)
      ? `${TOKENS_PATH} takes the publishable key (${PUBLISHABLE_KEY_PREFIX}…); from your server, send cards with the secret key to POST /v1/payment_methods`
      : token === null ? `send Authorization: Bearer <publishable_key>` : 'the publishable key is not valid';
    throw new ApiProblem('unauthorized', why);
  }
  return merchant;
}

/** A request from the gateway's own pages (the hosted form): the browser says so, or its Origin is this gateway's. */
export function fromGatewayOrigin(req: Request, origin: string, publicUrl: string | null): boolean {
  if (req.get('sec-fetch-site') === 'same-origin') return true;
  if (origin === requestOrigin(req)) return true;
  return publicUrl !== null && origin === new URL(publicUrl).origin;
}

export function tokenRoutes(ctx: ApiContext, o: TokenRouteOptions): Router {
  const router = express.Router();
  const proxies = o.trustedProxies.length === 0 ? null : trustList(o.trustedProxies);
  const { perClient, perKey } = o.limits;
  const json = express.json({ limit: '4kb', type: () => true, strict: true, verify: verifyStorableBody });

  const limitClient = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const decision = perClient === null ? null : await takeClientAddress(perClient, clientAddress(req, proxies), res);
    if (decision !== null && !decision.allowed) throw rateLimitedProblem(decision, 'from this address');
    next();
  };

  router.options(TOKENS_PATH, limitClient, async (req: Request, res: Response) => {
    const origin = req.get('origin');
    res.set('Vary', 'Origin');
    if (origin === undefined || !(await isAnyMerchantOrigin(ctx.rt.database.db, origin))) {
      throw new ApiProblem('origin_not_allowed', 'no merchant allows this origin to call POST /v1/tokens (switchyard merchants set-origins)');
    }
    res.status(204).set({
      'Access-Control-Allow-Origin': origin,
      'Access-Control-Allow-Methods': 'POST',
      'Access-Control-Allow-Headers': 'Authorization, Content-Type',
      'Access-Control-Max-Age': '600',
    }).end();
  });

  router.post(TOKENS_PATH, limitClient, async (req: Request, res: Response, next: NextFunction) => {
    const merchant = await publishableKeyMerchant(ctx, req, res);
    res.locals['merchantId'] = merchant.id;
    res.locals['apiKey'] = merchant.key;
    const decision = perKey === null ? null : await takePublishableKey(perKey, merchant.id, res);
    if (decision !== null && !decision.allowed) throw rateLimitedProblem(decision, 'with this publishable key');
    const origin = req.get('origin');
    res.set('Vary', 'Origin');
    if (origin !== undefined && !fromGatewayOrigin(req, origin, ctx.rt.publicUrl)) {
      if (!merchant.allowedOrigins.includes(origin)) {
        throw new ApiProblem('origin_not_allowed', `the origin ${origin.slice(0, 200)} is not one this merchant allowed (switchyard merchants set-origins); nothing was stored`);
      }
      // Set before the body is read: the merchant's page can read a 400 naming the field.
      res.set('Access-Control-Allow-Origin', origin);
    }
    next();
  }, json, refuseUnstorableText(), async (req: Request, res: Response) => {
    const parsed = cardBody.safeParse(req.body ?? {});
    if (!parsed.success) throw maskedCardProblem(validationProblem(parsed.error, 'body'));
    const resource = await storeCard(ctx.rt, o.tokensPerHour, String(res.locals['merchantId']), parsed.data);
    res.set('Cache-Control', 'no-store');
    sendEncoded(res, encodeResult({ status: 201, body: resource }));
  });

  return router;
}
