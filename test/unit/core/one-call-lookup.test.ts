// Stripe's one-call authorization (issue 26) in the core: an unknown without the provider's
// reference is looked up by attempt id (a query), found means the status map's answer, not found
// inside the key's retention means the same request with the same key, and past it (or at the
// deadline) a person decides: there is no fence without a reference and "not found" is never proof.
import { describe, expect, it } from 'vitest';
import type { CallOutcome, ConnectorPolicy } from '../../../src/core/index.ts';
import { approved, makeEnv, Sim, STRIPE_LIKE, unknown } from './fixtures.ts';

const HOUR = 3_600_000;

const STRIPE_ONE_CALL: ConnectorPolicy = {
  ...STRIPE_LIKE,
  capabilities: { ...STRIPE_LIKE.capabilities, preparesAuthorization: false, queryByMerchantReference: true },
};

function sim(over: { captureMethod?: 'manual' | 'automatic' } = {}): Sim {
  return new Sim(makeEnv({ policies: { stripe_a: STRIPE_ONE_CALL, stripe_b: STRIPE_ONE_CALL } }), {
    ...over, routing: { snapshot: 'v1', rule: 'default', candidates: ['stripe_a', 'stripe_b'], skipped: [] },
  });
}

function query(s: Sim, outcome: CallOutcome): void {
  s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome });
}

const serverError: CallOutcome = { kind: 'unknown', reason: 'server_error' };
const inProgress: CallOutcome = { kind: 'unknown', reason: 'in_progress' };

describe('one-call authorization (no prepare)', () => {
  it('sends the authorize call at once, with the attempt key and no reference', () => {
    const s = sim();
    expect(s.attempt.status).toBe('authorizing');
    expect(s.attempt.prepareCalls).toBe(0);
    expect(s.calls('prepare')).toHaveLength(0);
    expect(s.calls('authorize').map((c) => [c.providerKey, c.sendNo])).toEqual([[`${s.payment.id}:auth:1`, 1]]);
  });

  it('an unknown without a reference is looked up (a query), not fenced or parked', () => {
    const s = sim();
    s.authorize(unknown('timeout'));
    expect(s.state).toBe('auth_unknown');
    expect(s.attempt.providerRef).toBeNull();
    expect(s.calls('query')).toHaveLength(1);
    expect(s.calls('fence')).toHaveLength(0);
  });

  it('found by the lookup: the answer is applied as a query answer', () => {
    const s = sim();
    s.authorize(unknown('timeout'));
    query(s, approved(1000, 'pi_found'));
    expect(s.state).toBe('authorized');
    expect(s.attempt.providerRef).toBe('pi_found');
    expect(s.payment.attempts).toHaveLength(1);
  });

  it('not found inside the retention: the same request with the same key, then a replayed 500 or a 409 is looked up again', () => {
    const s = sim();
    s.authorize(unknown('timeout'));
    s.advance(60_000);
    query(s, unknown('not_found'));
    const sends = s.calls('authorize');
    expect(sends.map((c) => [c.providerKey, c.sendNo])).toEqual([[`${s.payment.id}:auth:1`, 1], [`${s.payment.id}:auth:1`, 2]]);
    s.apply({ type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id, sendNo: 2 }, outcome: serverError });
    expect(s.state).toBe('auth_unknown');
    expect(s.calls('query')).toHaveLength(2);
    query(s, unknown('not_found'));
    s.apply({ type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id, sendNo: 3 }, outcome: inProgress });
    expect(s.calls('query')).toHaveLength(3);
    query(s, approved(1000, 'pi_late'));
    expect(s.state).toBe('authorized');
    expect(s.payment.attempts).toHaveLength(1);
  });

  it('not found past the retention: needs_review, never a resend, never failover', () => {
    const s = sim();
    s.authorize(unknown('timeout'));
    s.advance(24 * HOUR);
    query(s, unknown('not_found'));
    expect(s.state).toBe('needs_review');
    expect(s.attempt.status).toBe('review');
    expect(s.calls('authorize')).toHaveLength(1);
    expect(s.calls('fence')).toHaveLength(0);
    expect(s.payment.attempts).toHaveLength(1);
  });

  it('still undecided after every resend: needs_review, never failover', () => {
    const s = sim();
    s.authorize(unknown('timeout'));
    for (let send = 2; send <= 4; send++) {
      query(s, unknown('not_found'));
      s.apply({ type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id, sendNo: send }, outcome: inProgress });
    }
    query(s, unknown('not_found'));
    expect(s.state).toBe('needs_review');
    expect(s.payment.attempts).toHaveLength(1);
    expect(s.calls('authorize')).toHaveLength(4);
  });

  it('undecided at the deadline: needs_review (no reference to fence), never failover', () => {
    const s = sim();
    s.authorize(unknown('timeout'));
    s.advance(73 * HOUR);
    s.apply({ type: 'timer_fired', timer: 'max_lifetime' });
    expect(s.state).toBe('needs_review');
    expect(s.payment.attempts).toHaveLength(1);
    expect(s.calls('fence')).toHaveLength(0);
  });

  it('found but not yet final (a reference now known): the same-key resend stays the one-call request, and a fence can cancel it', () => {
    const s = sim();
    s.authorize(unknown('timeout'));
    s.advance(24 * HOUR);
    query(s, { kind: 'unknown', reason: 'not_found', providerRef: 'pi_open', detail: 'requires_confirmation' });
    // Past retention with the PaymentIntent known: it is cancelled (a confirmed fence is proof).
    expect(s.attempt.providerRef).toBe('pi_open');
    expect(s.calls('fence')).toHaveLength(1);
    expect(s.attempt.prepareCalls).toBe(0);
  });
});
