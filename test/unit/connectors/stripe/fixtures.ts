// Minimal Stripe objects for pure tests: only the fields the connector reads.

import type Stripe from 'stripe';

export function pi(overrides: Partial<Record<keyof Stripe.PaymentIntent, unknown>> = {}): Stripe.PaymentIntent {
  return {
    id: 'pi_1',
    object: 'payment_intent',
    amount: 1000,
    amount_capturable: 0,
    amount_received: 0,
    currency: 'eur',
    status: 'requires_confirmation',
    capture_method: 'manual',
    last_payment_error: null,
    latest_charge: null,
    cancellation_reason: null,
    next_action: null,
    metadata: { payment_id: 'pay_1', attempt_id: 'att_1' },
    created: 1_800_000_000,
    ...overrides,
  } as unknown as Stripe.PaymentIntent;
}

export function refundObject(overrides: Partial<Record<keyof Stripe.Refund, unknown>> = {}): Stripe.Refund {
  return {
    id: 're_1',
    object: 'refund',
    amount: 300,
    currency: 'eur',
    status: 'succeeded',
    failure_reason: null,
    payment_intent: 'pi_1',
    metadata: { attempt_id: 'att_1' },
    ...overrides,
  } as unknown as Stripe.Refund;
}
