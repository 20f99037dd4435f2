// Payment methods with the secret key: POST /v1/payment_methods stores a card sent by the merchant's
// own server (only for merchants an operator allowed: `switchyard merchants allow-raw-cards`; others
// get 403 raw_card_data_not_allowed before anything is read or written), GET /v1/payment_methods/{id}
// answers the masked resource (another merchant's id is not found).
//
// The idempotency record of a card-bearing request must not keep a plain SHA-256 of its body: a card
// number has so few unknown digits that its hash is a lookup away from the number. The record keeps
// an HMAC of the canonical request under a vault key instead (Vault.requestDigest), and its stored
// answer is the masked resource. A same-key resend with another card is still a 422.

import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { isId } from '../core/ids.ts';
import { loadMerchantCardSettings } from '../store/merchants.ts';
import type { ApiContext } from './api-context.ts';
import { storeCard } from './card-storage.ts';
import { encodeResult, merchantIdOf, notFound, sendEncoded } from './http.ts';
import { idempotentPost } from './idempotent-post.ts';
import { cardBody, maskedCardProblem, paymentMethodAnswer } from './payment-method-schemas.ts';
import { ApiProblem } from './problems.ts';

export function paymentMethodRoutes(ctx: ApiContext, o: { readonly tokensPerHour: number }): Router {
  const router = express.Router();
  const db = ctx.rt.database.db;

  const rawCardsAllowed = async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    const merchant = await loadMerchantCardSettings(db, merchantIdOf(res));
    if (merchant?.allowRawCards !== true) {
      throw new ApiProblem('raw_card_data_not_allowed', 'this merchant may not send card numbers from its servers: collect cards with the hosted card form (GET /elements/card) or POST /v1/tokens, or ask the operator (switchyard merchants allow-raw-cards)');
    }
    next();
  };

  router.post(
    '/v1/payment_methods',
    rawCardsAllowed,
    idempotentPost(ctx.idempotency, cardBody, async ({ merchantId, body }) => ({ status: 201, body: await storeCard(ctx.rt, o.tokensPerHour, merchantId, body) }), {
      fingerprint: (merchantId, request) => ctx.rt.vault.requestDigest(merchantId, request),
      maskProblem: maskedCardProblem,
    }),
  );

  router.get('/v1/payment_methods/:id', async (req, res) => {
    const id = req.params.id;
    // Anything but a pmd_ id is not echoed (a path may hold what a client should not have sent).
    if (!isId('paymentMethod', id)) throw new ApiProblem('not_found', 'no such payment method: ids look like pmd_…');
    const found = await ctx.rt.vault.describe(merchantIdOf(res), id);
    if (found === null) throw notFound('payment method', id);
    sendEncoded(res, encodeResult({ status: 200, body: paymentMethodAnswer(found) }));
  });

  return router;
}
