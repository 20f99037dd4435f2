// Stripe events and their signature: `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>`,
// keyed with the whole secret (whsec_ prefix included), over the exact bytes sent.

import { createHmac } from 'node:crypto';
import type { OutgoingEvent } from '../shared/webhook-dispatcher.ts';
import { stripeId } from './ids.ts';
import type { StripeObject } from './objects.ts';

/** The API version stripe@23.1.0 pins; events carry it like Stripe does for the endpoint's version. */
export const STRIPE_API_VERSION = '2026-10-28.endive';

export interface EventOrigin {
  readonly requestId: string | null;
  readonly idempotencyKey: string | null;
}

/**
 * `previous`: the changed fields' values before the change. Stripe sends it (`data.previous_attributes`)
 * with every `*.updated` event, so one is required for those.
 */
export function buildStripeEvent(type: string, object: StripeObject, created: number, origin: EventOrigin, previous?: StripeObject): OutgoingEvent {
  if (type.endsWith('.updated') && previous === undefined) throw new Error(`a ${type} event needs the previous values of what changed (previous_attributes)`);
  const id = stripeId('evt');
  const event = {
    id,
    object: 'event',
    api_version: STRIPE_API_VERSION,
    created,
    data: { object, ...(previous !== undefined && { previous_attributes: previous }) },
    livemode: false,
    pending_webhooks: 1,
    request: { id: origin.requestId, idempotency_key: origin.idempotencyKey },
    type,
  };
  return { id, type, body: JSON.stringify(event, null, 2) };
}

export function stripeSignatureHeader(secret: string, body: string, timestampSeconds: number): string {
  const signature = createHmac('sha256', secret).update(`${timestampSeconds}.${body}`, 'utf8').digest('hex');
  return `t=${timestampSeconds},v1=${signature}`;
}

export function stripeWebhookHeaders(secret: string): (body: string) => Record<string, string> {
  // Real wall-clock time, not the sandbox clock: the receiver checks tolerance against its own clock.
  return (body) => ({
    'content-type': 'application/json; charset=utf-8',
    'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    'stripe-signature': stripeSignatureHeader(secret, body, Math.floor(Date.now() / 1000)),
  });
}
