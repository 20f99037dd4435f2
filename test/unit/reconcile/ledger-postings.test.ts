// Posting rules for disputes and settlement (src/core/ledger.ts), pure: every posting balances per
// currency, and the sequences the issue names leave the accounts where they should be.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { disputePosting, imbalance, ledgerAccounts, postingFor, settlementPosting } from '../../../src/core/ledger.ts';
import type { DisputeStatus, LedgerLine, Posting } from '../../../src/core/ledger.ts';

const M = 'mer_1';
const C = 'adyen_eu';
const receivable = ledgerAccounts.connectorReceivable(C);
const payable = ledgerAccounts.merchantPayable(M);
const disputes = ledgerAccounts.disputes(M);
const bank = ledgerAccounts.settlement(C);
const fees = ledgerAccounts.fees(C);

/** Debits minus credits per account, zero balances dropped. */
function balances(postings: readonly (Posting | null)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of postings.flatMap((p): readonly LedgerLine[] => p?.lines ?? [])) out[l.account] = (out[l.account] ?? 0) + (l.direction === 'debit' ? l.amount : -l.amount);
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== 0));
}
const dispute = (from: DisputeStatus | null, to: DisputeStatus, amount = 700) => disputePosting({ from, to, amount, currency: 'EUR', connector: C, merchantId: M });
const capture = (amount: number) => postingFor({ type: 'ledger', posting: 'capture', amount, currency: 'EUR', connector: C }, M);
const settle = (gross: number, fee = 0) => settlementPosting({ connector: C, currency: 'EUR', gross, fee });

describe('dispute postings', () => {
  it('opened withdraws the amount into the disputes account; won reinstates it; lost writes it off the payable', () => {
    expect(balances([capture(1000), dispute(null, 'opened')])).toEqual({ [receivable]: 300, [disputes]: 700, [payable]: -1000 });
    expect(balances([capture(1000), dispute(null, 'opened'), dispute('opened', 'won')])).toEqual({ [receivable]: 1000, [payable]: -1000 });
    expect(balances([capture(1000), dispute(null, 'opened'), dispute('opened', 'lost')])).toEqual({ [receivable]: 300, [payable]: -300 });
  });

  it('first heard of already closed: lost posts withdrawal and write-off at once, won moves nothing; repeats and reopenings post nothing', () => {
    expect(balances([dispute(null, 'lost')])).toEqual(balances([dispute(null, 'opened'), dispute('opened', 'lost')]));
    expect(dispute(null, 'won')).toBeNull();
    expect(dispute('opened', 'opened')).toBeNull();
    expect(dispute('won', 'opened')).toBeNull();
    expect(dispute('lost', 'won')).toBeNull();
    expect(dispute(null, 'opened', 0)).toBeNull();
    expect(dispute('opened', 'won')?.kind).toBe('dispute_won');
  });
});

describe('settlement postings', () => {
  it('a settled capture moves receivable to the bank by the net and books the commission as fees', () => {
    expect(balances([capture(1000), settle(1000, 25)])).toEqual({ [bank]: 975, [fees]: 25, [payable]: -1000 });
  });

  it('a refund or chargeback row runs the other way; a whole cycle leaves receivable at zero', () => {
    const refund = postingFor({ type: 'ledger', posting: 'refund', amount: 300, currency: 'EUR', connector: C }, M);
    expect(balances([capture(1000), settle(1000, 10), refund, settle(-300)])).toEqual({ [bank]: 690, [fees]: 10, [payable]: -700 });
    expect(balances([capture(1000), settle(1000), dispute(null, 'opened', 1000), settle(-1000), dispute('opened', 'lost', 1000)])).toEqual({});
  });

  it('refuses fractional amounts and negative fees; a zero row posts nothing', () => {
    expect(() => settle(10.5)).toThrow(RangeError);
    expect(() => settle(100, -1)).toThrow(RangeError);
    expect(settle(0)).toBeNull();
  });

  it('every dispute and settlement posting balances per currency (property)', () => {
    const status = fc.constantFrom<DisputeStatus | null>(null, 'opened', 'won', 'lost');
    fc.assert(fc.property(status, fc.constantFrom<DisputeStatus>('opened', 'won', 'lost'), fc.integer({ min: 0, max: 1e9 }), (from, to, amount) => {
      const p = dispute(from, to, amount);
      return p === null || (Object.values(imbalance(p.lines)).every((v) => v === 0) && p.lines.every((l) => Number.isInteger(l.amount) && l.amount > 0));
    }));
    fc.assert(fc.property(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 1e8 }), (gross, fee) => {
      const p = settle(gross, fee);
      return p === null || (Object.values(imbalance(p.lines)).every((v) => v === 0) && p.lines.every((l) => l.amount > 0));
    }));
  });
});
