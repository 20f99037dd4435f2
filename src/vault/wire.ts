// The vault process's protocol (`switchyard start --role vault`, src/vault/server.ts) as both ends
// read it: one JSON request and one JSON answer per Vault operation. The request shapes are
// checked by the server, the answers by the client (src/vault/client.ts), so a version mismatch
// is a clear refusal instead of a card misread. Pure.

import { z } from 'zod';
import type { CardBrand, CardField, CardInput } from './card-checks.ts';
import type { PaymentMethod, RevealAccess, RevealedCard, TokenizeResult } from './vault.ts';

export const VAULT_PATHS = {
  health: '/v1/health',
  tokenize: '/v1/tokenize',
  describe: '/v1/describe',
  reveal: '/v1/reveal',
  forgetCode: '/v1/forget-code',
  requestDigest: '/v1/request-digest',
} as const;

/** Bodies are a card at most: 16 kB is far more than any of them. */
export const VAULT_BODY_LIMIT_BYTES = 16 * 1024;

const text = z.string().min(1).max(255);

// Requests. The card itself is passed through to the vault's own checks (src/vault/card-checks.ts),
// so a bad card is answered with the same field and reason as by the embedded vault.
export const tokenizeRequest = z.strictObject({ merchant_id: text, card: z.record(z.string(), z.unknown()) });
export const describeRequest = z.strictObject({ merchant_id: text, id: text });
export const revealRequest = z.strictObject({
  id: text,
  access: z.strictObject({ purpose: z.literal('provider_call'), attempt_id: text, process: text, request_key: z.string().max(255).optional() }),
});
export const forgetCodeRequest = z.strictObject({ id: text });
/** A card-bearing API request's canonical text (src/api idempotency): its digest, never stored as text. */
export const requestDigestRequest = z.strictObject({ merchant_id: text, text: z.string().max(12 * 1024) });

export function tokenizeBody(merchantId: string, card: CardInput): z.input<typeof tokenizeRequest> {
  return { merchant_id: merchantId, card: { ...card } };
}

export function revealBody(id: string, access: RevealAccess): z.input<typeof revealRequest> {
  return { id, access: { purpose: access.purpose, attempt_id: access.attemptId, process: access.process, ...(access.requestKey === undefined ? {} : { request_key: access.requestKey }) } };
}

export function revealAccessOf(body: z.output<typeof revealRequest>): RevealAccess {
  const a = body.access;
  return { purpose: a.purpose, attemptId: a.attempt_id, process: a.process, ...(a.request_key === undefined ? {} : { requestKey: a.request_key }) };
}

// Answers.
const brand = z.string().min(1).max(32).transform((b) => b as CardBrand);
const month = z.int().min(1).max(12);
const year = z.int().min(1000).max(9999);

const paymentMethodWire = z.strictObject({
  id: text, merchant_id: text, brand, last4: z.string().regex(/^\d{4}$/), exp_month: month, exp_year: year,
  fingerprint: z.string().min(1).max(128), created_at: z.iso.datetime(),
});

export function paymentMethodToWire(pm: PaymentMethod): z.input<typeof paymentMethodWire> {
  return {
    id: pm.id, merchant_id: pm.merchantId, brand: pm.brand, last4: pm.last4, exp_month: pm.expMonth, exp_year: pm.expYear,
    fingerprint: pm.fingerprint, created_at: pm.createdAt.toISOString(),
  };
}

function paymentMethodFromWire(w: z.output<typeof paymentMethodWire>): PaymentMethod {
  return { id: w.id, merchantId: w.merchant_id, brand: w.brand, last4: w.last4, expMonth: w.exp_month, expYear: w.exp_year, fingerprint: w.fingerprint, createdAt: new Date(w.created_at) };
}

const cardFields = ['card.number', 'card.exp_month', 'card.exp_year', 'card.cvc', 'card.holder_name'] as const satisfies readonly CardField[];

export const tokenizeAnswer = z.union([
  z.strictObject({ ok: z.literal(true), payment_method: paymentMethodWire }),
  z.strictObject({ ok: z.literal(false), field: z.enum(cardFields), reason: z.string().min(1).max(300) }),
]);

export function tokenizeResultToWire(r: TokenizeResult): z.input<typeof tokenizeAnswer> {
  return r.ok ? { ok: true, payment_method: paymentMethodToWire(r.paymentMethod) } : { ok: false, field: r.field, reason: r.reason };
}

export function tokenizeResultFromWire(w: z.output<typeof tokenizeAnswer>): TokenizeResult {
  return w.ok ? { ok: true, paymentMethod: paymentMethodFromWire(w.payment_method) } : { ok: false, field: w.field, reason: w.reason };
}

export const describeAnswer = z.strictObject({ payment_method: paymentMethodWire.nullable() });

export function describeAnswerFromWire(w: z.output<typeof describeAnswer>): PaymentMethod | null {
  return w.payment_method === null ? null : paymentMethodFromWire(w.payment_method);
}

const revealedWire = z.strictObject({
  id: text, merchant_id: text, brand, number: z.string().regex(/^\d{8,19}$/), exp_month: month, exp_year: year,
  holder_name: z.string().max(255).nullable(), cvc: z.string().regex(/^\d{3,4}$/).nullable(), first_reveal_had_code: z.boolean().nullable(),
});

export const revealAnswer = z.strictObject({ card: revealedWire.nullable() });

export function revealedToWire(c: RevealedCard | null): z.input<typeof revealAnswer> {
  return {
    card: c === null ? null : {
      id: c.id, merchant_id: c.merchantId, brand: c.brand, number: c.number, exp_month: c.expMonth, exp_year: c.expYear,
      holder_name: c.holderName, cvc: c.cvc, first_reveal_had_code: c.firstRevealHadCode,
    },
  };
}

export function revealedFromWire(w: z.output<typeof revealAnswer>): RevealedCard | null {
  const c = w.card;
  return c === null ? null : {
    id: c.id, merchantId: c.merchant_id, brand: c.brand, number: c.number, expMonth: c.exp_month, expYear: c.exp_year,
    holderName: c.holder_name, cvc: c.cvc, firstRevealHadCode: c.first_reveal_had_code,
  };
}

export const forgetCodeAnswer = z.strictObject({ forgotten: z.boolean() });
export const requestDigestAnswer = z.strictObject({ digest: z.string().min(1) });

/** development: the vault runs on the development key file (SWITCHYARD_VAULT_KEYS unset on its host). */
export const healthAnswer = z.strictObject({ status: z.literal('ok'), keys: z.enum(['configured', 'development']) });
export type VaultHealth = z.output<typeof healthAnswer>;

/** Every refusal: a code, and a message that never quotes the request. */
export const refusalAnswer = z.object({ error: z.string(), message: z.string() });
