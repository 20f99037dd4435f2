// The card a merchant's customer (POST /v1/tokens, the hosted form) or the merchant's server (POST
// /v1/payment_methods) hands over, and the masked payment method answered for it. Zod checks the
// shape; the vault checks the card itself (number, expiry, code) and names the field it refuses.
// No message here ever echoes a value: the number and the code must not come back in an answer.

import { z } from 'zod';
import type { PaymentMethod } from '../vault/index.ts';
import { maskCardNumbers } from '../core/card-number-detector.ts';
import { ApiProblem } from './problems.ts';

export const cardInput = z
  .strictObject({
    number: z.string().min(1).max(40).meta({ description: 'The card number: digits, spaces and dashes between groups are dropped. Kept only in the vault.' }),
    exp_month: z.int().min(1).max(12).meta({ description: 'Expiry month, 1 to 12.' }),
    exp_year: z.int().min(1000).max(9999).meta({ description: 'Expiry year, four digits.' }),
    cvc: z.string().min(1).max(8).meta({ description: 'The card verification code: kept only until the first authorization response (at most one hour), then destroyed.' }),
    holder_name: z.string().min(1).max(255).optional().meta({ description: 'The name on the card.' }),
  })
  .meta({ id: 'CardInput' });

export const cardBody = z.strictObject({ card: cardInput }).meta({ id: 'CardRequest' });
export type CardBody = z.output<typeof cardBody>;

const timestamp = z.string().meta({ format: 'date-time' });

export const paymentMethodResource = z
  .strictObject({
    id: z.string().meta({ description: 'pmd_…: pay with it as payment_method {type: "card", id}.' }),
    object: z.literal('payment_method'),
    type: z.literal('card'),
    card: z.strictObject({
      brand: z.string().meta({ description: 'visa, mastercard, amex, discover, diners, jcb, unionpay, maestro, … or other.' }),
      last4: z.string(),
      exp_month: z.int(),
      exp_year: z.int(),
      fingerprint: z.string().meta({ description: 'The same card gives the same fingerprint for you (an HMAC under a vault key), and an unrelated one for another merchant.' }),
    }),
    created_at: timestamp,
  })
  .meta({ id: 'PaymentMethod' });
export type PaymentMethodResource = z.output<typeof paymentMethodResource>;

export function paymentMethodAnswer(pm: PaymentMethod): PaymentMethodResource {
  return {
    id: pm.id, object: 'payment_method', type: 'card',
    card: { brand: pm.brand, last4: pm.last4, exp_month: pm.expMonth, exp_year: pm.expYear, fingerprint: pm.fingerprint },
    created_at: pm.createdAt.toISOString(),
  };
}

/** A validation problem about a card body with any card number in a field's name masked (an unknown key is named by itself). */
export function maskedCardProblem(p: ApiProblem): ApiProblem {
  const mask = (s: string): string => maskCardNumbers(s, '[card]', { includeJoined: true }).replace(/\d{12,}/g, '[card]');
  return new ApiProblem(p.code, mask(p.detail), p.errors?.map((e) => ({ path: mask(e.path), message: mask(e.message) })), p.retryAfterS);
}

/** The vault's CardInput from a validated body. */
export function cardInputOf(b: CardBody): { number: string; exp_month: number; exp_year: number; cvc: string; holder_name?: string } {
  const c = b.card;
  return { number: c.number, exp_month: c.exp_month, exp_year: c.exp_year, cvc: c.cvc, ...(c.holder_name === undefined ? {} : { holder_name: c.holder_name }) };
}
