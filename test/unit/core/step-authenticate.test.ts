// Customer authentication (issue 27): requires_action, the customer's return, the resume call,
// abandonment, held declines and the step-up retry, walked through step().
import { describe, expect, it } from 'vitest';
import type { CallOutcome, PaymentInput } from '../../../src/core/index.ts';
import { step } from '../../../src/core/index.ts';
import { MAX_RESUME_ROUNDS } from '../../../src/core/authentication.ts';
import { approved, challenge, declined, makeEnv, Sim, unknown, withReturnUrl } from './fixtures.ts';

const MIN = 60_000;
const returned = (s: Sim, data: Record<string, string> = { redirectResult: 'abc' }): PaymentInput => ({ type: 'customer_returned', attemptId: s.attempt.id, returned: data });
const resume = (s: Sim, outcome: CallOutcome): PaymentInput => ({ type: 'call_result', ref: { op: 'resume', attemptId: s.attempt.id }, outcome });
const fenceAnswer = (s: Sim, outcome: CallOutcome): PaymentInput => ({ type: 'call_result', ref: { op: 'fence', attemptId: s.attempt.id }, outcome });
const expiry = (s: Sim): PaymentInput => ({ type: 'timer_fired', timer: 'authentication_expiry', attemptId: s.attempt.id });
const authFailed = (retryElsewhere = false): CallOutcome => ({ kind: 'declined', class: 'hard', retryElsewhere, code: 'authentication_failed', providerCode: 'requires_payment_method', providerRef: 'pi_1', stillOpen: true });
const authRequired: CallOutcome = { kind: 'declined', class: 'hard', retryElsewhere: false, code: 'authentication_required', providerCode: 'authentication_required', providerRef: 'pi_1' };

function atPage(over = {}): Sim {
  const s = new Sim(makeEnv(), { ...withReturnUrl, ...over });
  s.authorize(challenge());
  return s;
}

describe('customer authentication', () => {
  it('asks the customer: requires_action with the page, its expiry, an event and the fence timer', () => {
    const s = atPage();
    expect(s.state).toBe('requires_action');
    expect(s.attempt.status).toBe('authenticating');
    const auth = s.attempt.authentication!;
    expect(auth.action).toEqual({ url: 'https://provider.example/3ds/1', method: 'GET' });
    expect(auth.expiresAt).toBe(new Date(s.now.getTime() + 15 * MIN).toISOString());
    expect(s.last!.kind === 'applied' && s.last!.effects).toEqual(expect.arrayContaining([
      { type: 'merchant_event', event: 'payment.requires_action' },
      { type: 'timer', timer: 'authentication_expiry', attemptId: s.attempt.id, runAt: auth.expiresAt },
    ]));
  });

  it('uses the connector timeout, never past the payment deadline', () => {
    const env = makeEnv();
    const short = new Sim({ ...env, policies: { ...env.policies, stripe_a: { ...env.policies.stripe_a!, authenticationTimeoutMs: 5 * MIN } } }, withReturnUrl);
    short.authorize(challenge());
    expect(short.attempt.authentication!.expiresAt).toBe(new Date(short.now.getTime() + 5 * MIN).toISOString());
    const tight = new Sim(makeEnv(), { ...withReturnUrl, maxLifetimeMs: 2 * MIN });
    tight.authorize(challenge());
    expect(tight.attempt.authentication!.expiresAt).toBe(tight.payment.deadlineAt);
  });

  it('resumes once as an outbox call with its own key; a replayed return is harmless', () => {
    const s = atPage();
    s.apply(returned(s));
    expect(s.state).toBe('authorizing');
    const [call] = s.calls('resume');
    expect(call).toMatchObject({ op: 'resume', attemptId: s.attempt.id, providerKey: `${s.payment.id}:resume:1` });
    expect(s.attempt.authentication).toMatchObject({ stage: 'resuming', returned: { redirectResult: 'abc' } });
    expect(s.apply(returned(s, { redirectResult: 'forged' })).kind).toBe('noop');
    expect(s.attempt.authentication!.returned).toEqual({ redirectResult: 'abc' });
    s.apply(resume(s, approved(1000, 'pi_1')));
    expect(s.state).toBe('authorized');
    expect(s.attempt.authentication!.stage).toBe('completed');
    expect(s.apply(returned(s)).kind).toBe('noop');
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    expect(s.state).toBe('capturing');
  });

  it("keeps the provider's page only while the customer is expected there (issue 42 §2: its URL can carry Stripe's client secret)", () => {
    const page = (s: Sim) => s.attempt.authentication!.action;
    // Back from the page: gone; a further challenge in the resume's answer brings its own page.
    const back = atPage();
    back.apply(returned(back));
    expect(back.attempt.authentication!.stage).toBe('resuming');
    expect(page(back)).toBeNull();
    back.apply(resume(back, challenge('pi_1', 'https://provider.example/3ds/again')));
    expect(page(back)).toEqual({ url: 'https://provider.example/3ds/again', method: 'GET' });
    back.apply(returned(back));
    back.apply(resume(back, approved(1000, 'pi_1')));
    expect(back.attempt.authentication!.stage).toBe('completed');
    expect(page(back)).toBeNull();
    // Expired: the attempt is cancelled and nobody is sent there again.
    const away = atPage();
    away.advance(15 * MIN);
    away.apply(expiry(away));
    expect(away.attempt.authentication!.stage).toBe('abandoned');
    expect(page(away)).toBeNull();
    // The provider's word while the customer is still away (a webhook): settled, the page dropped.
    const settled = atPage({ captureMethod: 'automatic' });
    settled.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: settled.attempt.id, outcome: approved() } });
    expect(settled.state).toBe('captured');
    expect(page(settled)).toBeNull();
    const failed = atPage();
    failed.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: failed.attempt.id, outcome: authFailed() } });
    expect(page(failed)).toBeNull();
  });

  it('an unknown resume answer is never a decline: the same key again, then a cancel', () => {
    const s = atPage();
    s.apply(returned(s));
    for (let i = 0; i < 4; i += 1) {
      s.apply(resume(s, unknown()));
      expect(s.state).toBe('auth_unknown');
      expect(s.attempt.proof).toBeNull();
      expect(s.payment.attempts).toHaveLength(1);
    }
    const keys = new Set(s.calls('resume').map((c) => c.providerKey));
    expect(s.calls('resume')).toHaveLength(4);
    expect(keys.size).toBe(1);
    s.apply(resume(s, unknown()));
    expect(s.attempt.status).toBe('fencing');
    expect(s.payment.attempts).toHaveLength(1);
  });

  it('a resume the provider accepted waits, and asks again on silence', () => {
    const s = atPage();
    s.apply(returned(s));
    s.apply(resume(s, { kind: 'pending', providerRef: 'pi_1' }));
    expect(s.state).toBe('authorizing');
    s.apply({ type: 'timer_fired', timer: 'resume_retry', attemptId: s.attempt.id });
    expect(s.calls('resume')).toHaveLength(2);
    s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: approved() } });
    expect(s.state).toBe('authorized');
  });

  it('a failed authentication leaves the PaymentIntent open: declined only once the cancel is confirmed', () => {
    const s = atPage();
    s.apply(returned(s));
    s.apply(resume(s, authFailed()));
    expect(s.attempt.status).toBe('fencing');
    expect(s.attempt.proof).toBeNull();
    expect(s.calls('fence')).toHaveLength(1);
    s.apply(fenceAnswer(s, approved(0, 'pi_1')));
    expect(s.state).toBe('declined');
    expect(s.attempt).toMatchObject({ status: 'declined', proof: 'declined', declineCode: 'authentication_failed' });
    expect(s.payment.attempts).toHaveLength(1);
  });

  it('a held decline marked retry-elsewhere fails over only after the confirmed cancel; a refused cancel parks', () => {
    const s = atPage();
    s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: authFailed(true) } });
    expect(s.payment.attempts).toHaveLength(1);
    s.apply(fenceAnswer(s, approved(0, 'pi_1')));
    expect(s.payment.attempts).toHaveLength(2);
    expect(s.attempt.connector).toBe('adyen_b');

    const r = atPage();
    r.apply(resume(r, authFailed(true))); // not resuming: ignored
    r.apply(returned(r));
    r.apply(resume(r, authFailed(true)));
    r.apply(fenceAnswer(r, declined('hard', false)));
    expect(r.state).toBe('needs_review');
    expect(r.payment.attempts).toHaveLength(1);
  });

  it('no other connector is tried while the customer is at the page', () => {
    const s = atPage();
    s.advance(5 * MIN);
    expect(s.apply({ type: 'timer_fired', timer: 'query', attemptId: s.attempt.id }).kind).toBe('noop');
    s.apply({ type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id }, outcome: unknown() });
    s.apply({ type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id }, outcome: { kind: 'not_sent', reason: 'connection_refused' } });
    expect(s.state).toBe('requires_action');
    expect(s.payment.attempts).toHaveLength(1);
  });

  it('abandonment: at expires_at the attempt is cancelled; failed authentication_abandoned once confirmed', () => {
    const s = atPage();
    s.advance(14 * MIN);
    expect(s.apply(expiry(s)).kind).toBe('noop');
    s.advance(MIN);
    s.apply(expiry(s));
    expect(s.attempt.status).toBe('fencing');
    expect(s.state).toBe('requires_action');
    expect(s.apply(returned(s)).kind).toBe('noop'); // too late: the cancel decides
    s.apply(fenceAnswer(s, approved(0, 'pi_1')));
    expect(s.state).toBe('failed');
    expect(s.attempt).toMatchObject({ status: 'abandoned', proof: 'fenced', declineCode: 'authentication_abandoned' });
    expect(s.payment.attempts).toHaveLength(1);
    // A completion after the confirmed cancel is live money: released, with a discrepancy.
    s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: approved(1000, 'pi_1') } });
    expect(s.attempt.status).toBe('releasing');
    expect(s.state).toBe('failed');
    expect(s.effects).toContainEqual(expect.objectContaining({ type: 'discrepancy', kind: 'late_authentication' }));
  });

  it('abandonment with an unconfirmed cancel parks the payment; under automatic capture it still cancels', () => {
    const s = atPage({ captureMethod: 'automatic' });
    s.advance(15 * MIN);
    s.apply(expiry(s));
    expect(s.attempt.status).toBe('fencing');
    for (let i = 0; i < 3; i += 1) s.apply(fenceAnswer(s, unknown()));
    expect(s.state).toBe('needs_review');
    expect(s.payment.attempts).toHaveLength(1);
  });

  it("a parked abandonment's cancel confirmed later by the provider un-parks it: failed authentication_abandoned (issue 41 §6)", () => {
    const s = atPage();
    s.advance(15 * MIN);
    s.apply(expiry(s));
    for (let i = 0; i < 3; i += 1) s.apply(fenceAnswer(s, unknown()));
    expect(s.state).toBe('needs_review');
    s.apply({ type: 'provider_fact', fact: { fact: 'fence_confirmed', attemptId: s.attempt.id } });
    expect(s.state).toBe('failed');
    expect(s.attempt).toMatchObject({ status: 'abandoned', proof: 'fenced', declineCode: 'authentication_abandoned' });
  });

  it('the payment deadline while the customer is away fences too', () => {
    const s = atPage({ maxLifetimeMs: 10 * MIN });
    s.advance(10 * MIN);
    s.apply({ type: 'timer_fired', timer: 'max_lifetime' });
    expect(s.attempt.status).toBe('fencing');
    expect(s.attempt.authentication!.stage).toBe('abandoned');
  });

  it('the provider approving while the customer is away settles it', () => {
    const s = atPage({ captureMethod: 'automatic' });
    s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: approved() } });
    expect(s.state).toBe('captured');
    s.advance(15 * MIN);
    expect(s.apply(expiry(s)).kind).toBe('noop');
  });

  it('without a return_url a challenge is cancelled and declined authentication_required', () => {
    const s = new Sim(makeEnv());
    s.authorize(challenge());
    expect(s.state).toBe('authorizing');
    expect(s.attempt.status).toBe('fencing');
    s.apply(fenceAnswer(s, approved(0, 'pi_1')));
    expect(s.state).toBe('declined');
    expect(s.attempt.declineCode).toBe('authentication_required');
  });

  it('an action the gateway cannot present is cancelled and declined authentication_unsupported', () => {
    const s = new Sim(makeEnv(), withReturnUrl);
    s.authorize({ kind: 'action_required', action: 'threeDS2', providerRef: 'psp_1' });
    s.apply(fenceAnswer(s, approved(0, 'psp_1')));
    expect(s.state).toBe('declined');
    expect(s.attempt.declineCode).toBe('authentication_unsupported');
  });

  it('a further challenge after the resume returns the payment to the customer, with a new resume key', () => {
    const s = atPage();
    s.apply(returned(s));
    s.advance(MIN);
    s.apply(resume(s, challenge('pi_1', 'https://provider.example/3ds/2')));
    expect(s.state).toBe('requires_action');
    expect(s.attempt.authentication).toMatchObject({ stage: 'awaiting_customer', action: { url: 'https://provider.example/3ds/2' } });
    s.apply(returned(s));
    const keys = s.calls('resume').map((c) => c.providerKey);
    expect(keys).toEqual([`${s.payment.id}:resume:1`, `${s.payment.id}:resume:2`]);
  });

  it('a resume answering "authenticate again" keeps the original expires_at: no return extends the window', () => {
    const s = atPage();
    const first = s.attempt.authentication!.expiresAt;
    s.advance(10 * MIN);
    s.apply(returned(s));
    s.apply(resume(s, challenge('pi_1', 'https://provider.example/3ds/2')));
    expect(s.state).toBe('requires_action');
    expect(s.attempt.authentication!.expiresAt).toBe(first);
    // Its expiry timer is set again (the first may have fired while the resume was in flight).
    expect(s.last!.kind === 'applied' && s.last!.effects).toContainEqual({ type: 'timer', timer: 'authentication_expiry', attemptId: s.attempt.id, runAt: first });
    s.advance(5 * MIN);
    s.apply(expiry(s));
    expect(s.attempt.authentication!.stage).toBe('abandoned');
  });

  it(`resume rounds are capped at ${MAX_RESUME_ROUNDS}: the provider asking again after the last one gives the customer up (cancelled)`, () => {
    const s = atPage();
    for (let round = 1; round < MAX_RESUME_ROUNDS; round += 1) {
      s.apply(returned(s));
      s.apply(resume(s, challenge('pi_1', `https://provider.example/3ds/${round + 1}`)));
      expect(s.state, `round ${round}`).toBe('requires_action');
    }
    s.apply(returned(s));
    expect(s.calls('resume')).toHaveLength(MAX_RESUME_ROUNDS);
    s.apply(resume(s, challenge('pi_1', 'https://provider.example/3ds/again')));
    expect(s.attempt.status).toBe('fencing');
    expect(s.attempt.authentication!.stage).toBe('abandoned');
    expect(s.apply(returned(s)).kind).toBe('noop');
    expect(s.calls('resume')).toHaveLength(MAX_RESUME_ROUNDS);
  });

  it('a return past the round cap (an attempt stored by an older step) is no resume: the attempt is cancelled', () => {
    const s = atPage();
    const auth = s.attempt.authentication!;
    const capped = { ...s.payment, attempts: s.payment.attempts.map((a) => ({ ...a, authentication: { ...auth, rounds: MAX_RESUME_ROUNDS } })) };
    const r = step(capped, returned(s), s.now, makeEnv());
    expect(r.kind).toBe('applied');
    if (r.kind !== 'applied') return;
    expect(r.effects.filter((e) => e.type === 'provider_call').map((e) => e.type === 'provider_call' && e.op)).toEqual(['fence']);
    expect(r.payment.attempts[0]!.authentication!.stage).toBe('abandoned');
  });

  it('a resume answer about another provider object is a mismatch: never an approval, never its reference', () => {
    const s = atPage();
    s.apply(returned(s));
    s.apply(resume(s, approved(1000, 'pi_someone_else')));
    expect(s.state).toBe('auth_unknown');
    expect(s.attempt).toMatchObject({ status: 'authenticating', providerRef: 'pi_1', amountAuthorized: 0 });
    expect(s.calls('resume')).toHaveLength(2);
    s.apply(resume(s, challenge('pi_other', 'https://elsewhere.example/3ds')));
    expect(s.attempt.providerRef).toBe('pi_1');
    // Never the other object's page: the customer came back, so the attempt keeps no page at all.
    expect(s.attempt.authentication!.action).toBeNull();
  });

  it('step-up: authentication_required with a return_url is retried once on the same connector, authentication forced, new key', () => {
    const s = new Sim(makeEnv(), withReturnUrl);
    s.authorize(authRequired);
    expect(s.state).toBe('authorizing');
    expect(s.payment.attempts).toHaveLength(2);
    expect(s.attempt.connector).toBe('stripe_a');
    expect(s.attempt.authentication?.forced).toBe(true);
    s.prepared('pi_2');
    const auths = s.calls('authorize');
    expect(auths[auths.length - 1]).toMatchObject({ forceAuthentication: true, providerKey: `${s.payment.id}:auth:2` });
    s.authorize(authRequired);
    expect(s.state).toBe('declined');
    expect(s.payment.attempts).toHaveLength(2);

    const none = new Sim(makeEnv());
    none.authorize(authRequired);
    expect(none.state).toBe('declined');
    expect(none.payment.attempts).toHaveLength(1);
    const refused = new Sim(makeEnv(), { authentication: { mode: 'none', returnUrl: 'https://shop.example/r' } });
    refused.authorize(authRequired);
    expect(refused.state).toBe('declined');
  });
});
