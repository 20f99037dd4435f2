// Response shapes, as zod schemas: the OpenAPI document is generated from them and the
// integration tests parse real answers with them, so the documented shape is the served shape.
// The payment, capture and refund resources live in src/resources (the merchant events embed them).

import { z } from 'zod';
import { KEY_ROLES } from '../core/api-keys.ts';
import { PAYMENT_STATES } from '../core/states.ts';
import { MERCHANT_EVENT_TYPES } from '../core/effects.ts';
import { captureResource, paymentResource, refundResource } from '../resources/schemas.ts';
import { PROBLEMS } from './problems.ts';
import type { ProblemCode } from './problems.ts';

const timestamp = z.string().meta({ format: 'date-time' });

export const transitionResource = z
  .strictObject({
    id: z.int(),
    object: z.literal('transition'),
    from: z.enum(PAYMENT_STATES),
    to: z.enum(PAYMENT_STATES),
    origin: z.enum(['api', 'worker', 'webhook', 'poll', 'timer', 'operator', 'reconcile']),
    input: z.unknown().meta({ description: 'The input the payment received.' }),
    attempt_id: z.string().nullable(),
    raw_provider: z.unknown().meta({ description: "The provider status or payload behind this input, when there was one. As history keeps it: client secrets masked, a provider page's URL without its query." }),
    outcome: z.enum(['applied', 'ignored']),
    code: z.string().nullable(),
    reason: z.string(),
    version: z.int(),
    at: timestamp,
  })
  .meta({ id: 'Transition' });

function listOf<T extends z.ZodType>(item: T, id: string) {
  return z.strictObject({ object: z.literal('list'), data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() }).meta({ id });
}

export const eventListItem = z
  .strictObject({
    object: z.literal('event'),
    id: z.string(),
    type: z.string().meta({ description: 'payment.authorized, refund.succeeded, dispute.opened, … (docs/webhooks.md).' }),
    livemode: z.boolean().optional().meta({ description: "The event's payment's mode (absent on events written before modes existed)." }),
    created: timestamp.meta({ description: 'As created_at (kept: events of the first API version had only created).' }),
    created_at: timestamp,
    api_version: z.string().optional().meta({ description: 'The API version the event was written in (absent on events written before versions existed).' }),
    payment_id: z.string().nullable(),
    data: z.record(z.string(), z.unknown()).meta({ description: "The event's data as its webhook delivered it: the payment (and refund, capture or dispute) at the version that produced it." }),
  })
  .meta({ id: 'EventListItem' });

/** A dispute as an event carries it (src/resources/event-body.ts DisputeView). */
const eventDispute = z.strictObject({
  id: z.string(), status: z.string(), amount: z.int(), currency: z.string(), withdrawn: z.int().meta({ description: 'What the provider holds back for the dispute now (minor units).' }),
  provider_status: z.string(), reason: z.string().nullable(), provider_reference: z.string(),
});

/** What a webhook delivers (src/resources/event-body.ts): the body the endpoint receives, signed. */
export const deliveredEvent = z
  .strictObject({
    id: z.string(),
    object: z.literal('event'),
    type: z.enum(MERCHANT_EVENT_TYPES),
    livemode: z.boolean(),
    created: timestamp.meta({ description: 'As created_at (kept: events of the first API version had only created).' }),
    created_at: timestamp,
    api_version: z.string().meta({ description: "The merchant's pinned API version when the event was written (docs/changelog.md)." }),
    data: z.strictObject({
      payment: paymentResource.meta({ description: 'The payment at the version that produced the event.' }),
      refund: refundResource.optional(),
      capture: captureResource.optional(),
      dispute: eventDispute.optional(),
    }),
  })
  .meta({ id: 'Event' });

/** GET /v1/events/{id}: the event, its delivered body and every delivery with its attempts. */
export const eventWithDeliveries = z
  .strictObject({
    id: z.string(),
    object: z.literal('event'),
    type: z.string(),
    payment_id: z.string().nullable(),
    created: timestamp,
    created_at: timestamp,
    body: z.unknown().meta({ description: 'The body as delivered (see the webhooks section: Event).' }),
    deliveries: z.array(z.strictObject({
      id: z.string(), endpoint_id: z.string(), status: z.string(), attempts: z.int(), next_attempt_at: timestamp.nullable(), delivered_at: timestamp.nullable(),
      last_status_code: z.int().nullable(), last_error: z.string().nullable(),
      attempt_log: z.array(z.strictObject({ attempt: z.int(), at: timestamp, status_code: z.int().nullable(), error: z.string().nullable(), duration_ms: z.number(), kid: z.string() })),
    })),
  })
  .meta({ id: 'EventWithDeliveries' });

export const paymentList = listOf(paymentResource, 'PaymentList');
export const refundList = listOf(refundResource, 'RefundList');
export const eventList = listOf(eventListItem, 'EventList');
export const timelineList = listOf(transitionResource, 'Timeline');

export const problemResource = z
  .strictObject({
    type: z.string(),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    code: z.enum(Object.keys(PROBLEMS) as [ProblemCode, ...ProblemCode[]]),
    errors: z.array(z.strictObject({ path: z.string(), message: z.string() })).optional(),
    failure_code: z.string().optional().meta({ description: 'On *_declined and *_rejected: our code for why the operation failed (as the resource\'s failure_code).' }),
    decline_code: z.string().optional().meta({ description: "On *_declined: the provider's own decline code." }),
    decline_class: z.enum(['hard', 'soft']).optional().meta({ description: 'On *_declined: hard (do not retry) or soft (may succeed later).' }),
    payment_id: z.string().optional().meta({ description: 'On *_declined and *_rejected: the payment, whose resource shows the operation and its failure.' }),
    required_roles: z.array(z.enum(KEY_ROLES)).optional().meta({ description: 'On insufficient_role: the key roles that may call this operation (docs/api.md, "Keys and modes").' }),
    key_role: z.enum(KEY_ROLES).nullable().optional().meta({ description: "On insufficient_role: the role of the key that called." }),
  })
  .meta({ id: 'Problem' });

export { attemptResource, captureResource, paymentResource, refundResource, routingResource } from '../resources/schemas.ts';
export type { PaymentResource, RefundResource } from '../resources/schemas.ts';
export type TransitionResource = z.output<typeof transitionResource>;
export type EventListItem = z.output<typeof eventListItem>;

/** One currency of a merchant's balance, from the ledger (may go negative: reversals after payout). */
export const balanceResource = z
  .strictObject({
    object: z.literal('balance'),
    currency: z.string(),
    payable: z.int().meta({ description: 'Owed to the merchant: captures net of refunds and reversals (merchant payable account).' }),
    disputed: z.int().meta({ description: 'Withdrawn for open disputes (merchant disputes account).' }),
  })
  .meta({ id: 'Balance' });

export const balanceList = z
  .strictObject({ object: z.literal('list'), data: z.array(balanceResource), has_more: z.boolean(), next_cursor: z.string().nullable() })
  .meta({ id: 'BalanceList' });
