// Reading back a cancel, capture or refund that Stripe answered "already done" (unknown{already_done}):
// the PaymentIntent by id, with its latest charge's refunds for a refund. The answer is in the
// operation's terms and only ever what the object shows: a cancel is done when the PaymentIntent
// is canceled with nothing received; a capture when Stripe received exactly what this capture
// asked on top of the earlier ones; a refund when the charge lists a refund carrying our refund id
// (metadata.refund_id), as that refund says. When the object shows the operation did not happen and
// never can (all captured or refunded by someone else) Stripe's refusal stands: not_sent{validation}.
// Anything else is unknown, which the core looks up again and, past its bound, parks: never a guess.

import type Stripe from 'stripe';
import type { CallOutcome, NotSent, Unknown } from '../../core/outcome.ts';
import type { DeclineTable, OperationLookupRequest } from '../contract.ts';
import { recordAttempts } from './attempt-recorder.ts';
import { refundOutcome } from './status-map.ts';
import { fromStripeAmount } from './transformers.ts';

function inconclusive(providerRef: string, detail: string): Unknown {
  return { kind: 'unknown', reason: 'not_found', providerRef, detail };
}

/**
 * The object shows this operation did not happen and never can (someone else captured or refunded
 * all of it): Stripe's refusal stands, as a refusal of the request (the core's "rejected").
 */
function cannotHappen(providerRef: string, detail: string): NotSent {
  return { kind: 'not_sent', reason: 'validation', providerRef, detail };
}

/** A cancel (void, fence, release by cancel): done when the PaymentIntent is canceled and never received money. */
export function cancelLookupOutcome(pi: Stripe.PaymentIntent, asked: OperationLookupRequest): CallOutcome {
  if (pi.status !== 'canceled') return inconclusive(pi.id, `the PaymentIntent is ${pi.status}, not canceled`);
  if (pi.amount_received > 0) return { kind: 'unknown', reason: 'unexpected', providerRef: pi.id, detail: `the PaymentIntent is canceled after receiving ${pi.amount_received} ${pi.currency}` };
  return { kind: 'succeeded', providerRef: pi.id, amount: asked.amount, currency: asked.currency, providerStatus: pi.status };
}

/** A capture: done when Stripe received exactly this capture's amount on top of the earlier captures. */
export function captureLookupOutcome(pi: Stripe.PaymentIntent, asked: OperationLookupRequest): CallOutcome {
  const received = fromStripeAmount(pi.amount_received, pi.currency);
  if (received === null || received.currency !== asked.currency) {
    return { kind: 'unknown', reason: 'integrity_mismatch', providerRef: pi.id, alert: true, detail: `asked ${asked.currency}, the PaymentIntent is in ${pi.currency}` };
  }
  const more = received.amount - (asked.alreadyCaptured ?? 0);
  const capturedState = pi.status === 'succeeded' || pi.status === 'requires_capture';
  if (capturedState && more === asked.amount) return { kind: 'succeeded', providerRef: pi.id, amount: asked.amount, currency: asked.currency, providerStatus: pi.status };
  // Nothing is capturable any more and what was received is not this capture: it did not happen and cannot.
  if (pi.status === 'succeeded' || pi.status === 'canceled') {
    return cannotHappen(pi.id, `the PaymentIntent is ${pi.status} with ${more} ${asked.currency} received beyond the earlier captures, not this capture's ${asked.amount}`);
  }
  return inconclusive(pi.id, `the PaymentIntent is ${pi.status} with ${more} ${asked.currency} received beyond the earlier captures; this capture asked ${asked.amount}`);
}

/** A refund: the one on the charge that carries our refund id, as it stands. */
export function refundLookupOutcome(charge: Stripe.Charge | null, asked: OperationLookupRequest, table: DeclineTable): CallOutcome {
  const ref = charge?.payment_intent === undefined ? asked.providerRef : typeof charge.payment_intent === 'string' ? charge.payment_intent : (charge.payment_intent?.id ?? asked.providerRef);
  const refunds = charge?.refunds;
  if (charge === null || refunds === undefined || refunds === null) return inconclusive(ref, 'the PaymentIntent has no charge with refunds to read');
  const ours = refunds.data.find((r) => r.metadata?.['refund_id'] === asked.refundId);
  if (ours !== undefined) return refundOutcome(ours, asked, table);
  if (refunds.has_more) return { kind: 'unknown', reason: 'unexpected', providerRef: ref, detail: `refund ${asked.refundId ?? '?'} not in the first ${refunds.data.length} refunds of ${charge.id}` };
  // Every refund of the charge is listed (read after write), none is ours, and nothing is left to refund.
  if (charge.amount_refunded >= charge.amount_captured) return cannotHappen(ref, `no refund of ${charge.id} carries refund id ${asked.refundId ?? '?'}, and the charge is refunded in full`);
  return inconclusive(ref, `no refund of ${charge.id} carries refund id ${asked.refundId ?? '?'}`);
}

/** The SDK call's failure: a read that failed is never proof of anything. */
function lookupFailed(providerRef: string, error: unknown): Unknown {
  const message = typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
  return { kind: 'unknown', reason: 'unexpected', providerRef, detail: `lookup failed: ${message}` };
}

export async function lookUpOperation(stripe: Stripe, req: OperationLookupRequest, table: DeclineTable): Promise<CallOutcome> {
  const id = req.providerRef;
  const got = await recordAttempts(() => stripe.paymentIntents.retrieve(id, req.kind === 'refund' ? { expand: ['latest_charge.refunds'] } : {}));
  if (!got.ok) return lookupFailed(id, got.error);
  const pi = got.value;
  if (req.kind === 'cancel') return cancelLookupOutcome(pi, req);
  if (req.kind === 'capture') return captureLookupOutcome(pi, req);
  const latest = pi.latest_charge;
  if (typeof latest !== 'string') return refundLookupOutcome(latest, req, table);
  const ch = await recordAttempts(() => stripe.charges.retrieve(latest, { expand: ['refunds'] }));
  return ch.ok ? refundLookupOutcome(ch.value, req, table) : lookupFailed(id, ch.error);
}
