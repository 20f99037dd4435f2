// A success fact that names no provider object (providerRef '': a webhook fact without a reference)
// settles the refund or capture it is about but keeps the reference already known: two refunds of a
// run must never "share" the empty reference (the chaos invariant webhook_auth saw two, 2026-12-02).
import { describe, expect, it } from 'vitest';
import { approved, makeEnv, Sim } from './fixtures.ts';

describe('a nameless success fact', () => {
  it('settles the refund, keeping its reference (null stays null, a known one stays)', () => {
    const s = new Sim(makeEnv(), { captureMethod: 'automatic' });
    s.authorize(approved());
    s.apply({ type: 'refund_requested', refundId: 'rfd_1', amount: 300, reason: null });
    s.apply({ type: 'provider_fact', fact: { fact: 'refund_succeeded', refundId: 'rfd_1' } });
    const r = s.payment.refunds.find((x) => x.id === 'rfd_1')!;
    expect(r.status).toBe('succeeded');
    expect(r.providerRef).toBeNull();
  });
});
