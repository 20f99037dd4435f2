// Posting rules for disputes (src/core/disputes.ts) and settlement (src/core/ledger.ts), pure: every posting balances per
// currency, and the sequences the issue names leave the accounts where they should be.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ADYEN_DISPUTE_LIFECYCLE, adyenDisputeStep } from '../../../src/connectors/adyen/dispute-lifecycle.ts';
import { planDispute } from '../../../src/core/disputes.ts';
import type { DisputeRecordState } from '../../../src/core/disputes.ts';
import { imbalance, ledgerAccounts, postingFor, settlementPosting } from '../../../src/core/ledger.ts';
import type { LedgerLine, Posting } from '../../../src/core/ledger.ts';

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
/** A dispute's postings after an Adyen path (src/core/disputes.ts with the Adyen lifecycle). */
function dispute(codes: readonly string[], amount = 700): (Posting | null)[] {
  let state: DisputeRecordState | null = null;
  const posted = new Set<string>();
  const out: Posting[] = [];
  for (const code of codes) {
    const step = adyenDisputeStep(state, code, null, amount, 'EUR');
    if (step.kind === 'stale') continue;
    const plan = planDispute(state, { amount, currency: 'EUR' }, step, { disputeId: 'dsp_1', connector: C, merchantId: M }, posted);
    for (const p of plan.postings) { posted.add(p.source); out.push(p.posting); }
    state = plan.next;
  }
  return out;
}
const capture = (amount: number) => postingFor({ type: 'ledger', posting: 'capture', amount, currency: 'EUR', connector: C }, M);
const settle = (gross: number, fee = 0) => settlementPosting({ connector: C, currency: 'EUR', gross, fee });

describe('dispute postings', () => {
  it('withdrawn moves the amount into the disputes account; reinstated brings it back; lost writes it off the payable', () => {
    expect(balances([capture(1000), ...dispute(['CHARGEBACK'])])).toEqual({ [receivable]: 300, [disputes]: 700, [payable]: -1000 });
    expect(balances([capture(1000), ...dispute(['CHARGEBACK', 'CHARGEBACK_REVERSED'])])).toEqual({ [receivable]: 1000, [payable]: -1000 });
    expect(balances([capture(1000), ...dispute(['CHARGEBACK', 'PREARBITRATION_LOST'])])).toEqual({ [receivable]: 300, [payable]: -300 });
  });

  it('first heard of already lost: withdrawal and write-off at once; an inquiry moves nothing', () => {
    expect(balances(dispute(['SECOND_CHARGEBACK']))).toEqual(balances(dispute(['CHARGEBACK', 'CHARGEBACK_REVERSED', 'SECOND_CHARGEBACK'])));
    expect(dispute(['REQUEST_FOR_INFORMATION', 'ISSUER_RESPONSE_TIMEFRAME_EXPIRED'])).toEqual([]);
    expect(dispute(['CHARGEBACK', 'CHARGEBACK']).map((p) => p?.kind)).toEqual(['dispute_withdrawn']);
  });
});

describe('settlement postings', () => {
  it('a settled capture moves receivable to the bank by the net and books the commission as fees', () => {
    expect(balances([capture(1000), settle(1000, 25)])).toEqual({ [bank]: 975, [fees]: 25, [payable]: -1000 });
  });

  it('a refund or chargeback row runs the other way; a whole cycle leaves receivable at zero', () => {
    const refund = postingFor({ type: 'ledger', posting: 'refund', amount: 300, currency: 'EUR', connector: C }, M);
    expect(balances([capture(1000), settle(1000, 10), refund, settle(-300)])).toEqual({ [bank]: 690, [fees]: 10, [payable]: -700 });
    expect(balances([capture(1000), settle(1000), ...dispute(['CHARGEBACK', 'DISPUTE_DEFENSE_PERIOD_ENDED'], 1000), settle(-1000)])).toEqual({});
  });

  it('refuses fractional amounts and negative fees; a zero row posts nothing', () => {
    expect(() => settle(10.5)).toThrow(RangeError);
    expect(() => settle(100, -1)).toThrow(RangeError);
    expect(settle(0)).toBeNull();
  });

  it('every dispute and settlement posting balances per currency (property)', () => {
    const code = fc.constantFrom(...Object.keys(ADYEN_DISPUTE_LIFECYCLE));
    fc.assert(fc.property(fc.array(code, { maxLength: 8 }), fc.integer({ min: 1, max: 1e9 }), (codes, amount) =>
      dispute(codes, amount).every((p) => p !== null && Object.values(imbalance(p.lines)).every((v) => v === 0) && p.lines.every((l) => Number.isInteger(l.amount) && l.amount > 0))));
    fc.assert(fc.property(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 1e8 }), (gross, fee) => {
      const p = settle(gross, fee);
      return p === null || (Object.values(imbalance(p.lines)).every((v) => v === 0) && p.lines.every((l) => l.amount > 0));
    }));
  });
});
