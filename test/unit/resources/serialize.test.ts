// The payment resource under automatic capture (issue 43): the capture made with the approval is
// listed and the attempt holding the payment says captured; a capture record made later for it (the
// scheme reversing it) is listed instead, never both.
import { describe, expect, it } from 'vitest';
import { paymentResource } from '../../../src/resources/serialize.ts';
import { approved, makeEnv, Sim } from '../core/fixtures.ts';

const only = (c: string) => ({ routing: { snapshot: 'v', rule: 'r', candidates: [c], skipped: [] } });

describe('payment resource', () => {
  it('automatic capture: the approval capture is listed, with a stable id, and the attempt says captured', () => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic', ...only('adyen_b') });
    s.authorize(approved(1000, 'psp_auto'));
    expect(s.state).toBe('captured');
    const r = paymentResource(s.payment, s.now.toISOString());
    expect(r.attempts[0]!.status).toBe('captured');
    expect(r.captures).toEqual([{
      id: `cap_${s.attempt.id.slice(4)}`, object: 'capture', amount: 1000, final: true, status: 'succeeded',
      failure_code: null, failure_message: null, provider_reference: 'psp_auto', created_at: s.attempt.createdAt,
    }]);
    expect(paymentResource(s.payment, s.now.toISOString()).captures[0]!.id).toBe(r.captures[0]!.id);
    expect(r).toMatchObject({ amount_capturable: 0, amount_released: 0 });
  });

  it('automatic capture reversed by the scheme: only the reversal record is listed', () => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic', ...only('adyen_b') });
    s.authorize(approved(1000, 'psp_auto'));
    s.apply({ type: 'provider_fact', fact: { fact: 'auto_capture_reversed', attemptId: s.attempt.id, amount: 1000, providerRef: 'cf_1' } });
    const r = paymentResource(s.payment, s.now.toISOString());
    expect(r.captures.map((c) => [c.status, c.provider_reference])).toEqual([['reversed', 'cf_1']]);
  });

  it('manual capture: authorized until something is captured, then captured', () => {
    const s = new Sim(makeEnv(), only('adyen_b'));
    s.authorize(approved(1000, 'psp_m'));
    expect(paymentResource(s.payment, s.now.toISOString())).toMatchObject({ captures: [], attempts: [{ status: 'authorized' }], amount_capturable: 1000 });
    s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
    s.apply({ type: 'provider_fact', fact: { fact: 'capture_succeeded', captureId: 'cap_1' } });
    expect(paymentResource(s.payment, s.now.toISOString())).toMatchObject({ attempts: [{ status: 'captured' }], amount_capturable: 0 });
  });
});
