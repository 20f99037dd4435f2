// Issue 43: a refusal by our own checks (not_sent{local_validation}) is final for that connector.
// Resending the same request with the same key would be refused the same way; before this, a payment
// with an unknown test card was resent 4 times and answered 202 after the API's wait.
import { describe, expect, it } from 'vitest';
import type { CallOutcome } from '../../../src/core/index.ts';
import { makeEnv, notSent, Sim } from './fixtures.ts';

const localRefusal: CallOutcome = { kind: 'not_sent', reason: 'local_validation', detail: 'not one of the gateway test cards' };
const onlyAdyen = { routing: { snapshot: 'v', rule: 'r', candidates: ['adyen_b'], skipped: [] } };
const onlyStripe = { routing: { snapshot: 'v', rule: 'r', candidates: ['stripe_a'], skipped: [] } };

describe('a local validation refusal is never retried', () => {
  it('authorize refused locally with no candidate left: failed at once, one send, no resend', () => {
    const s = new Sim(makeEnv(), onlyAdyen);
    s.authorize(localRefusal);
    expect(s.calls('authorize')).toHaveLength(1);
    expect(s.state).toBe('failed');
    expect(s.attempt).toMatchObject({ status: 'abandoned', proof: 'not_sent', notSentReason: 'local_validation' });
  });

  it('a refusal that may pass next time (connection refused) is still resent with the same key', () => {
    const s = new Sim(makeEnv(), onlyAdyen);
    s.authorize(notSent());
    expect(s.calls('authorize')).toHaveLength(2);
    expect(s.state).toBe('authorizing');
  });

  it('refused locally with another candidate: fails over (the other connector may take it)', () => {
    const s = new Sim();
    s.authorize(localRefusal);
    expect(s.attempt.connector).toBe('adyen_b');
    expect(s.state).toBe('authorizing');
  });

  it('a preparatory call refused locally is not repeated either', () => {
    const s = new Sim(makeEnv(), onlyStripe);
    s.apply({ type: 'call_result', ref: { op: 'prepare', attemptId: s.attempt.id }, outcome: localRefusal });
    expect(s.calls('prepare')).toHaveLength(1);
    expect(s.state).toBe('failed');
  });
});
