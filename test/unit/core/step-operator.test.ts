// The money guards on operator resolutions (issue 29) and provider news after a resolution.
import { describe, expect, it } from 'vitest';
import type { PaymentInput } from '../../../src/core/index.ts';
import { approved, makeEnv, Sim, unknown } from './fixtures.ts';

/** Multicapture on stripe_a: capture 1 (400) confirmed, capture 2 (600) unknown past its resends: needs_review. */
function captureParked(): Sim {
  const s = new Sim(makeEnv(), { routing: { snapshot: 'v', rule: 'r', candidates: ['stripe_a'], skipped: [] } });
  s.authorize(approved());
  s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 400, final: false });
  s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: approved(400) });
  s.apply({ type: 'capture_requested', captureId: 'cap_2', amount: 600, final: true });
  for (let i = 0; i < 4; i++) s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_2' }, outcome: unknown() });
  s.lookupsFindNothing();
  expect(s.state).toBe('needs_review');
  expect(s.payment.amountCaptured).toBe(400);
  return s;
}

const resolve = (as: 'failed' | 'voided' | 'captured' | 'authorized', extra: Partial<Extract<PaymentInput, { type: 'operator_resolved' }>> = {}): PaymentInput =>
  ({ type: 'operator_resolved', as, note: 'checked the dashboard', ...extra });
const capture2Confirmed: PaymentInput = { type: 'provider_fact', fact: { fact: 'capture_succeeded', captureId: 'cap_2', providerRef: 'ch_2' } };

describe('operator resolutions with money captured', () => {
  it.each(['failed', 'voided'] as const)('refuses %s while 400 is captured and capture 2 is in flight, and says what to do instead', (as) => {
    const s = captureParked();
    const r = s.apply(resolve(as));
    expect(r.kind).toBe('illegal');
    const reason = r.kind === 'illegal' ? r.reason : '';
    expect(reason).toContain('400 EUR is captured');
    expect(reason).toContain('capture 2 of 600 is in flight');
    expect(reason).toContain('resolve as captured');
    expect(reason).toContain('refund');
    expect(s.state).toBe('needs_review');
  });

  it('keeping it as captured is allowed; the later confirmation of capture 2 books it', () => {
    const s = captureParked();
    expect(s.apply(resolve('captured')).kind).toBe('applied');
    expect(s.state).toBe('captured');
    s.apply(capture2Confirmed);
    expect([s.state, s.payment.amountCaptured]).toEqual(['captured', 1000]);
  });

  it('an override needs its reason and the operator, and is recorded as a discrepancy', () => {
    const s = captureParked();
    expect(s.apply(resolve('failed', { override: 'finance approved (FIN-9)' })).kind).toBe('illegal');
    const r = s.apply(resolve('failed', { override: 'finance approved (FIN-9)', operator: 'ana' }));
    expect(r.kind).toBe('applied');
    expect(s.state).toBe('failed');
    expect(r.kind === 'applied' ? r.note : '').toContain('[override by ana: finance approved (FIN-9)]');
    expect(s.effects).toContainEqual(expect.objectContaining({ type: 'discrepancy', kind: 'operator_override' }));
  });

  it('a capture confirmed after an overridden failed resolution is booked and parks the payment, never throws', () => {
    const s = captureParked();
    s.apply(resolve('failed', { override: 'finance approved', operator: 'ana' }));
    const r = s.apply(capture2Confirmed);
    expect(r.kind).toBe('applied');
    expect([s.state, s.payment.amountCaptured]).toEqual(['needs_review', 1000]);
    expect(s.effects).toContainEqual(expect.objectContaining({ type: 'ledger', posting: 'capture', amount: 600 }));
    expect(s.effects).toContainEqual(expect.objectContaining({ type: 'discrepancy', kind: 'fact_after_resolution', subject: 'cap_2' }));
  });

  it('refuses failed when the provider shows the attempt authorised, with nothing captured', () => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic', routing: { snapshot: 'v', rule: 'r', candidates: ['stripe_a'], skipped: [] } });
    s.authorize(unknown());
    for (let i = 0; i < 12 && s.state !== 'needs_review'; i++) {
      s.advance(25 * 3_600_000);
      s.apply({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome: unknown('not_found') });
    }
    expect(s.state).toBe('needs_review');
    const seen = [{ attemptId: s.attempt.id, shows: 'captured' as const, detail: 'pi_1 succeeded' }];
    const r = s.apply(resolve('failed', { provider: seen }));
    expect(r.kind === 'illegal' ? r.reason : '').toContain('the provider shows attempt 1 captured (pi_1 succeeded)');
    expect(s.apply(resolve('failed', { provider: [{ attemptId: s.attempt.id, shows: 'nothing_found' }] })).kind).toBe('applied');
    expect(s.state).toBe('failed');
  });
});
