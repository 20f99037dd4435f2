// What an operator is shown per attempt before a resolution (issue 29): a provider record's
// amounts, or the notifications we hold folded in order.
import { describe, expect, it } from 'vitest';
import type { NormalizedEvent, ReconciliationRecord } from '../../../src/connectors/contract.ts';
import { showsOfEvents, showsOfRecord } from '../../../src/ops/provider-records.ts';

const record = (status: string, authorized: number, captured: number, refunded = 0): ReconciliationRecord =>
  ({ providerRef: 'pi_1', attemptId: 'att_1', status, amount: 1000, currency: 'EUR', authorized, captured, refunded, createdAt: '2026-01-01T00:00:00Z' });
const base = { providerEventId: 'e', connectorType: 'adyen', attemptId: 'att_1', providerRef: 'psp_1', occurredAt: '2026-01-01T00:00:00Z', rawType: 'X' };
const approvedEv = { ...base, kind: 'authorization', outcome: { kind: 'succeeded', providerRef: 'psp_1', amount: 1000 } } as NormalizedEvent;
const refundEv = (amount: number) => ({ ...base, kind: 'refund_succeeded', amount, currency: 'EUR', modificationRef: 'm' }) as NormalizedEvent;
const cancelEv = { ...base, kind: 'void_succeeded' } as NormalizedEvent;

describe('provider records', () => {
  it('a record: captured net of refunds, a hold still standing, or nothing left', () => {
    expect(showsOfRecord(record('succeeded', 1000, 1000))).toBe('captured');
    expect(showsOfRecord(record('succeeded', 1000, 1000, 1000))).toBe('not_charged');
    expect(showsOfRecord(record('requires_capture', 1000, 0))).toBe('authorized');
    expect(showsOfRecord(record('canceled', 1000, 0))).toBe('not_charged');
    expect(showsOfRecord(record('requires_payment_method', 0, 0))).toBe('not_charged');
    expect(showsOfRecord(record('processing', 0, 0))).toBe('unknown');
  });

  it('notifications in order: an approval under automatic capture is captured until refunded; a cancelled one holds nothing', () => {
    expect(showsOfEvents([approvedEv], 'automatic')).toBe('captured');
    expect(showsOfEvents([approvedEv, refundEv(400)], 'automatic')).toBe('captured');
    expect(showsOfEvents([approvedEv, refundEv(1000)], 'automatic')).toBe('not_charged');
    expect(showsOfEvents([approvedEv], 'manual')).toBe('authorized');
    expect(showsOfEvents([approvedEv, cancelEv], 'manual')).toBe('not_charged');
    expect(showsOfEvents([], 'manual')).toBe('unknown');
  });

  it('a technical cancel cancels only the payment it names: one naming none leaves an approval that came after it standing (issue 41 §5)', () => {
    const fenced = (providerRef: string | null) => ({ ...base, providerRef, kind: 'fence_confirmed' }) as NormalizedEvent;
    expect(showsOfEvents([fenced(null), approvedEv], 'manual')).toBe('authorized');
    expect(showsOfEvents([fenced(null), approvedEv], 'automatic')).toBe('captured');
    expect(showsOfEvents([approvedEv, fenced('psp_1')], 'manual')).toBe('not_charged');
    expect(showsOfEvents([fenced(null)], 'manual')).toBe('not_charged');
  });
});
