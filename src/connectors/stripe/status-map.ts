// Stripe objects -> CallOutcome. Every known status is listed; a status this code does not know
// maps to unknown (resolve later), never to succeeded or declined.

import type Stripe from 'stripe';
import type { CallOutcome, Unknown } from '../../core/outcome.ts';
import type { DeclineTable } from '../contract.ts';
import type { DeclineFacts } from '../decline-table.ts';
import { declinedOutcome } from '../decline-table.ts';
import { fromStripeAmount, integrityProblem, refId } from './transformers.ts';

export interface Asked {
  readonly amount: number;
  readonly currency: string;
}

/** A PaymentIntent that was cancelled and never collected: Stripe will never charge it, so it is fenced. */
export const CANCELED_DECLINE_CODE = 'payment_intent_canceled';

/** Stripe's last_payment_error.code after the customer failed 3-D Secure. */
export const AUTHENTICATION_FAILURE = 'payment_intent_authentication_failure';

function str(o: unknown, k: string): string | undefined {
  if (typeof o !== 'object' || o === null || !(k in o)) return undefined;
  const v = (o as Record<string, unknown>)[k];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** decline_code is the issuer's reason (insufficient_funds); code is Stripe's (card_declined, expired_card). */
export function stripeDeclineFacts(error: unknown, providerRef?: string): DeclineFacts {
  const providerCode = str(error, 'code') ?? 'card_declined';
  const code = str(error, 'decline_code') ?? providerCode;
  const pi = typeof error === 'object' && error !== null && 'payment_intent' in error ? error.payment_intent : undefined;
  const ref = str(pi, 'id') ?? providerRef;
  const message = str(error, 'message');
  return {
    code,
    providerCode,
    ...(ref !== undefined ? { providerRef: ref } : {}),
    ...(str(pi, 'status') !== undefined ? { providerStatus: str(pi, 'status') as string } : {}),
    ...(message !== undefined ? { message } : {}),
  };
}

function minor(wire: number, wireCurrency: string): number {
  return fromStripeAmount(wire, wireCurrency)?.amount ?? wire;
}

function unexpected(providerRef: string, what: string, status: string): Unknown {
  return { kind: 'unknown', reason: 'unexpected', providerRef, detail: `${what} status ${status}` };
}

/** The truth of an authorization, from a confirm answer, a retrieve, or a webhook. */
export function paymentIntentOutcome(pi: Stripe.PaymentIntent, asked: Asked | null, table: DeclineTable): CallOutcome {
  if (asked !== null) {
    const mismatch = integrityProblem(asked, { amount: pi.amount, currency: pi.currency }, pi.id);
    if (mismatch !== null) return mismatch;
  }
  const base = { providerRef: pi.id, providerStatus: pi.status };
  const currency = pi.currency.toUpperCase();
  const lastError = pi.last_payment_error;
  switch (pi.status) {
    case 'requires_capture':
      return { kind: 'succeeded', ...base, amount: minor(pi.amount_capturable, pi.currency), currency };
    case 'succeeded':
      return { kind: 'succeeded', ...base, amount: minor(pi.amount_received, pi.currency), currency };
    case 'processing':
      return { kind: 'pending', ...base };
    case 'requires_action': {
      // Only a redirect can be presented by the gateway; use_stripe_sdk (Stripe.js) cannot: no redirect.
      const redirect = pi.next_action?.type === 'redirect_to_url' ? pi.next_action.redirect_to_url?.url : undefined;
      return {
        kind: 'action_required', providerRef: pi.id, action: pi.next_action?.type ?? 'requires_action',
        ...(typeof redirect === 'string' && redirect.length > 0 ? { redirect: { url: redirect, method: 'GET' as const } } : {}),
      };
    }
    case 'requires_payment_method':
      // A failed authentication leaves the PaymentIntent open to another confirm: proof only after a cancel.
      if (lastError?.code === AUTHENTICATION_FAILURE) {
        return { ...declinedOutcome(table, { ...stripeDeclineFacts(lastError), code: 'authentication_failed', ...base }), stillOpen: true };
      }
      if (lastError !== null && lastError !== undefined) return declinedOutcome(table, { ...stripeDeclineFacts(lastError), ...base });
      return { kind: 'unknown', reason: 'not_found', providerRef: pi.id, detail: 'no payment method was ever confirmed' };
    case 'requires_confirmation':
      // The confirm never took effect. Not proof: it may still be in flight, so the caller fences.
      return { kind: 'unknown', reason: 'not_found', providerRef: pi.id, detail: 'the PaymentIntent was never confirmed' };
    case 'canceled':
      if (pi.amount_received > 0) return { kind: 'succeeded', ...base, amount: minor(pi.amount_received, pi.currency), currency };
      if (lastError !== null && lastError !== undefined) return declinedOutcome(table, { ...stripeDeclineFacts(lastError), ...base });
      return declinedOutcome(table, { code: CANCELED_DECLINE_CODE, providerCode: `canceled:${pi.cancellation_reason ?? 'none'}`, ...base });
    default:
      return unexpected(pi.id, 'PaymentIntent', pi.status);
  }
}

/** `prepare` moves no money: success carries amount 0 so it can never be counted as an authorization. */
export function preparedOutcome(pi: Stripe.PaymentIntent, asked: Asked): CallOutcome {
  const mismatch = integrityProblem(asked, { amount: pi.amount, currency: pi.currency }, pi.id);
  if (mismatch !== null) return mismatch;
  switch (pi.status) {
    case 'requires_confirmation':
    case 'requires_payment_method':
      return { kind: 'succeeded', providerRef: pi.id, amount: 0, currency: asked.currency, providerStatus: pi.status };
    case 'requires_capture':
    case 'succeeded':
    case 'processing':
    case 'requires_action':
    case 'canceled':
      // A fresh create never reaches these; the key must have been reused for a confirmed intent.
      return { kind: 'unknown', reason: 'unexpected', providerRef: pi.id, detail: `prepare returned status ${pi.status}`, alert: true };
    default:
      return unexpected(pi.id, 'PaymentIntent', pi.status);
  }
}

/** Capture: Stripe echoes the cumulative amount_received, so the earlier captures are subtracted. */
export function capturedOutcome(pi: Stripe.PaymentIntent, asked: Asked, alreadyCaptured: number): CallOutcome {
  const received = fromStripeAmount(pi.amount_received, pi.currency);
  if (received === null || received.currency !== asked.currency || received.amount - alreadyCaptured !== asked.amount) {
    const echoed = received === null ? `${pi.amount_received} ${pi.currency}` : `${received.amount - alreadyCaptured} ${received.currency}`;
    return { kind: 'unknown', reason: 'integrity_mismatch', providerRef: pi.id, alert: true, detail: `asked to capture ${asked.amount} ${asked.currency}, Stripe shows ${echoed} more` };
  }
  switch (pi.status) {
    case 'succeeded':
    case 'requires_capture': // multicapture with final_capture=false keeps the rest capturable
      return { kind: 'succeeded', providerRef: pi.id, amount: asked.amount, currency: asked.currency, providerStatus: pi.status };
    case 'processing':
      return { kind: 'pending', providerRef: pi.id, providerStatus: pi.status };
    case 'canceled':
    case 'requires_payment_method':
    case 'requires_confirmation':
    case 'requires_action':
      return unexpected(pi.id, 'captured PaymentIntent', pi.status);
    default:
      return unexpected(pi.id, 'PaymentIntent', pi.status);
  }
}

/** Void: a cancelled PaymentIntent releases the hold; the outcome carries the released amount. */
export function voidedOutcome(pi: Stripe.PaymentIntent, asked: Asked): CallOutcome {
  const mismatch = integrityProblem(asked, { amount: pi.amount, currency: pi.currency }, pi.id);
  if (mismatch !== null) return mismatch;
  switch (pi.status) {
    case 'canceled':
      return { kind: 'succeeded', providerRef: pi.id, amount: asked.amount, currency: asked.currency, providerStatus: pi.status };
    case 'succeeded':
    case 'requires_capture':
    case 'processing':
    case 'requires_action':
    case 'requires_payment_method':
    case 'requires_confirmation':
      return unexpected(pi.id, 'cancelled PaymentIntent', pi.status);
    default:
      return unexpected(pi.id, 'PaymentIntent', pi.status);
  }
}

export function refundOutcome(refund: Stripe.Refund, asked: Asked, table: DeclineTable): CallOutcome {
  const mismatch = integrityProblem(asked, { amount: refund.amount, currency: refund.currency }, refund.id);
  if (mismatch !== null) return mismatch;
  const status = refund.status ?? 'unknown';
  switch (status) {
    case 'succeeded':
      return { kind: 'succeeded', providerRef: refund.id, amount: asked.amount, currency: asked.currency, providerStatus: status };
    case 'pending':
    case 'requires_action':
      return { kind: 'pending', providerRef: refund.id, providerStatus: status };
    case 'failed':
    case 'canceled':
      return declinedOutcome(table, {
        code: refund.failure_reason ?? `refund_${status}`,
        providerCode: refund.failure_reason ?? status,
        providerRef: refund.id,
        providerStatus: status,
      });
    default:
      return unexpected(refund.id, 'Refund', status);
  }
}

/** The PaymentIntent a charge, refund or dispute belongs to. */
export function paymentIntentIdOf(o: { readonly payment_intent?: string | Stripe.PaymentIntent | null }): string | null {
  return refId(o.payment_intent);
}
