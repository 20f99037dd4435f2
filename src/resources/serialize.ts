// Domain -> wire: the only place that knows the JSON field names of the payment, capture and
// refund resources. The API answers with these and the merchant events embed the same objects.

import { amountCapturable, amountReleased } from '../core/capture-amounts.ts';
import type { Attempt, Capture, Payment, Refund } from '../core/payment.ts';
import { paymentConnector } from '../core/payment-connector.ts';
import { authenticationPagePath } from './authentication-tokens.ts';
import type { AttemptResource, CaptureResource, PaymentResource, RefundResource } from './schemas.ts';

const SEND_RETURN_URL = 'The issuer requires customer authentication (3-D Secure): send a return_url so the customer can be sent to authenticate.';

/** The attempt holding the payment shows captured once anything was captured on it (the core keeps it authorized: it still holds the payment). */
function attemptStatus(p: Payment, a: Attempt): string {
  return a.status === 'authorized' && p.amountCaptured > 0 ? 'captured' : a.status;
}

function attemptResource(p: Payment, a: Attempt): AttemptResource {
  const noReturnUrl = (p.authentication?.returnUrl ?? null) === null;
  return {
    id: a.id, connector: a.connector, status: attemptStatus(p, a), provider_reference: a.providerRef, outcome: a.lastOutcome, proof: a.proof,
    decline_code: a.declineCode,
    decline_message: a.declineCode === 'authentication_required' && noReturnUrl ? SEND_RETURN_URL : null,
    release: a.release === null ? null : {
      number: a.release.no, round: a.release.round, kind: a.release.kind, amount: a.release.amount, status: a.release.status,
      provider_reference: a.release.providerRef, failure_code: a.release.failure?.code ?? null,
    },
    created_at: a.createdAt,
  };
}

export function captureResource(c: Capture): CaptureResource {
  return {
    id: c.id, object: 'capture', amount: c.amount, final: c.final, status: c.status,
    failure_code: c.failure?.code ?? null, failure_message: c.failure?.message ?? null, provider_reference: c.providerRef, created_at: c.createdAt,
  };
}

/** Only the payment's id, currency and mode are read: a list of refunds passes just those. */
export function refundResource(p: Pick<Payment, 'id' | 'currency' | 'livemode'>, r: Refund): RefundResource {
  return {
    id: r.id, object: 'refund', livemode: p.livemode, payment_id: p.id, amount: r.amount, currency: p.currency, status: r.status, reason: r.reason,
    failure_code: r.failure?.code ?? null, failure_message: r.failure?.message ?? null, provider_reference: r.providerRef, created_at: r.createdAt,
  };
}

/**
 * Automatic capture captures with the approval and keeps no capture record of it (the core books
 * it as the approval's): the resource lists it all the same, under an id derived from the attempt's.
 * A record made later for it (the scheme reversing it) is listed instead.
 */
function automaticCapture(p: Payment): CaptureResource | null {
  const a = p.attempts.find((x) => x.status === 'authorized');
  if (p.captureMethod !== 'automatic' || p.captures.length > 0 || a === undefined || p.amountCaptured === 0) return null;
  return {
    id: `cap_${a.id.slice(a.id.indexOf('_') + 1)}`, object: 'capture', amount: p.amountCaptured, final: true, status: 'succeeded',
    failure_code: null, failure_message: null, provider_reference: a.providerRef, created_at: a.createdAt,
  };
}

function nextAction(p: Payment): PaymentResource['next_action'] {
  const a = p.attempts[p.attempts.length - 1];
  const auth = a?.authentication;
  const base = p.authentication?.gatewayUrl ?? null;
  const key = p.authentication?.tokenKey;
  if (p.state !== 'requires_action' || a === undefined || auth?.stage !== 'awaiting_customer' || auth.expiresAt === null || base === null || key === undefined) return null;
  // The page token in the URL is the capability (no API key): whoever has the URL may open the page.
  return { type: 'redirect_to_url', url: `${base}${authenticationPagePath(key, a.id)}`, expires_at: auth.expiresAt };
}

/** `updatedAt`: when this version of the payment was written (the row's updated_at, or the transition's time). */
export function paymentResource(p: Payment, updatedAt: string): PaymentResource {
  return {
    id: p.id, object: 'payment', livemode: p.livemode, status: p.state, amount: p.amount, currency: p.currency,
    amount_authorized: p.amountAuthorized, amount_captured: p.amountCaptured, amount_refunded: p.amountRefunded,
    amount_capturable: amountCapturable(p), amount_released: amountReleased(p),
    capture_method: p.captureMethod, reference: p.reference, metadata: { ...p.metadata },
    connector: paymentConnector(p),
    attempts: p.attempts.map((a) => attemptResource(p, a)),
    captures: [...p.captures.map(captureResource), ...[automaticCapture(p)].filter((c) => c !== null)],
    refunds: p.refunds.map((r) => refundResource(p, r)),
    routing: { snapshot: p.routing.snapshot, rule: p.routing.rule, candidates: [...p.routing.candidates], skipped: p.routing.skipped.map((s) => ({ ...s })) },
    ...(p.vaultedCard === undefined ? {} : {
      payment_method: { type: 'card' as const, id: p.vaultedCard.id, card: { brand: p.vaultedCard.brand, last4: p.vaultedCard.last4, exp_month: p.vaultedCard.expMonth, exp_year: p.vaultedCard.expYear } },
    }),
    return_url: p.authentication?.returnUrl ?? null,
    next_action: nextAction(p),
    created_at: p.createdAt, updated_at: updatedAt,
  };
}
