// What a lookup of an operation answered "already done" makes of the Stripe objects (issue 41 §4):
// only what the object shows, in the operation's terms; anything else is unknown, never a guess.
import { describe, expect, it } from 'vitest';
import type Stripe from 'stripe';
import { STRIPE_DEFAULT_DECLINES } from '../../../../src/connectors/stripe/defaults.ts';
import { cancelLookupOutcome, captureLookupOutcome, refundLookupOutcome } from '../../../../src/connectors/stripe/operation-lookup.ts';
import type { OperationLookupRequest } from '../../../../src/connectors/contract.ts';
import { pi, refundObject } from './fixtures.ts';

const asked = (over: Partial<OperationLookupRequest> = {}): OperationLookupRequest => ({
  kind: 'cancel', paymentId: 'pay_1', attemptId: 'att_1', providerRef: 'pi_1', amount: 1000, currency: 'EUR', ...over,
});

describe('Stripe operation lookups', () => {
  it('a cancel is done when the PaymentIntent is canceled with nothing received', () => {
    expect(cancelLookupOutcome(pi({ status: 'canceled' }), asked())).toMatchObject({ kind: 'succeeded', providerRef: 'pi_1', amount: 1000 });
    expect(cancelLookupOutcome(pi({ status: 'requires_capture' }), asked())).toMatchObject({ kind: 'unknown', reason: 'not_found' });
    expect(cancelLookupOutcome(pi({ status: 'canceled', amount_received: 500 }), asked())).toMatchObject({ kind: 'unknown' });
  });

  it('a capture is done when Stripe received exactly its amount beyond the earlier captures', () => {
    const c = asked({ kind: 'capture', captureId: 'cap_2', amount: 600, alreadyCaptured: 400 });
    expect(captureLookupOutcome(pi({ status: 'succeeded', amount_received: 1000 }), c)).toMatchObject({ kind: 'succeeded', amount: 600 });
    // Captured in full by another capture, or cancelled: this capture did not happen and never can.
    expect(captureLookupOutcome(pi({ status: 'succeeded', amount_received: 400 }), c)).toMatchObject({ kind: 'not_sent', reason: 'validation' });
    expect(captureLookupOutcome(pi({ status: 'canceled', amount_received: 400 }), c)).toMatchObject({ kind: 'not_sent', reason: 'validation' });
    // Still capturable (multicapture) and not matched: nothing settled.
    expect(captureLookupOutcome(pi({ status: 'requires_capture', amount_received: 400 }), c)).toMatchObject({ kind: 'unknown', reason: 'not_found' });
    expect(captureLookupOutcome(pi({ status: 'succeeded', amount_received: 1000, currency: 'usd' }), c)).toMatchObject({ kind: 'unknown', reason: 'integrity_mismatch' });
  });

  it("a refund is the charge's refund that carries our refund id", () => {
    const charge = (refunds: Stripe.Refund[], hasMore = false, refunded = 300) => ({ id: 'ch_1', payment_intent: 'pi_1', amount_captured: 1000, amount_refunded: refunded, refunds: { object: 'list', data: refunds, has_more: hasMore } }) as unknown as Stripe.Charge;
    const r = asked({ kind: 'refund', refundId: 'rfd_2', amount: 300 });
    const ours = refundObject({ id: 're_2', metadata: { refund_id: 'rfd_2' } });
    const other = refundObject({ id: 're_1', metadata: { refund_id: 'rfd_1' } });
    expect(refundLookupOutcome(charge([other, ours]), r, STRIPE_DEFAULT_DECLINES)).toMatchObject({ kind: 'succeeded', providerRef: 're_2', amount: 300 });
    expect(refundLookupOutcome(charge([other]), r, STRIPE_DEFAULT_DECLINES)).toMatchObject({ kind: 'unknown', reason: 'not_found' });
    // Refunded in full by others, every refund listed, none ours: it did not happen and never can.
    expect(refundLookupOutcome(charge([other], false, 1000), r, STRIPE_DEFAULT_DECLINES)).toMatchObject({ kind: 'not_sent', reason: 'validation' });
    expect(refundLookupOutcome(charge([other], true), r, STRIPE_DEFAULT_DECLINES)).toMatchObject({ kind: 'unknown', reason: 'unexpected' });
    expect(refundLookupOutcome(null, r, STRIPE_DEFAULT_DECLINES)).toMatchObject({ kind: 'unknown' });
  });
});
