// The pure comparison: provider records × our payments → findings by category; only a missed
// capture or refund we asked for carries an input to apply.
import { describe, expect, it } from 'vitest';
import type { ReconciliationRecord } from '../../../src/connectors/contract.ts';
import type { Payment } from '../../../src/core/payment.ts';
import { compare, dedupeKey } from '../../../src/reconcile/compare.ts';
import type { CompareInput } from '../../../src/reconcile/compare.ts';

const T0 = '2026-01-01T00:00:00.000Z';

function payment(over: Partial<Payment> = {}, attempt: Record<string, unknown> = {}): Payment {
  return {
    id: 'pay_1', merchantId: 'm', reference: 'r', amount: 1000, currency: 'EUR', captureMethod: 'manual', allowPartialAuthorization: false, state: 'authorized',
    amountAuthorized: 1000, amountCaptured: 0, amountRefunded: 0, captureOpen: false, captures: [], refunds: [], voidOp: null,
    routing: { snapshot: 's' }, metadata: {}, version: 1, createdAt: T0, deadlineAt: T0,
    attempts: [{ id: 'att_1', no: 1, connector: 'acct', status: 'authorized', providerRef: 'pi_1', amountAuthorized: 1000, createdAt: T0, release: null, ...attempt }],
    ...over,
  } as unknown as Payment;
}

const record = (over: Partial<ReconciliationRecord> = {}): ReconciliationRecord => ({
  providerRef: 'pi_1', attemptId: 'att_1', status: 'requires_capture', amount: 1000, currency: 'EUR', authorized: 1000, captured: 0, refunded: 0, createdAt: T0, ...over,
});

const input = (payments: Payment[], records: ReconciliationRecord[], over: Partial<CompareInput> = {}): CompareInput => ({
  account: 'acct', records, payments, windowFrom: new Date(T0), disputes: new Map(), unapplied: [], visibleBefore: new Date('2026-01-02T00:00:00Z'), ...over,
});

const categories = (i: CompareInput) => compare(i).findings.map((f) => f.category);

describe('compare', () => {
  it('agreeing records find nothing', () => {
    expect(compare(input([payment()], [record()]))).toEqual({ checked: 1, findings: [] });
  });

  it('a capture in flight that the provider completed: missed_notification with the capture_succeeded input', () => {
    const p = payment({ state: 'capturing', captures: [{ id: 'cap_1', no: 1, amount: 1000, status: 'pending' }] as unknown as Payment['captures'] });
    const [f] = compare(input([p], [record({ captured: 1000 })])).findings;
    expect(f?.category).toBe('missed_notification');
    expect(f?.apply).toEqual({ input: { type: 'provider_fact', fact: { fact: 'capture_succeeded', captureId: 'cap_1' } }, attemptId: 'att_1' });
  });

  it('a refund in flight that the provider completed: refund_succeeded input', () => {
    const p = payment({ amountCaptured: 1000, refunds: [{ id: 'ref_1', no: 1, amount: 300, status: 'pending' }] as unknown as Payment['refunds'] });
    const [f] = compare(input([p], [record({ captured: 1000, refunded: 300 })])).findings;
    expect(f?.apply?.input).toEqual({ type: 'provider_fact', fact: { fact: 'refund_succeeded', refundId: 'ref_1' } });
  });

  it('provider-side changes: a capture nobody asked for, a returned refund, an unknown dispute — never applied', () => {
    const captured = payment({ amountCaptured: 1000, amountRefunded: 200 });
    const found = compare(input([captured], [record({ captured: 1000, refunded: 0, disputed: true })])).findings;
    expect(found.map((f) => f.category)).toEqual(['provider_side_change', 'provider_side_change']);
    expect(found.every((f) => f.apply === undefined)).toBe(true);
    expect(categories(input([payment()], [record({ captured: 1000 })]))).toEqual(['provider_side_change']);
    expect(categories(input([captured], [record({ captured: 1000, refunded: 200, disputed: true })], { disputes: new Map([['pay_1', ['dp_1']]]) }))).toEqual([]);
  });

  it('no counterpart: no record once the report is due; more captured here than there', () => {
    expect(categories(input([payment()], []))).toEqual(['no_counterpart']);
    expect(categories(input([payment()], [], { visibleBefore: new Date('2025-12-31T00:00:00Z') }))).toEqual([]);
    expect(categories(input([payment({ amountCaptured: 1000 })], [record()]))).toEqual(['no_counterpart']);
  });

  it('amount mismatch: another amount or currency', () => {
    expect(categories(input([payment()], [record({ authorized: 900, amount: 900 })]))).toEqual(['amount_mismatch']);
    expect(categories(input([payment()], [record({ currency: 'USD' })]))).toEqual(['amount_mismatch']);
    // Stripe after a final partial capture: authorized shrinks to captured, amount stays.
    expect(categories(input([payment({ amountCaptured: 600 })], [record({ authorized: 600, captured: 600 })]))).toEqual([]);
  });

  it('a capture we hold as succeeded that the provider reports failed: missed_notification applied as capture_reversed', () => {
    const caps = [
      { id: 'cap_1', no: 1, amount: 400, status: 'succeeded', providerRef: 'mod_1' },
      { id: 'cap_2', no: 2, amount: 600, status: 'succeeded', providerRef: 'mod_2' },
    ] as unknown as Payment['captures'];
    const p = payment({ state: 'captured', amountCaptured: 1000, captures: caps });
    const found = compare(input([p], [record({ captured: 600, failedCaptures: ['mod_1'] })])).findings;
    expect(found.map((f) => [f.category, f.aspect])).toEqual([['missed_notification', 'capture_failed:cap_1']]);
    expect(found[0]?.apply).toEqual({ input: { type: 'provider_fact', fact: { fact: 'capture_reversed', captureId: 'cap_1' } }, attemptId: 'att_1' });
    // Already reversed here (the notification arrived): nothing to find.
    const reversed = payment({ state: 'captured', amountCaptured: 600, captures: [{ ...caps[0]!, status: 'reversed' }, caps[1]!] as unknown as Payment['captures'] });
    expect(categories(input([reversed], [record({ captured: 600, failedCaptures: ['mod_1'] })]))).toEqual([]);
    // Without the failed-capture mark the same shortfall is only a no_counterpart for an operator.
    expect(categories(input([p], [record({ captured: 600 })]))).toEqual(['no_counterpart']);
  });

  it('unclaimed provider money and unapplied inbox rows', () => {
    const i = input([], [record({ providerRef: 'pi_x', attemptId: null, captured: 500 })], {
      unapplied: [{ id: 7, paymentId: null, attemptId: null, providerRef: 'pi_y', rawType: 'charge.refunded', outcome: 'failed', reason: 'no payment' }],
    });
    const found = compare(i).findings;
    expect(found.map((f) => [f.category, f.providerRef])).toEqual([['missed_notification', 'pi_x'], ['unapplied_event', 'inbox:7']]);
    expect(found.map(dedupeKey)).toEqual(['missed_notification:-:pi_x:record', 'unapplied_event:-:inbox:7:event']);
  });

  it('window: an attempt made before the window (here for something in flight) may have had no activity; a refund-only record still moved money', () => {
    expect(categories(input([payment()], [], { windowFrom: new Date('2026-01-01T12:00:00Z') }))).toEqual([]);
    expect(categories(input([], [record({ providerRef: 'pi_x', attemptId: null, authorized: 0, captured: 0, refunded: 300 })]))).toEqual(['missed_notification']);
  });

  it('findings carry the provider-side facts they rest on: a returned refund names what was returned', () => {
    const p = payment({ state: 'captured', amountCaptured: 1000, amountRefunded: 400 });
    const [f] = compare(input([p], [record({ captured: 1000, refunded: 0, refundsReturned: 400, status: 'succeeded' })])).findings;
    expect([f?.aspect, f?.provider, f?.ours]).toEqual(['refund_returned', { status: 'succeeded', returned: 400 }, { refunded: 400 }]);
  });

  describe('each attempt against its own amounts (issue 20)', () => {
    const release = { no: 1, round: 1, kind: 'refund', amount: 1000, providerKey: 'k', status: 'succeeded', providerRef: 're_1', earlierRefs: [], calls: 1, maybeReached: true, requestedAt: T0, failure: null };
    // Automatic capture: attempt 1 approved late on this account and released by a refund; attempt 2 (elsewhere) kept, 1000 captured.
    const twoAttempts = (rel: Record<string, unknown>): Payment => {
      const p = payment({ captureMethod: 'automatic', state: 'captured', amountCaptured: 1000 }, { status: 'released', release: { ...release, ...rel } });
      return { ...p, attempts: [...p.attempts, { ...p.attempts[0]!, id: 'att_2', no: 2, connector: 'other', providerRef: 'psp_2', status: 'authorized', release: null }] };
    };

    it('a release confirmed here while the provider still holds the money is a finding, even when the amounts equal the kept attempt\'s', () => {
      const found = compare(input([twoAttempts({})], [record({ status: 'succeeded', captured: 1000, refunded: 0 })])).findings;
      expect(found.map((f) => [f.category, f.aspect])).toEqual([['no_counterpart', 'release:1']]);
    });

    it('a released attempt the provider shows refunded agrees', () => {
      expect(categories(input([twoAttempts({})], [record({ status: 'succeeded', captured: 1000, refunded: 1000 })]))).toEqual([]);
    });

    it('a release in flight that the provider shows done is applied as its confirmation', () => {
      const found = compare(input([twoAttempts({ status: 'pending' })], [record({ status: 'succeeded', captured: 1000, refunded: 1000 })])).findings;
      expect(found).toHaveLength(1);
      expect(found[0]!.apply?.input).toEqual({ type: 'provider_fact', fact: { fact: 'release_succeeded', attemptId: 'att_1' } });
    });
  });
});
