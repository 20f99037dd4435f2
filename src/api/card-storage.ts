// Storing a card for POST /v1/tokens and POST /v1/payment_methods: a slot of the merchant's hourly
// quota, then the vault. A card the vault refuses is a 400 naming the field (never the value), stores
// nothing and gives its slot back.

import type { Runtime } from '../app/runtime.ts';
import { returnQuotaSlot, takeQuotaSlot } from '../store/payment-method-quota.ts';
import { cardInputOf, paymentMethodAnswer } from './payment-method-schemas.ts';
import type { CardBody, PaymentMethodResource } from './payment-method-schemas.ts';
import { ApiProblem } from './problems.ts';

export async function storeCard(rt: Runtime, tokensPerHour: number, merchantId: string, body: CardBody): Promise<PaymentMethodResource> {
  const db = rt.database.db;
  const slot = await takeQuotaSlot(db, merchantId, tokensPerHour, rt.now());
  if (!slot.ok) {
    throw new ApiProblem(
      'payment_method_quota_exceeded',
      `this merchant stored ${tokensPerHour} payment methods this hour, the most allowed (SWITCHYARD_TOKENS_PER_HOUR); retry in ${slot.retryAfterS} s`,
      undefined, slot.retryAfterS,
    );
  }
  const giveBack = () => returnQuotaSlot(db, merchantId, slot.windowStart);
  let stored;
  try {
    stored = await rt.vault.tokenize(merchantId, cardInputOf(body));
  } catch (err) {
    await giveBack().catch(() => undefined);
    throw err;
  }
  if (!stored.ok) {
    await giveBack();
    throw new ApiProblem('validation_error', `${stored.field}: ${stored.reason}`, [{ path: stored.field, message: stored.reason }]);
  }
  return paymentMethodAnswer(stored.paymentMethod);
}
