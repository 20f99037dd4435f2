// A void while the customer is at the provider's authentication page (issue 43): the attempt is
// cancelled at the provider and the payment ends voided; a refused cancel returns it to
// requires_action with its page and original expiry, never to authorized; a completion that
// arrives after the confirmed cancel is released like any late approval.
import { describe, expect, it } from 'vitest';
import type { PaymentInput } from '../../../src/core/index.ts';
import { approved, challenge, declined, makeEnv, notSent, Sim, unknown, withReturnUrl } from './fixtures.ts';

const MIN = 60_000;
const voidAnswer = (outcome: Parameters<Sim['authorize']>[0]): PaymentInput => ({ type: 'call_result', ref: { op: 'void' }, outcome });

function waiting(over = {}): Sim {
  const s = new Sim(makeEnv(), { ...withReturnUrl, ...over });
  s.authorize(challenge('pi_3ds'));
  expect(s.state).toBe('requires_action');
  return s;
}

function voiding(over = {}): Sim {
  const s = waiting(over);
  s.advance(2 * MIN);
  expect(s.apply({ type: 'void_requested' }).kind).toBe('applied');
  expect(s.state).toBe('voiding');
  return s;
}

describe('void in requires_action', () => {
  it('cancels the attempt awaiting the customer at the provider (its own void key, the attempt and its reference)', () => {
    const s = voiding();
    const call = s.calls('void').at(-1)!;
    expect(call).toMatchObject({ attemptId: s.attempt.id, connector: 'stripe_a', voidNo: 1, amount: 1000 });
    expect(call.providerKey).toContain(':void:1');
    expect(s.payment.voidOp).toMatchObject({ no: 1, from: 'requires_action', attemptId: s.attempt.id });
  });

  it('confirmed: voided, the attempt fenced and its page gone; the merchant hears payment.voided', () => {
    const s = voiding();
    s.apply(voidAnswer(approved(0, 'pi_3ds')));
    expect(s.state).toBe('voided');
    expect(s.attempt).toMatchObject({ status: 'abandoned', proof: 'fenced' });
    expect(s.attempt.authentication?.action).toBeNull();
    expect(s.effects).toContainEqual({ type: 'merchant_event', event: 'payment.voided' });
  });

  it('confirmed by the provider event (Adyen CANCELLATION) as well as by the answer', () => {
    const s = voiding({ routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b'], skipped: [] } });
    s.apply(voidAnswer({ kind: 'pending', providerRef: 'mod_1' }));
    expect(s.state).toBe('voiding');
    s.apply({ type: 'provider_fact', fact: { fact: 'void_succeeded' } });
    expect(s.state).toBe('voided');
  });

  it('refused: back to requires_action with the page and the original expires_at, and the expiry timer set for that instant', () => {
    const s = waiting();
    const before = s.attempt.authentication!;
    s.advance(2 * MIN);
    s.apply({ type: 'void_requested' });
    s.apply(voidAnswer(declined('hard', false)));
    expect(s.state).toBe('requires_action');
    expect(s.attempt.status).toBe('authenticating');
    expect(s.attempt.authentication).toMatchObject({ stage: 'awaiting_customer', expiresAt: before.expiresAt, action: before.action });
    expect(s.payment.voidOp?.failure).toMatchObject({ kind: 'declined' });
    const timers = s.effects.filter((e) => e.type === 'timer' && e.timer === 'authentication_expiry');
    expect(timers.at(-1)).toMatchObject({ runAt: before.expiresAt, attemptId: s.attempt.id });
    expect(s.edges).not.toContainEqual(['voiding', 'authorized']);
  });

  it('never sent (every send refused before reaching the provider): back to requires_action', () => {
    const s = voiding();
    for (let i = 0; i < 4; i++) s.apply(voidAnswer(notSent()));
    expect(s.state).toBe('requires_action');
    expect(s.payment.voidOp?.failure).toMatchObject({ kind: 'not_sent', code: 'connection_refused' });
  });

  it('an unknown answer past its resends is looked up on the attempt that was awaiting the customer', () => {
    const s = voiding();
    for (let i = 0; i < 4; i++) s.apply(voidAnswer(unknown()));
    expect(s.lastLookup()).toMatchObject({ op: 'lookup', attemptId: s.attempt.id, lookup: { op: 'void' } });
    s.apply({ type: 'call_result', ref: { op: 'lookup', about: { op: 'void', key: s.payment.voidOp!.providerKey }, n: 1 }, outcome: approved(0, 'pi_3ds') });
    expect(s.state).toBe('voided');
  });

  it('while voiding, the customer coming back and the page expiring change nothing', () => {
    const s = voiding();
    const version = s.payment.version;
    expect(s.apply({ type: 'customer_returned', attemptId: s.attempt.id, returned: {} }).kind).toBe('noop');
    s.advance(20 * MIN);
    expect(s.apply({ type: 'timer_fired', timer: 'authentication_expiry', attemptId: s.attempt.id }).kind).toBe('noop');
    expect(s.payment.version).toBe(version);
    expect(s.state).toBe('voiding');
  });

  it('a completion arriving after the confirmed cancel is released like any late approval', () => {
    const s = voiding();
    s.apply(voidAnswer(approved(0, 'pi_3ds')));
    s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: approved(1000, 'pi_3ds') } });
    expect(s.state).toBe('voided');
    expect(s.attempt.status).toBe('releasing');
    expect(s.calls('release').at(-1)).toMatchObject({ attemptId: s.attempt.id });
    expect(s.effects.some((e) => e.type === 'discrepancy' && (e.kind === 'late_authentication' || e.kind === 'late_approval'))).toBe(true);
  });

  it('not while the customer is back and the resume is in flight: 409 invalid_state, nothing written', () => {
    const s = waiting();
    s.apply({ type: 'customer_returned', attemptId: s.attempt.id, returned: {} });
    expect(s.state).toBe('authorizing');
    const r = s.apply({ type: 'void_requested' });
    expect(r).toMatchObject({ kind: 'illegal', code: 'invalid_state' });
  });
});
