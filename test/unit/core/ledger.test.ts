import { describe, expect, it } from 'vitest';
import { imbalance, postingFor } from '../../../src/core/index.ts';
import type { LedgerEffect } from '../../../src/core/index.ts';

describe('ledger posting rules', () => {
  const kinds: LedgerEffect['posting'][] = ['capture', 'capture_reversed', 'refund', 'refund_reversed'];
  it.each(kinds)('%s balances per currency', (posting) => {
    const p = postingFor({ type: 'ledger', posting, amount: 1234, currency: 'KWD', connector: 'adyen_eu' }, 'mer_1');
    expect(Object.values(imbalance(p.lines))).toEqual([0]);
    expect(p.lines).toHaveLength(2);
  });

  it('a capture and its reversal cancel out; a refund undoes a capture', () => {
    const cap = postingFor({ type: 'ledger', posting: 'capture', amount: 500, currency: 'EUR', connector: 'stripe_a' }, 'm');
    const rev = postingFor({ type: 'ledger', posting: 'capture_reversed', amount: 500, currency: 'EUR', connector: 'stripe_a' }, 'm');
    const refund = postingFor({ type: 'ledger', posting: 'refund', amount: 500, currency: 'EUR', connector: 'stripe_a' }, 'm');
    const net = (lines: typeof cap.lines) => {
      const out: Record<string, number> = {};
      for (const l of lines) out[l.account] = (out[l.account] ?? 0) + (l.direction === 'debit' ? l.amount : -l.amount);
      return out;
    };
    expect(net([...cap.lines, ...rev.lines])).toEqual({ 'connector:stripe_a:receivable': 0, 'merchant:m:payable': 0 });
    expect(net([...cap.lines, ...refund.lines])).toEqual({ 'connector:stripe_a:receivable': 0, 'merchant:m:payable': 0 });
    expect(net(cap.lines)).toEqual({ 'connector:stripe_a:receivable': 500, 'merchant:m:payable': -500 });
  });
});
