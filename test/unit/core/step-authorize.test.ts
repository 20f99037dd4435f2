import { describe, expect, it } from 'vitest';
import { notChargedProof } from '../../../src/core/index.ts';
import { approved, challenge, declined, makeEnv, notSent, Sim, unknown, withReturnUrl } from './fixtures.ts';

const HOUR = 3_600_000;

describe('submit and authorize', () => {
  it('creates a payment in authorizing with a prepare call on a preparing connector', () => {
    const s = new Sim();
    expect(s.state).toBe('authorizing');
    expect(s.payment.version).toBe(1);
    expect(s.attempt.status).toBe('preparing');
    expect(s.calls('prepare')).toHaveLength(1);
    expect(s.calls('prepare')[0]!.providerKey).toBe(`${s.payment.id}:prepare:1`);
  });

  it('fails a payment no connector can take', () => {
    const s = new Sim(makeEnv({ openBreakers: new Set(['stripe_a', 'adyen_b']) }));
    expect(s.state).toBe('failed');
    expect(s.payment.routing.skipped.map((x) => x.reason)).toEqual(['breaker open', 'breaker open']);
    expect(s.edges).toEqual([['created', 'failed']]);
  });

  it('skips a candidate with an open breaker and records why', () => {
    const s = new Sim(makeEnv({ openBreakers: new Set(['stripe_a']) }));
    expect(s.attempt.connector).toBe('adyen_b');
    expect(s.payment.routing.skipped).toEqual([{ connector: 'stripe_a', reason: 'breaker open' }]);
  });

  it('prepare then authorize with the auth key; approval -> authorized with a hold timer', () => {
    const s = new Sim();
    s.prepared('pi_9');
    expect(s.attempt.providerRef).toBe('pi_9');
    const auth = s.calls('authorize');
    expect(auth).toHaveLength(1);
    expect(auth[0]!.providerKey).toBe(`${s.payment.id}:auth:1`);
    s.authorize(approved(1000, 'pi_9'));
    expect(s.state).toBe('authorized');
    expect(s.payment.amountAuthorized).toBe(1000);
    expect(s.effects.some((e) => e.type === 'timer' && e.timer === 'hold_expiry')).toBe(true);
    expect(s.effects.some((e) => e.type === 'merchant_event' && e.event === 'payment.authorized')).toBe(true);
  });

  it('automatic capture: approval -> captured with a ledger posting', () => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic' });
    s.authorize(approved());
    expect(s.state).toBe('captured');
    expect(s.payment.amountCaptured).toBe(1000);
    expect(s.effects.some((e) => e.type === 'ledger' && e.posting === 'capture')).toBe(true);
  });

  it('partial approval without opt-in: declined and the approval released', () => {
    const s = new Sim();
    s.authorize(approved(600));
    expect(s.state).toBe('declined');
    expect(s.attempt.status).toBe('releasing');
    expect(s.calls('release')).toHaveLength(1);
  });

  it('partial approval with opt-in: authorized for the approved amount', () => {
    const s = new Sim(makeEnv(), { allowPartialAuthorization: true });
    s.authorize(approved(600));
    expect(s.state).toBe('authorized');
    expect(s.payment.amountAuthorized).toBe(600);
  });

  it('hard decline -> declined, no failover', () => {
    const s = new Sim();
    s.authorize(declined('hard', false));
    expect(s.state).toBe('declined');
    expect(s.payment.attempts).toHaveLength(1);
  });

  it('soft decline marked retry-elsewhere -> a new attempt on the next connector with a new key', () => {
    const s = new Sim();
    s.authorize(declined('soft', true));
    expect(s.state).toBe('authorizing');
    expect(s.payment.attempts).toHaveLength(2);
    expect(s.attempt.connector).toBe('adyen_b');
    expect(notChargedProof(s.payment.attempts[0]!)).toBe('declined');
    const auth = s.calls('authorize');
    expect(new Set(auth.map((a) => a.providerKey)).size).toBe(auth.length);
  });

  it('not_sent -> fail over with proof not_sent', () => {
    const s = new Sim();
    s.authorize(notSent());
    expect(s.payment.attempts[0]!.proof).toBe('not_sent');
    expect(s.attempt.connector).toBe('adyen_b');
    expect(s.state).toBe('authorizing');
  });

  it('not_sent with no candidate left -> resend with the same key, bounded, then failed', () => {
    const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b'], skipped: [] } });
    for (let i = 0; i < 10 && s.state === 'authorizing'; i++) s.authorize(notSent());
    const keys = s.calls('authorize').map((c) => c.providerKey);
    expect(new Set(keys).size).toBe(1);
    expect(keys).toHaveLength(4); // first send + maxResends (3)
    expect(s.state).toBe('failed');
  });

  it('unknown (timeout) never fails over: auth_unknown and a query', () => {
    const s = new Sim();
    s.authorize(unknown());
    expect(s.state).toBe('auth_unknown');
    expect(s.payment.attempts).toHaveLength(1);
    expect(s.calls('query')).toHaveLength(1);
    expect(notChargedProof(s.attempt)).toBeNull();
  });

  it('query finds the approval -> authorized', () => {
    const s = new Sim();
    s.authorize(unknown());
    s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: approved() });
    expect(s.state).toBe('authorized');
  });

  it('query finds a decline -> declined', () => {
    const s = new Sim();
    s.authorize(unknown());
    s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: declined('hard', false) });
    expect(s.state).toBe('declined');
  });

  it('query not found inside retention -> resend with the same key', () => {
    const s = new Sim();
    s.authorize(unknown());
    s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: unknown('not_found') });
    const keys = s.calls('authorize').map((c) => c.providerKey);
    expect(keys).toEqual([s.attempt.authKey, s.attempt.authKey]);
    expect(s.state).toBe('auth_unknown');
  });

  it('query not found past retention -> fence, never a resend', () => {
    const s = new Sim();
    s.authorize(unknown());
    s.advance(25 * HOUR);
    s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: unknown('not_found') });
    expect(s.calls('authorize')).toHaveLength(1);
    expect(s.calls('fence')).toHaveLength(1);
    expect(s.attempt.status).toBe('fencing');
  });

  it('confirmed fence is proof: fail over to the next connector', () => {
    const s = new Sim();
    s.authorize(unknown());
    s.advance(25 * HOUR);
    s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: unknown('not_found') });
    const first = s.attempt;
    s.apply({ type: 'call_result', ref: { op: 'fence', attemptId: first.id }, outcome: approved(0, 'pi_1') });
    expect(s.payment.attempts[0]!.proof).toBe('fenced');
    expect(s.attempt.connector).toBe('adyen_b');
    expect(s.edges).toContainEqual(['auth_unknown', 'authorizing']);
  });

  it('a refused fence -> needs_review, never failed, never failover', () => {
    const s = new Sim();
    s.authorize(unknown());
    s.advance(25 * HOUR);
    s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: unknown('not_found') });
    s.apply({ type: 'call_result', ref: { op: 'fence', attemptId: s.attempt.id }, outcome: declined('hard', false) });
    expect(s.state).toBe('needs_review');
    expect(s.payment.attempts).toHaveLength(1);
  });

  it('an unknown fence is retried with the same key, then parked for review', () => {
    const s = new Sim();
    s.authorize(unknown());
    s.advance(25 * HOUR);
    s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: unknown('not_found') });
    for (let i = 0; i < 5; i++) s.apply({ type: 'call_result', ref: { op: 'fence', attemptId: s.attempt.id }, outcome: unknown() });
    const keys = s.calls('fence').map((c) => c.providerKey);
    expect(new Set(keys).size).toBe(1);
    expect(keys).toHaveLength(3);
    expect(s.state).toBe('needs_review');
  });

  it('a fence confirmed after a late approval settled the parked payment: the authorization is gone at the provider, so the payment says so (chaos quick pass)', () => {
    const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b', 'stripe_a'], skipped: [] }, maxLifetimeMs: 30 * 24 * HOUR });
    s.authorize(unknown());
    s.advance(8 * 24 * HOUR);
    s.authorize(unknown());
    expect(s.attempt.status).toBe('fencing');
    // The fence's answers are lost: parked for review.
    for (let i = 0; i < 3; i++) s.apply({ type: 'call_result', ref: { op: 'fence', attemptId: s.attempt.id }, outcome: unknown() });
    expect(s.state).toBe('needs_review');
    // The authorization's (delayed) notification arrives first, then the fence's own.
    s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: approved(1000, 'psp_1') } });
    expect(s.state).toBe('authorized');
    // The technical cancel found the authorised payment and names it (originalReference).
    s.apply({ type: 'provider_fact', fact: { fact: 'fence_confirmed', attemptId: s.attempt.id, providerRef: 'psp_1' } });
    expect(s.state).toBe('expired');
    expect(s.attempt.status).toBe('released');
    expect(s.payment.amountAuthorized).toBe(1000);
  });

  it('Adyen-like (no query): unknown resolved by same-key resend; past retention fenced by reference (pending until confirmed)', () => {
    const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b', 'stripe_a'], skipped: [] }, maxLifetimeMs: 30 * 24 * HOUR });
    s.authorize(unknown());
    expect(s.calls('query')).toHaveLength(0);
    expect(s.calls('authorize')).toHaveLength(2);
    expect(s.calls('authorize')[1]!.providerKey).toBe(s.attempt.authKey);
    expect(s.attempt.authKey).toHaveLength(24);
    s.advance(8 * 24 * HOUR);
    s.authorize(unknown());
    expect(s.calls('authorize')).toHaveLength(2);
    expect(s.attempt.status).toBe('fencing');
    s.apply({ type: 'call_result', ref: { op: 'fence', attemptId: s.attempt.id }, outcome: { kind: 'pending', providerRef: 'tc_1' } });
    expect(s.attempt.status).toBe('fencing');
    expect(s.payment.attempts).toHaveLength(1);
    s.apply({ type: 'provider_fact', fact: { fact: 'fence_confirmed', attemptId: s.attempt.id } });
    expect(s.payment.attempts).toHaveLength(2);
    expect(s.payment.attempts[0]!.proof).toBe('fenced');
  });

  it('automatic capture: an unresolved unknown goes to review (a refund is no fence)', () => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic' });
    s.authorize(unknown());
    s.advance(25 * HOUR);
    s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: unknown('not_found') });
    expect(s.state).toBe('needs_review');
    expect(s.calls('fence')).toHaveLength(0);
  });

  it('a resend answered not_sent after an unknown is no proof', () => {
    const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b', 'stripe_a'], skipped: [] } });
    s.authorize(unknown());
    s.authorize(notSent());
    expect(s.payment.attempts).toHaveLength(1);
    expect(notChargedProof(s.attempt)).toBeNull();
    expect(s.state).toBe('auth_unknown');
  });

  it('a late approval for an abandoned attempt is live money: release + discrepancy, state kept', () => {
    const s = new Sim();
    s.authorize(notSent());
    const first = s.payment.attempts[0]!;
    s.authorize(approved(1000, 'psp_2'));
    expect(s.state).toBe('authorized');
    s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: first.id, outcome: approved(1000, 'pi_late') } });
    expect(s.state).toBe('authorized');
    expect(s.payment.attempts[0]!.status).toBe('releasing');
    expect(s.effects.some((e) => e.type === 'discrepancy' && e.kind === 'late_approval')).toBe(true);
    expect(s.calls('release')[0]!.attemptId).toBe(first.id);
  });

  it('an approval for a failed payment is released, never ignored', () => {
    const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: ['stripe_a'], skipped: [] } });
    s.authorize(declined('soft', true));
    expect(s.state).toBe('declined');
    s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: approved() } });
    expect(s.calls('release')).toHaveLength(1);
    expect(s.state).toBe('declined');
  });

  it('a duplicate approval is a no-op without a version bump', () => {
    const s = new Sim();
    s.authorize(approved());
    const v = s.payment.version;
    const r = s.apply({ type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id }, outcome: approved() });
    expect(r.kind).toBe('noop');
    expect(s.payment.version).toBe(v);
  });

  it('deadline: an in-flight attempt is fenced, then failed when the fence confirms', () => {
    const s = new Sim();
    s.prepared();
    s.advance(73 * HOUR);
    s.apply({ type: 'timer_fired', timer: 'max_lifetime' });
    expect(s.attempt.status).toBe('fencing');
    s.apply({ type: 'call_result', ref: { op: 'fence', attemptId: s.attempt.id }, outcome: approved(0, 'pi_1') });
    expect(s.state).toBe('failed');
    expect(s.payment.attempts).toHaveLength(1);
  });

  it('action_required -> requires_action, resolved later by the provider', () => {
    const s = new Sim(makeEnv(), withReturnUrl);
    s.authorize(challenge());
    expect(s.state).toBe('requires_action');
    s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: approved() } });
    expect(s.state).toBe('authorized');
  });

  it('operator resolves a parked payment with a note', () => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic' });
    s.authorize(unknown());
    s.advance(25 * HOUR);
    s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: unknown('not_found') });
    expect(s.apply({ type: 'operator_resolved', as: 'failed', note: '' }).kind).toBe('illegal');
    s.apply({ type: 'operator_resolved', as: 'failed', note: 'checked the provider dashboard' });
    expect(s.state).toBe('failed');
  });
});
