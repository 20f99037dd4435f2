// The merchant resources (payment, its attempts and captures, refund), as zod schemas: the API
// answers with them, the merchant events embed them (webhooks/outbound/event-body.ts), the OpenAPI
// document is generated from them, and the tests parse real answers and events with them — so the
// documented shape is the served shape, everywhere. Pure: it depends on src/core only, so the API,
// the store's event rows and the CLI can all use it without an arrow running up a layer.

import { z } from 'zod';
import { CALL_OUTCOME_KINDS } from '../core/outcome.ts';
import { CAPTURE_STATES, PAYMENT_STATES, REFUND_STATES } from '../core/states.ts';

const timestamp = z.string().meta({ format: 'date-time' });
const amount = z.int().min(0);

export const attemptResource = z
  .strictObject({
    id: z.string(),
    connector: z.string(),
    status: z.string().meta({ description: 'preparing, authorizing, unknown, fencing, authenticating, authorized, captured (the attempt holding the payment once anything was captured on it, automatic capture included), declined, abandoned, releasing, released or review.' }),
    provider_reference: z.string().nullable(),
    outcome: z.enum(CALL_OUTCOME_KINDS).nullable().meta({ description: 'Kind of the last provider answer to this attempt.' }),
    proof: z.enum(['declined', 'not_sent', 'fenced']).nullable().meta({ description: 'The not-charged proof that allowed the next attempt.' }),
    decline_code: z.string().nullable(),
    decline_message: z.string().nullable().meta({ description: 'What to do about the decline, when the gateway knows (authentication_required without a return_url: send one).' }),
    release: z
      .strictObject({
        number: z.int().min(1).meta({ description: 'The release operation number across the payment (its provider key ends release:<number>).' }),
        round: z.int().min(1).meta({ description: '1 for the first release of this attempt, +1 for each release the provider confirmed as failed.' }),
        kind: z.enum(['void', 'refund']),
        amount,
        status: z.enum(['requested', 'pending', 'succeeded', 'failed', 'review']).meta({
          description: 'requested: sent or being sent; pending: accepted by the provider, not confirmed; succeeded: confirmed (the attempt is released); review: failed or unresolved past the bound (the payment is in needs_review).',
        }),
        provider_reference: z.string().nullable().meta({ description: "The cancel's or release refund's own reference at the provider." }),
        failure_code: z.string().nullable(),
      })
      .nullable()
      .meta({ description: 'The release of an approval the gateway does not keep (a late or partial approval): null for every other attempt. While it is in flight the attempt is releasing.' }),
    created_at: timestamp,
  })
  .meta({ id: 'Attempt' });

export const routingResource = z
  .strictObject({
    snapshot: z.string(),
    rule: z.string(),
    candidates: z.array(z.string()),
    skipped: z.array(z.strictObject({ connector: z.string(), reason: z.string() })),
  })
  .meta({ id: 'Routing' });

const failureCode = z.string().nullable().meta({
  description: 'Why it did not happen, when it failed: the normalized decline code (e.g. insufficient_funds, capture_failed) when the provider declined it; '
    + 'the refusal reason (validation, authentication, permission) when the provider rejected the request as invalid; '
    + 'the reason it never reached the provider (connection_refused, rate_limited, breaker_open) otherwise. Null unless failed.',
});
const failureMessage = z.string().nullable().meta({ description: "The provider's message, when it gave one. Null unless failed." });

export const captureResource = z
  .strictObject({
    id: z.string(),
    object: z.literal('capture'),
    amount,
    final: z.boolean().meta({ description: 'True when the provider releases the uncaptured remainder with this capture.' }),
    status: z.enum(CAPTURE_STATES).meta({ description: 'requested and pending are in flight; succeeded, failed and reversed are final.' }),
    failure_code: failureCode,
    failure_message: failureMessage,
    provider_reference: z.string().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Capture' });

export const refundResource = z
  .strictObject({
    id: z.string(),
    object: z.literal('refund'),
    livemode: z.boolean().meta({ description: "The payment's: true for a live payment. A key of the other mode does not see it." }),
    payment_id: z.string(),
    amount,
    currency: z.string(),
    status: z.enum(REFUND_STATES).meta({ description: 'requested and pending are in flight; succeeded, failed and reversed are final.' }),
    reason: z.string().nullable(),
    failure_code: failureCode,
    failure_message: failureMessage,
    provider_reference: z.string().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Refund' });

export const paymentResource = z
  .strictObject({
    id: z.string(),
    object: z.literal('payment'),
    livemode: z.boolean().meta({
      description: 'True for a live payment, false for a test one; fixed when it is made. A live key makes live payments (it reaches live accounts only), '
        + 'a test key test ones (test accounts only); a legacy key (mode any) makes a live payment when one of its candidate accounts is live. '
        + 'A test key never sees a live payment (404), a live key never a test one.',
    }),
    status: z.enum(PAYMENT_STATES),
    amount,
    currency: z.string(),
    amount_authorized: amount,
    amount_captured: amount,
    amount_refunded: amount,
    amount_capturable: amount.meta({ description: 'What a capture may still take now: the uncaptured authorization while the payment is authorized (or captured with final: false), else 0.' }),
    amount_released: amount.meta({
      description: 'What of the authorization was given back uncaptured: all of it once voided; after a final partial capture the remainder, '
        + 'once the provider confirmed its release (Adyen with multiple partial captures: the CANCELLATION of the remainder).',
    }),
    capture_method: z.enum(['manual', 'automatic']),
    reference: z.string(),
    metadata: z.record(z.string(), z.string()),
    connector: z.string().nullable().meta({ description: 'The connector holding the authorization, else the one of the latest attempt.' }),
    attempts: z.array(attemptResource),
    captures: z.array(captureResource).meta({ description: 'Every capture asked for, in order, with its outcome; under automatic capture the capture made with the approval.' }),
    refunds: z.array(refundResource).meta({ description: 'Every refund asked for, in order, with its outcome.' }),
    routing: routingResource,
    payment_method: z
      .strictObject({
        type: z.literal('card'),
        id: z.string().meta({ description: 'The vaulted card (pmd_…).' }),
        card: z.strictObject({ brand: z.string(), last4: z.string(), exp_month: z.int(), exp_year: z.int() }),
      })
      .optional()
      .meta({ description: 'The vaulted card the payment was made with (present only for payment_method.id; never the number).' }),
    return_url: z.string().nullable().meta({ description: "The merchant's return_url, when it gave one." }),
    next_action: z
      .strictObject({
        type: z.literal('redirect_to_url'),
        url: z.string().meta({ description: "The gateway's page for this payment (no API key in it): send the customer's browser there; it goes on to the provider's authentication page." }),
        expires_at: timestamp.meta({ description: 'When the customer is given up on: the attempt is then cancelled at the provider and the payment fails authentication_abandoned.' }),
      })
      .nullable()
      .meta({ description: 'Set while the payment is requires_action: what the customer must do.' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Payment' });

export type AttemptResource = z.output<typeof attemptResource>;
export type CaptureResource = z.output<typeof captureResource>;
export type RefundResource = z.output<typeof refundResource>;
export type PaymentResource = z.output<typeof paymentResource>;
