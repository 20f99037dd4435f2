// What a verified provider event means for a payment, decided before transition() applies it.
import { describe, expect, it } from 'vitest';
import type { NormalizedEvent } from '../../../src/connectors/contract.ts';
import type { Attempt, Capture, Payment, Refund } from '../../../src/core/payment.ts';
import { actionForEvent } from '../../../src/webhooks/inbound/event-mapping.ts';
import { created } from '../core/fixtures.ts';

function attempt(over: Partial<Attempt> = {}): Attempt {
  return {
    id: 'att_1', no: 1, connector: 'adyen_b', status: 'authorized', providerRef: 'psp_1', authKey: 'k', firstSentAt: null, sends: 1, maybeReached: true,
    notSentSends: [], prepareCalls: 0, queries: 0, fenceCalls: 0, resendBlocked: false, lastOutcome: 'succeeded', proof: null, declineCode: null, declineClass: null,
    retryElsewhere: false, notSentReason: null, amountAuthorized: 5000, createdAt: '2026-01-01T00:00:00.000Z', release: null, ...over,
  };
}
const capture = (over: Partial<Capture>): Capture => ({ id: 'cap_1', no: 1, amount: 2000, final: false, status: 'requested', providerKey: 'k', providerRef: null, calls: 1, failure: null, createdAt: '2026-01-01T00:00:00.000Z', ...over });
const refund = (over: Partial<Refund>): Refund => ({ id: 'rfd_1', no: 1, amount: 700, reason: null, status: 'requested', providerKey: 'k', providerRef: null, calls: 1, failure: null, createdAt: '2026-01-01T00:00:00.000Z', ...over });

function payment(over: Partial<Payment> = {}): Payment {
  return { ...created({ amount: 5000 }), state: 'authorized', amountAuthorized: 5000, attempts: [attempt()], ...over };
}

const base = { providerEventId: 'e1', connectorType: 'adyen', attemptId: 'att_1', providerRef: 'psp_1', occurredAt: '2026-01-01T00:00:00.000Z', rawType: 'X' } as const;
const ev = (body: Record<string, unknown>): NormalizedEvent => ({ ...base, ...body }) as NormalizedEvent;
const factOf = (a: ReturnType<typeof actionForEvent>) => (a.kind === 'input' && a.input.type === 'provider_fact' ? a.input.fact : a);

describe('actionForEvent', () => {
  it('a cancellation of an attempt we are fencing is the fence confirmation, not a void', () => {
    const p = payment({ state: 'auth_unknown', attempts: [attempt({ status: 'fencing' })] });
    expect(factOf(actionForEvent(p, 'adyen_b', ev({ kind: 'void_succeeded' })))).toEqual({ fact: 'fence_confirmed', attemptId: 'att_1', providerRef: 'psp_1' });
    expect(factOf(actionForEvent(p, 'adyen_b', ev({ kind: 'void_failed' })))).toEqual({ fact: 'fence_refused', attemptId: 'att_1' });
    expect(factOf(actionForEvent(payment({ state: 'voiding' }), 'adyen_b', ev({ kind: 'void_succeeded' })))).toEqual({ fact: 'void_succeeded' });
  });

  it("a cancellation of an attempt parked because its fence stayed unknown is that fence's answer (issue 41 §6)", () => {
    const p = payment({ state: 'needs_review', attempts: [attempt({ status: 'review', fenceCalls: 3 })] });
    expect(factOf(actionForEvent(p, 'adyen_b', ev({ kind: 'void_succeeded' })))).toEqual({ fact: 'fence_confirmed', attemptId: 'att_1', providerRef: 'psp_1' });
    expect(factOf(actionForEvent(p, 'adyen_b', ev({ kind: 'void_failed' })))).toEqual({ fact: 'fence_refused', attemptId: 'att_1' });
  });

  it('"already cancelled / captured" is the operation\'s unknown{already_done}, never its failure (issue 41 §4)', () => {
    const voided = ev({ kind: 'already_done', op: 'void', amount: 5000, currency: 'EUR', modificationRef: 'm2', detail: 'already cancelled' });
    expect(factOf(actionForEvent(payment({ state: 'voiding' }), 'adyen_b', voided))).toEqual({ fact: 'void_already_done', detail: 'already cancelled' });
    const captured = ev({ kind: 'already_done', op: 'capture', amount: 2000, currency: 'EUR', modificationRef: 'm2', detail: 'already captured' });
    expect(factOf(actionForEvent(payment({ state: 'capturing', captures: [capture({})] }), 'adyen_b', captured))).toEqual({ fact: 'capture_already_done', captureId: 'cap_1', detail: 'already captured' });
    // A fence asks again on its own timer; nothing in flight matches: ignored, never a refusal.
    expect(actionForEvent(payment({ state: 'auth_unknown', attempts: [attempt({ status: 'fencing' })] }), 'adyen_b', voided)).toMatchObject({ kind: 'ignore' });
    expect(actionForEvent(payment({ state: 'captured' }), 'adyen_b', captured)).toMatchObject({ kind: 'ignore' });
  });

  it("a fence confirmation carries the payment it reached, or none; a fenced attempt without a provider reference still hears its late AUTHORISATION (issue 41 §5)", () => {
    const fencing = payment({ state: 'auth_unknown', attempts: [attempt({ status: 'fencing', providerRef: null, lastOutcome: 'unknown', amountAuthorized: 0 })] });
    // TECHNICAL_CANCEL of a reference Adyen had not seen: no originalReference.
    expect(factOf(actionForEvent(fencing, 'adyen_b', ev({ kind: 'fence_confirmed', providerRef: null })))).toEqual({ fact: 'fence_confirmed', attemptId: 'att_1' });
    expect(factOf(actionForEvent(fencing, 'adyen_b', ev({ kind: 'fence_confirmed', providerRef: 'psp_9' })))).toEqual({ fact: 'fence_confirmed', attemptId: 'att_1', providerRef: 'psp_9' });
    const fenced = payment({ state: 'authorized', attempts: [attempt({ status: 'abandoned', proof: 'fenced', providerRef: null, lastOutcome: 'unknown', amountAuthorized: 0 }), attempt({ id: 'att_2', no: 2, connector: 'stripe_a', providerRef: 'pi_2' })] });
    const late = actionForEvent(fenced, 'adyen_b', ev({ kind: 'authorization', providerRef: 'psp_late', outcome: { kind: 'succeeded', providerRef: 'psp_late', amount: 5000 } }));
    expect(factOf(late)).toMatchObject({ fact: 'authorization', attemptId: 'att_1', outcome: { kind: 'succeeded', providerRef: 'psp_late' } });
  });

  it('an event asking for customer action never sends a customer anywhere: the page comes from our call or lookup (issue 42 §2)', () => {
    // Stored without its query (the client secret's place), the page in an event is no page at all.
    const asks = ev({ connectorType: 'stripe', rawType: 'payment_intent.requires_action', kind: 'authorization', outcome: { kind: 'action_required', action: 'redirect_to_url', providerRef: 'psp_1', redirect: { url: 'https://hooks.stripe.com/3d_secure_2/hosted', method: 'GET' } } });
    for (const status of ['unknown', 'authorizing', 'authenticating'] as const) {
      const p = payment({ state: status === 'authenticating' ? 'requires_action' : 'auth_unknown', attempts: [attempt({ status, lastOutcome: null, amountAuthorized: 0 })] });
      const action = actionForEvent(p, 'adyen_b', asks);
      expect(action.kind).toBe('ignore');
      expect(action.kind === 'ignore' && action.reason).toContain('payment_intent.requires_action');
    }
  });

  it('finds the attempt by provider reference when the event names no attempt', () => {
    const a = actionForEvent(payment(), 'adyen_b', ev({ kind: 'authorization', attemptId: null, outcome: { kind: 'succeeded', providerRef: 'psp_1', amount: 5000 } }));
    expect(factOf(a)).toMatchObject({ fact: 'authorization', attemptId: 'att_1' });
  });

  it("ignores an event verified by one account that names another account's attempt", () => {
    const a = actionForEvent(payment(), 'stripe_a', ev({ kind: 'void_succeeded' }));
    expect(a).toMatchObject({ kind: 'ignore', reason: expect.stringMatching(/belongs to adyen_b, not stripe_a/) as string });
  });

  it('names a capture by modification reference, else by amount (cumulative echo for Stripe)', () => {
    const p = payment({ state: 'capturing', captures: [capture({ status: 'succeeded', id: 'cap_0', amount: 1000, providerRef: 'm0' }), capture({})], amountCaptured: 1000 });
    expect(factOf(actionForEvent(p, 'adyen_b', ev({ kind: 'capture_succeeded', amount: 2000, currency: 'EUR', modificationRef: 'm1' })))).toMatchObject({ fact: 'capture_succeeded', captureId: 'cap_1' });
    expect(factOf(actionForEvent(p, 'adyen_b', ev({ kind: 'capture_succeeded', amount: 1000, currency: 'EUR', modificationRef: 'm0' })))).toMatchObject({ fact: 'capture_succeeded', captureId: 'cap_0' });
    const stripe = { ...p, attempts: [attempt({ connector: 'stripe_a' })] };
    // Stripe echoes amount_captured (3000 = 1000 before + 2000 now); a late echo of the first capture (1000) matches nothing in flight.
    expect(factOf(actionForEvent(stripe, 'stripe_a', ev({ connectorType: 'stripe', kind: 'capture_succeeded', amount: 3000, currency: 'EUR', modificationRef: 'ch_1' })))).toMatchObject({ captureId: 'cap_1' });
    expect(actionForEvent(stripe, 'stripe_a', ev({ connectorType: 'stripe', kind: 'capture_succeeded', amount: 1000, currency: 'EUR', modificationRef: 'ch_1' }))).toMatchObject({ kind: 'ignore' });
  });

  it('a refund failure after success is a reversal; before success a failure', () => {
    const done = payment({ state: 'captured', amountCaptured: 5000, amountRefunded: 700, refunds: [refund({ status: 'succeeded', providerRef: 're_1' })] });
    expect(factOf(actionForEvent(done, 'adyen_b', ev({ kind: 'refund_failed', amount: 700, currency: 'EUR', modificationRef: 're_1' })))).toEqual({ fact: 'refund_reversed', refundId: 'rfd_1' });
    const pending = payment({ state: 'captured', amountCaptured: 5000, refunds: [refund({ status: 'pending' })] });
    expect(factOf(actionForEvent(pending, 'adyen_b', ev({ kind: 'refund_failed', amount: 700, currency: 'EUR', modificationRef: null })))).toEqual({ fact: 'refund_failed', refundId: 'rfd_1' });
    expect(factOf(actionForEvent(pending, 'adyen_b', ev({ kind: 'refund_succeeded', amount: 700, currency: 'EUR', modificationRef: 're_9' })))).toEqual({ fact: 'refund_succeeded', refundId: 'rfd_1', providerRef: 're_9' });
    expect(actionForEvent(pending, 'adyen_b', ev({ kind: 'refund_succeeded', amount: 700, currency: 'USD', modificationRef: null }))).toMatchObject({ kind: 'ignore' });
  });

  it("a provider's refunded total (Stripe charge.refunded, no embedded refunds) settles only the one refund in flight it adds", () => {
    const total = (amount: number, currency = 'EUR') => ev({ kind: 'refund_total', amount, currency });
    const one = payment({ state: 'captured', amountCaptured: 5000, amountRefunded: 300, refunds: [refund({ id: 'rfd_0', amount: 300, status: 'succeeded', providerRef: 're_0' }), refund({ id: 'rfd_1', no: 2, status: 'pending' })] });
    expect(factOf(actionForEvent(one, 'adyen_b', total(1000)))).toEqual({ fact: 'refund_succeeded', refundId: 'rfd_1' });
    // Nothing new (its refund event came first), a total that matches no refund, another currency: the refund events decide.
    expect(actionForEvent(one, 'adyen_b', total(300))).toMatchObject({ kind: 'ignore' });
    expect(actionForEvent(one, 'adyen_b', total(900))).toMatchObject({ kind: 'ignore' });
    expect(actionForEvent(one, 'adyen_b', total(1000, 'USD'))).toMatchObject({ kind: 'ignore' });
    const two = payment({ ...one, refunds: [...one.refunds, refund({ id: 'rfd_2', no: 3 })] });
    expect(actionForEvent(two, 'adyen_b', total(1000))).toMatchObject({ kind: 'ignore' });
  });

  it('two equal refunds in flight: an event naming neither waits for their references; once named, each settles its own', () => {
    const p = payment({ state: 'captured', amountCaptured: 5000, refunds: [refund({ id: 'rfd_1', no: 1 }), refund({ id: 'rfd_2', no: 2 })] });
    const e = ev({ kind: 'refund_succeeded', amount: 700, currency: 'EUR', modificationRef: 'mod_2' });
    expect(actionForEvent(p, 'adyen_b', e).kind).toBe('retry');
    expect(actionForEvent(p, 'adyen_b', ev({ kind: 'refund_failed', amount: 700, currency: 'EUR', modificationRef: 'mod_2' })).kind).toBe('retry');
    const named = payment({ ...p, refunds: [refund({ id: 'rfd_1', no: 1 }), refund({ id: 'rfd_2', no: 2, status: 'pending', providerRef: 'mod_2' })] });
    expect(factOf(actionForEvent(named, 'adyen_b', e))).toMatchObject({ fact: 'refund_succeeded', refundId: 'rfd_2' });
    // The other event names a reference we never recorded: one unnamed refund is left, so it is that one.
    expect(factOf(actionForEvent(named, 'adyen_b', ev({ kind: 'refund_succeeded', amount: 700, currency: 'EUR', modificationRef: 'mod_1' })))).toMatchObject({ refundId: 'rfd_1' });
  });

  it('two equal captures in flight: an event naming neither waits', () => {
    const p = payment({ captures: [capture({ id: 'cap_1', no: 1 }), capture({ id: 'cap_2', no: 2 })] });
    expect(actionForEvent(p, 'adyen_b', ev({ kind: 'capture_succeeded', amount: 2000, currency: 'EUR', modificationRef: 'm' })).kind).toBe('retry');
  });

  it('disputes are records, never payment inputs; held until the capture is known and no refund is in flight; unknown codes are ignored', () => {
    const dispute = ev({ kind: 'dispute', disputeRef: 'd1', amount: 5000, currency: 'EUR', reason: null, fact: { provider: 'adyen', eventCode: 'CHARGEBACK', disputeStatus: null } });
    const captured = { state: 'captured', amountCaptured: 5000 } as const;
    expect(actionForEvent(payment(captured), 'adyen_b', dispute).kind).toBe('dispute');
    expect(actionForEvent(payment(), 'adyen_b', dispute).kind).toBe('hold');
    expect(actionForEvent(payment({ ...captured, refunds: [refund({ status: 'pending' })] }), 'adyen_b', dispute).kind).toBe('hold');
    expect(actionForEvent(payment({ ...captured, amountRefunded: 5000, refunds: [refund({ status: 'succeeded', amount: 5000 })] }), 'adyen_b', dispute).kind).toBe('dispute');
    expect(actionForEvent(payment(), 'adyen_b', ev({ kind: 'ignored' })).kind).toBe('ignore');
    // Stored before issue 32: an Adyen one is decided by its event code; a Stripe one (its balance transactions lost) is not applied.
    const legacy = ev({ kind: 'dispute_opened', rawType: 'CHARGEBACK', disputeRef: 'd0', amount: 5000, currency: 'EUR', reason: null });
    expect(actionForEvent(payment(captured), 'adyen_b', legacy)).toMatchObject({ kind: 'dispute', event: { kind: 'dispute', disputeRef: 'd0', fact: { provider: 'adyen', eventCode: 'CHARGEBACK', disputeStatus: null } } });
    expect(actionForEvent(payment(captured), 'adyen_b', { ...legacy, connectorType: 'stripe' }).kind).toBe('ignore');
  });

  describe('releases and reordered failures (issue 20)', () => {
    const release = { no: 1, round: 1, kind: 'refund', amount: 5000, providerKey: 'k', status: 'pending', providerRef: 're_1', earlierRefs: [], calls: 1, maybeReached: true, requestedAt: '2026-01-01T00:00:00.000Z', failure: null } as const;
    // Attempt 1 (adyen_b, psp_1) was approved late and is being released; attempt 2 holds the payment.
    const kept = attempt({ id: 'att_2', no: 2, providerRef: 'psp_2' });
    const releasing = (over: Partial<Attempt> = {}) => payment({ attempts: [attempt({ status: 'releasing', release, ...over }), kept] });

    it('a cancellation of an attempt being released settles the release, never the payment void', () => {
      const p = releasing({ release: { ...release, kind: 'void', providerRef: null } });
      expect(factOf(actionForEvent({ ...p, state: 'voiding' }, 'adyen_b', ev({ kind: 'void_succeeded' })))).toEqual({ fact: 'release_succeeded', attemptId: 'att_1' });
      expect(factOf(actionForEvent(p, 'adyen_b', ev({ kind: 'void_failed' })))).toEqual({ fact: 'release_failed', attemptId: 'att_1' });
    });

    it("a release refund's events match the release, not the kept attempt's refunds of the same amount", () => {
      const p = { ...releasing(), refunds: [refund({ amount: 5000, status: 'pending' })] };
      expect(factOf(actionForEvent(p, 'adyen_b', ev({ kind: 'refund_succeeded', amount: 5000, currency: 'EUR', modificationRef: 're_1' })))).toEqual({ fact: 'release_succeeded', attemptId: 'att_1', providerRef: 're_1' });
      expect(factOf(actionForEvent(p, 'adyen_b', ev({ kind: 'refund_failed', amount: 5000, currency: 'EUR', modificationRef: 're_1' })))).toEqual({ fact: 'release_failed', attemptId: 'att_1', providerRef: 're_1' });
      // A reversal of the round in flight came before its success: held until the success is here.
      expect(actionForEvent(p, 'adyen_b', ev({ kind: 'refund_reversed', amount: 5000, currency: 'EUR', modificationRef: 're_1' })).kind).toBe('hold');
      const confirmed = { ...releasing({ release: { ...release, status: 'succeeded' } }), refunds: p.refunds };
      expect(factOf(actionForEvent(confirmed, 'adyen_b', ev({ kind: 'refund_reversed', amount: 5000, currency: 'EUR', modificationRef: 're_1' })))).toEqual({ fact: 'release_failed', attemptId: 'att_1', providerRef: 're_1', reversal: true });
    });

    it('release events carry what names their round: our reference on the object and its id (issue 41)', () => {
      const lost = releasing({ release: { ...release, status: 'requested', providerRef: null } });
      expect(factOf(actionForEvent(lost, 'adyen_b', ev({ kind: 'refund_failed', amount: 5000, currency: 'EUR', modificationRef: 're_9', ourRef: 'att_1_release' })))).toEqual({ fact: 'release_failed', attemptId: 'att_1', providerRef: 're_9', reference: 'att_1_release' });
      expect(actionForEvent(lost, 'adyen_b', ev({ kind: 'refund_reversed', amount: 5000, currency: 'EUR', modificationRef: 're_9', ourRef: 'att_1_release' })).kind).toBe('hold');
      // A reversal naming an earlier round (failed already) is not held: the core finds it old news.
      const round2 = releasing({ release: { ...release, round: 2, status: 'requested', providerRef: null, earlier: [{ round: 1, no: 1, providerKey: 'k1', providerRef: null, status: 'failed' }] } });
      expect(factOf(actionForEvent(round2, 'adyen_b', ev({ kind: 'refund_reversed', amount: 5000, currency: 'EUR', modificationRef: 're_9', ourRef: 'att_1_release' })))).toEqual({ fact: 'release_failed', attemptId: 'att_1', providerRef: 're_9', reference: 'att_1_release', reversal: true });
      const cancel = releasing({ release: { ...release, kind: 'void', providerRef: null } });
      expect(factOf(actionForEvent(cancel, 'adyen_b', ev({ kind: 'void_failed', modificationRef: 'mod_7', ourRef: 'att_1_release' })))).toEqual({ fact: 'release_failed', attemptId: 'att_1', providerRef: 'mod_7', reference: 'att_1_release' });
    });

    it('a capture event about an attempt the payment did not keep is ignored', () => {
      const p = { ...releasing(), captures: [capture({ amount: 5000 })] };
      expect(actionForEvent(p, 'adyen_b', ev({ kind: 'capture_succeeded', amount: 5000, currency: 'EUR', modificationRef: 'c1' })).kind).toBe('ignore');
    });

    it('CAPTURE_FAILED of an automatic-capture payment (no capture record) is applied as a capture reversal', () => {
      const p = payment({ captureMethod: 'automatic', state: 'captured', amountCaptured: 5000 });
      expect(factOf(actionForEvent(p, 'adyen_b', ev({ kind: 'capture_reversed', amount: 5000, currency: 'EUR', modificationRef: 'cf_1' })))).toEqual({ fact: 'auto_capture_reversed', attemptId: 'att_1', amount: 5000, providerRef: 'cf_1' });
    });

    it('a CAPTURE_FAILED before the CAPTURE it reverses is held, then applied', () => {
      const before = payment({ state: 'capturing', captures: [capture({ amount: 5000, status: 'pending', providerRef: 'c1' })] });
      expect(actionForEvent(before, 'adyen_b', ev({ kind: 'capture_reversed', amount: 5000, currency: 'EUR', modificationRef: 'c1' })).kind).toBe('hold');
      const after = payment({ state: 'captured', amountCaptured: 5000, captures: [capture({ amount: 5000, status: 'succeeded', providerRef: 'c1' })] });
      expect(factOf(actionForEvent(after, 'adyen_b', ev({ kind: 'capture_reversed', amount: 5000, currency: 'EUR', modificationRef: 'c1' })))).toEqual({ fact: 'capture_reversed', captureId: 'cap_1' });
    });

    it('a refund reversal before the success it reverses is held, and applied once the refund succeeded', () => {
      const before = payment({ state: 'captured', amountCaptured: 5000, refunds: [refund({ status: 'pending', providerRef: 'r1' })] });
      expect(actionForEvent(before, 'adyen_b', ev({ kind: 'refund_reversed', amount: 700, currency: 'EUR', modificationRef: 'r1' })).kind).toBe('hold');
      const noRef = payment({ state: 'captured', amountCaptured: 5000, refunds: [refund({ status: 'requested' })] });
      expect(actionForEvent(noRef, 'adyen_b', ev({ kind: 'refund_reversed', amount: 700, currency: 'EUR', modificationRef: 'r9' })).kind).toBe('hold');
      const after = payment({ state: 'captured', amountCaptured: 5000, amountRefunded: 700, refunds: [refund({ status: 'succeeded', providerRef: 'r1' })] });
      expect(factOf(actionForEvent(after, 'adyen_b', ev({ kind: 'refund_reversed', amount: 700, currency: 'EUR', modificationRef: 'r1' })))).toEqual({ fact: 'refund_reversed', refundId: 'rfd_1' });
    });
  });
});
