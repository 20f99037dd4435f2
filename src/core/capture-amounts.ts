// What a payment can still capture and what of its authorization was given back: derived from the
// aggregate alone, for the payment resource and for the core's own refusals.

import type { Payment } from './payment.ts';

/** The fields these read (a step's draft has them as well as a payment). */
export type CaptureView = Pick<Payment, 'state' | 'currency' | 'amountAuthorized' | 'amountCaptured' | 'captureOpen' | 'voidOp' | 'captures'>;

const capturedEver = (p: Pick<Payment, 'captures'>): number =>
  p.captures.filter((c) => c.status === 'succeeded' || c.status === 'reversed').reduce((s, c) => s + c.amount, 0);

const inFlight = (p: Pick<Payment, 'captures'>): number =>
  p.captures.filter((c) => c.status === 'requested' || c.status === 'pending').reduce((s, c) => s + c.amount, 0);

/** What a capture may still take now: nothing unless the payment is authorized, or captured with the remainder kept open. */
export function amountCapturable(p: CaptureView): number {
  const open = p.state === 'authorized' || (p.state === 'captured' && p.captureOpen);
  return open ? Math.max(0, p.amountAuthorized - p.amountCaptured - inFlight(p)) : 0;
}

/**
 * What of the authorization was given back to the customer: all of it once voided; after a final
 * partial capture, the uncaptured remainder — once the provider confirmed its cancel where the
 * gateway had to send one (Adyen with multiple partial captures), at once where the final capture
 * releases it (Stripe's final_capture, Adyen without multiple partial captures).
 */
export function amountReleased(p: CaptureView): number {
  if (p.state === 'voided') return p.amountAuthorized;
  const v = p.voidOp;
  if (v?.remainder !== undefined) return v.released === true ? v.remainder : 0;
  const closed = !p.captureOpen && p.captures.some((c) => c.final && (c.status === 'succeeded' || c.status === 'reversed'));
  return closed ? Math.max(0, p.amountAuthorized - capturedEver(p)) : 0;
}

/** Why a payment that captured part of its authorization takes no further capture, for the refusal's text. */
export function remainderNote(p: CaptureView): string {
  if (p.state !== 'captured' || p.captureOpen) return '';
  const v = p.voidOp;
  if (v?.remainder !== undefined && v.released !== true) {
    return `: its final capture closed it, and the remaining ${v.remainder} ${p.currency} is being released${v.failure === undefined ? '' : ` (the cancel failed: ${v.failure.code})`}`;
  }
  const released = amountReleased(p);
  return released > 0 ? `: its final capture released the remaining ${released} ${p.currency}` : '';
}
