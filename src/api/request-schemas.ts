// Request schemas: the one definition the API validates with and the OpenAPI document is
// generated from. Strict objects: an unknown field is an error (no mass assignment).

import { z } from 'zod';
import { amountProblem, currency as parseCurrency, MoneyError } from '../core/money.ts';
import { containsCardNumber, maskCardNumbers } from '../core/card-number-detector.ts';
import { TEST_CARDS, testCardScenario } from '../connectors/test-cards.ts';

const amountMessage = (iss: { input?: unknown }): string => amountProblem(iss.input) ?? 'amount must be a non-negative safe integer of minor units';

/** Integer minor units: a non-negative safe integer (the core's own check supplies the message). */
export const minorUnits = z
  .int({ error: amountMessage })
  .min(0, { error: amountMessage })
  .meta({ description: 'Integer amount in minor units (e.g. cents), a non-negative safe integer.' });

const positiveMinorUnits = z
  .int({ error: amountMessage })
  .min(1, { error: (iss) => amountProblem(iss.input) ?? 'amount must be at least 1 minor unit' })
  .meta({ description: 'Integer amount in minor units, at least 1.' });

export const currencyCode = z
  .string({ error: 'currency must be a string' })
  .superRefine((value, ctx) => {
    try {
      parseCurrency(value);
    } catch (err) {
      if (!(err instanceof MoneyError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.message });
    }
  })
  .meta({ description: 'Upper-case ISO 4217 currency code.', pattern: '^[A-Z]{3}$' });

export const shortText = (max: number) => z.string().min(1).max(max);

/** Card numbers are only safe where the vault keeps them: free text the gateway stores and shows must not hold one. */
const CARD_NUMBER_MESSAGE = 'holds a card number, and card numbers are not accepted in text fields (an order number that only looks like one: join a prefix to it, e.g. ORD-…)';
export const withoutCardNumber = <T extends z.ZodString>(s: T) => s.refine((v) => !containsCardNumber(v), { message: CARD_NUMBER_MESSAGE });

const metadata = z
  .record(z.string().min(1).max(40), withoutCardNumber(z.string().max(500)))
  .superRefine((m, ctx) => {
    // Named with the card masked: the error answer must not echo the number either.
    for (const k of Object.keys(m)) if (containsCardNumber(k)) ctx.addIssue({ code: 'custom', path: [maskCardNumbers(k, '[card]')], message: `the key ${CARD_NUMBER_MESSAGE}` });
  })
  .refine((m) => Object.keys(m).length <= 50, { message: 'at most 50 metadata keys' })
  .meta({ description: 'Up to 50 string keys (<= 40 chars) with string values (<= 500 chars). Neither may hold a card number.' });

export const storedPaymentToken = z
  .strictObject({
    payment_method: shortText(500).optional().meta({ description: 'Stripe: the PaymentMethod (pm_…).' }),
    customer: shortText(500).optional().meta({ description: 'Stripe: the Customer (cus_…) the PaymentMethod is attached to.' }),
    stored_payment_method_id: shortText(500).optional().meta({ description: 'Adyen: the stored payment method (storedPaymentMethodId).' }),
    shopper_reference: shortText(256).optional().meta({ description: 'Adyen: the shopper the method is stored under (shopperReference, at least 3 characters).' }),
  })
  .meta({ id: 'StoredPaymentToken' });

const paymentToken = z.union([shortText(500), storedPaymentToken], { error: 'a token is a non-empty string or an object {payment_method, customer} (Stripe) / {stored_payment_method_id, shopper_reference} (Adyen)' });

function acceptedTestCards(): string {
  return Object.entries(TEST_CARDS).map(([number, scenario]) => `${number} (${scenario})`).join(', ');
}

// The number given is not echoed: it may be a real card's.
const UNKNOWN_TEST_CARD_MESSAGE = `test_card is not one of the gateway's test cards; accepted: ${acceptedTestCards()}`;

const paymentMethodId = z
  .string()
  .regex(/^pmd_[0-9a-z]{26}$/, { message: 'id must be a payment method id (pmd_…) from POST /v1/tokens or POST /v1/payment_methods' })
  .meta({ description: 'A card in the vault (pmd_…, from POST /v1/tokens or POST /v1/payment_methods): any connector that takes card data may charge it.' });

const paymentMethodTokens = z.record(shortText(100), paymentToken).meta({
  description: "Payment-method tokens by connector account name: a bare token (a one-off Stripe PaymentMethod), or a stored one with its owner — Stripe {payment_method, customer}, Adyen {stored_payment_method_id, shopper_reference}. One lacking what its provider needs is refused, naming the account.",
});

const paymentMethodTestCard = z
  .string()
  .regex(/^[0-9]{12,19}$/, { message: 'test_card must be 12 to 19 digits' })
  // Refused here, not by the connector later: an unknown card would only end `failed` after the wait.
  .refine((v) => testCardScenario(v) !== null, { message: UNKNOWN_TEST_CARD_MESSAGE })
  .meta({ description: `Sandbox only: one of the gateway's test cards (${acceptedTestCards()}). Refused unless every candidate connector is a sandbox.` });

const routingHints = {
  brand: withoutCardNumber(shortText(32)).optional(),
  country: z.string().regex(/^[A-Z]{2}$/, { message: 'country must be an upper-case ISO 3166-1 alpha-2 code' }).optional(),
};

// What the API documents: a union on how the card is given, exactly one of id, tokens, test_card.
const paymentMethodVariants = [
  z.strictObject({ type: z.literal('card'), id: paymentMethodId, ...routingHints }).meta({ title: 'Vaulted card' }),
  z.strictObject({ type: z.literal('card'), tokens: paymentMethodTokens, ...routingHints }).meta({ title: 'Provider tokens' }),
  z.strictObject({ type: z.literal('card'), test_card: paymentMethodTestCard, ...routingHints }).meta({ title: 'Test card' }),
];
/** The union as OpenAPI shows it (src/api/openapi.ts puts it in place of paymentMethodSchema). */
export const paymentMethodUnion = z.union(paymentMethodVariants).meta({ description: 'The card: exactly one of id (a vaulted card), tokens (provider tokens by account) or test_card (sandbox only).' });

/**
 * What the API parses: one object with every field optional and "exactly one of" checked on its
 * own, so a bad field is named precisely (a union's error would only say no variant matched).
 */
export const paymentMethodSchema = z
  .strictObject({
    type: z.literal('card'),
    id: paymentMethodId.optional(),
    tokens: paymentMethodTokens.optional(),
    test_card: paymentMethodTestCard.optional(),
    ...routingHints,
  })
  .superRefine((pm, ctx) => {
    const given = (['id', 'tokens', 'test_card'] as const).filter((k) => pm[k] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({ code: 'custom', message: given.length === 0 ? 'give exactly one of id (a vaulted card), tokens or (in sandbox mode) test_card' : `give exactly one of id, tokens, test_card (got ${given.join(', ')})` });
    } else if (pm.tokens !== undefined && Object.keys(pm.tokens).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['tokens'], message: 'tokens must name at least one connector account' });
    }
  });

/** https anywhere, http only on localhost: where the customer's browser is sent back after authentication. */
export function isAllowedReturnUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]');
}

const returnUrl = withoutCardNumber(z.string().max(2000))
  .refine(isAllowedReturnUrl, { message: 'return_url must be an https URL (http only on localhost), without credentials' })
  .meta({ description: "The merchant's page the customer's browser returns to after authentication, with payment_id=<id> added. Without it a card that needs authentication is declined authentication_required." });

const browserInfo = z
  .strictObject({
    user_agent: withoutCardNumber(z.string().min(1).max(2048)),
    accept_header: withoutCardNumber(z.string().min(1).max(2048)),
    language: withoutCardNumber(z.string().min(1).max(35)),
    color_depth: z.int().min(1).max(48),
    screen_height: z.int().min(0).max(100_000),
    screen_width: z.int().min(0).max(100_000),
    time_zone_offset: z.int().min(-1440).max(1440).meta({ description: 'Minutes from UTC, as JavaScript getTimezoneOffset() gives it.' }),
    java_enabled: z.boolean(),
    javascript_enabled: z.boolean().optional(),
  })
  .meta({ description: "The shopper's browser, forwarded to providers that use it (Adyen web 3-D Secure)." });

export const createPaymentBody = z
  .strictObject({
    // At least 1, as the core requires (src/core/step.ts): a zero-amount payment is refused here, naming `amount`.
    amount: positiveMinorUnits,
    currency: currencyCode,
    reference: withoutCardNumber(shortText(255)),
    capture_method: z.enum(['manual', 'automatic']),
    allow_partial_authorization: z.boolean().optional(),
    payment_method: paymentMethodSchema,
    metadata: metadata.optional(),
    return_url: returnUrl.optional(),
    authentication: z.enum(['automatic', 'challenge', 'none']).optional().meta({
      description: 'Customer authentication (3-D Secure): automatic (default, when the issuer asks), challenge (always ask), none (never: a card that needs it is declined authentication_required).',
    }),
    browser_info: browserInfo.optional(),
    shopper_ip: z.union([z.ipv4(), z.ipv6()], { error: 'shopper_ip must be an IPv4 or IPv6 address' }).optional().meta({ description: "The shopper's IP address (Adyen web 3-D Secure)." }),
  })
  .meta({ id: 'CreatePaymentRequest' });

export const captureBody = z
  .strictObject({
    amount: positiveMinorUnits.optional().meta({ description: 'Defaults to everything still capturable.' }),
    final: z.boolean().optional().meta({ description: 'Default true: release the uncaptured remainder.' }),
  })
  .meta({ id: 'CaptureRequest' });

export const voidBody = z.strictObject({}).meta({ id: 'VoidRequest' });

/** A change to the metadata: the same limits as at creation; null removes a key; at most 50 keys after the change (the core checks the merged set). */
export const updatePaymentBody = z
  .strictObject({
    metadata: z
      .record(z.string().min(1).max(40), withoutCardNumber(z.string().max(500)).nullable())
      .superRefine((m, ctx) => {
        for (const k of Object.keys(m)) if (containsCardNumber(k)) ctx.addIssue({ code: 'custom', path: [maskCardNumbers(k, '[card]')], message: `the key ${CARD_NUMBER_MESSAGE}` });
      })
      .refine((m) => Object.keys(m).length > 0, { message: 'name at least one metadata key to set or (with null) to remove' })
      .meta({ description: 'Keys to set (string values, <= 500 chars) or remove (null). At most 50 keys after the change; neither keys nor values may hold a card number.' }),
  })
  .meta({ id: 'UpdatePaymentRequest' });

export const refundBody = z
  .strictObject({
    amount: positiveMinorUnits.optional().meta({ description: 'Defaults to everything still refundable.' }),
    reason: withoutCardNumber(z.string().max(500)).optional(),
  })
  .meta({ id: 'RefundRequest' });

export type CreatePaymentBody = z.output<typeof createPaymentBody>;
export type CaptureBody = z.output<typeof captureBody>;
export type RefundBody = z.output<typeof refundBody>;
