// Response shapes, as zod schemas: the OpenAPI document is generated from them and the
// integration tests parse real answers with them, so the documented shape is the served shape.

import { z } from 'zod';
import { CALL_OUTCOME_KINDS } from '../core/outcome.ts';
import { PAYMENT_STATES, REFUND_STATES } from '../core/states.ts';
import { PROBLEMS } from './problems.ts';
import type { ProblemCode } from './problems.ts';

const timestamp = z.string().meta({ format: 'date-time' });
const amount = z.int().min(0);

export const attemptResource = z
  .strictObject({
    id: z.string(),
    connector: z.string(),
    status: z.string().meta({ description: 'preparing, authorizing, unknown, fencing, authorized, declined, abandoned, releasing, released or review.' }),
    provider_reference: z.string().nullable(),
    outcome: z.enum(CALL_OUTCOME_KINDS).nullable().meta({ description: 'Kind of the last provider answer to this attempt.' }),
    proof: z.enum(['declined', 'not_sent', 'fenced']).nullable().meta({ description: 'The not-charged proof that allowed the next attempt.' }),
    decline_code: z.string().nullable(),
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

export const paymentResource = z
  .strictObject({
    id: z.string(),
    object: z.literal('payment'),
    status: z.enum(PAYMENT_STATES),
    amount,
    currency: z.string(),
    amount_authorized: amount,
    amount_captured: amount,
    amount_refunded: amount,
    capture_method: z.enum(['manual', 'automatic']),
    reference: z.string(),
    metadata: z.record(z.string(), z.string()),
    connector: z.string().nullable().meta({ description: 'The connector holding the authorization, else the one of the latest attempt.' }),
    attempts: z.array(attemptResource),
    routing: routingResource,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Payment' });

export const refundResource = z
  .strictObject({
    id: z.string(),
    object: z.literal('refund'),
    payment_id: z.string(),
    amount,
    currency: z.string(),
    status: z.enum(REFUND_STATES),
    reason: z.string().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Refund' });

export const transitionResource = z
  .strictObject({
    id: z.int(),
    object: z.literal('transition'),
    from: z.enum(PAYMENT_STATES),
    to: z.enum(PAYMENT_STATES),
    origin: z.enum(['api', 'worker', 'webhook', 'poll', 'timer', 'operator', 'reconcile']),
    input: z.unknown().meta({ description: 'The input the payment received.' }),
    attempt_id: z.string().nullable(),
    raw_provider: z.unknown().meta({ description: 'The provider status or payload behind this input, when there was one.' }),
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

export const paymentList = listOf(paymentResource, 'PaymentList');
export const timelineList = listOf(transitionResource, 'Timeline');

export const problemResource = z
  .strictObject({
    type: z.string(),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    code: z.enum(Object.keys(PROBLEMS) as [ProblemCode, ...ProblemCode[]]),
    errors: z.array(z.strictObject({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Problem' });

export type PaymentResource = z.output<typeof paymentResource>;
export type RefundResource = z.output<typeof refundResource>;
export type TransitionResource = z.output<typeof transitionResource>;

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
