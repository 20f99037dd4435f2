// Settlement rows from the Adyen settlement-details report the sandbox writes: the report's own
// state and renderer produce the CSV, the connector's parser reads it back into SettlementLines
// (signed gross, fee = gross - net, stable line ids) and folds CaptureFailed into its records.
import { describe, expect, it } from 'vitest';
import { recordsFromSettlementReports, refsMissingHistory, settlementLinesFromReports } from '../../../src/connectors/adyen/reconciliation.ts';
import { settlementReport } from '../../../src/sandboxes/adyen/settlement-report.ts';
import { AdyenSandboxState } from '../../../src/sandboxes/adyen/state.ts';
import type { PaymentRecord } from '../../../src/sandboxes/adyen/state.ts';

const DAY = Date.UTC(2026, 0, 5);
const payment = { pspReference: 'PSP1', merchantReference: 'att_1', merchantAccount: 'Shop', amount: { value: 10_000, currency: 'EUR' }, paymentMethod: 'visa' } as unknown as PaymentRecord;

function report(): string {
  const state = new AdyenSandboxState();
  state.commission = { fixed: 10, bps: 150 }; // 10 + 1.5 %
  state.book({ bookedMs: DAY + 1_000, type: 'Authorised', payment, modificationReference: 'PSP1', amount: 10_000 });
  state.book({ bookedMs: DAY + 2_000, type: 'Settled', payment, modificationReference: 'CAP1', amount: 6_000 });
  state.book({ bookedMs: DAY + 3_000, type: 'Settled', payment, modificationReference: 'CAP2', amount: 4_000 });
  state.commission = { fixed: 0, bps: 0 };
  state.book({ bookedMs: DAY + 4_000, type: 'Refunded', payment, modificationReference: 'REF1', amount: 1_500 });
  state.book({ bookedMs: DAY + 5_000, type: 'CaptureFailed', payment, modificationReference: 'CAP2', amount: 4_000 });
  state.book({ bookedMs: DAY + 6_000, type: 'Chargeback', payment, modificationReference: 'PSP1', amount: 2_000 });
  state.book({ bookedMs: DAY + 7_000, type: 'Chargeback', payment, modificationReference: 'PSP1', amount: 2_000 });
  return settlementReport(state, { merchantAccount: 'Shop', kind: 'settlement_batch', dayStartMs: DAY, dayEndMs: DAY + 86_400_000 }, DAY + 86_400_000, 0)!;
}

describe('settlement lines from the report', () => {
  const window = { from: new Date(DAY), to: new Date(DAY + 86_400_000) };

  it('one line per money-moving row: signed gross, the commission as fee, stable ids (a repeat row gets #2)', () => {
    const lines = settlementLinesFromReports([report()], window);
    expect(lines.map((l) => [l.type, l.modificationRef, l.gross, l.fee])).toEqual([
      ['Settled', 'CAP1', 6_000, 100],
      ['Settled', 'CAP2', 4_000, 70],
      ['Refunded', 'REF1', -1_500, 0],
      ['CaptureFailed', 'CAP2', -4_000, 0],
      ['Chargeback', 'PSP1', -2_000, 0],
      ['Chargeback', 'PSP1', -2_000, 0],
    ]);
    const ids = lines.map((l) => l.lineId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.at(-1)).toMatch(/#2$/);
    expect(settlementLinesFromReports([report()], window).map((l) => l.lineId)).toEqual(ids);
    expect(lines.every((l) => l.attemptId === 'att_1' && l.providerRef === 'PSP1' && l.currency === 'EUR')).toBe(true);
  });

  it('rows booked outside the window are not lines', () => {
    expect(settlementLinesFromReports([report()], { from: new Date(DAY + 3_500), to: new Date(DAY + 4_500) }).map((l) => l.type)).toEqual(['Refunded']);
  });

  it('the records fold a CaptureFailed row out of captured and name the failed capture', () => {
    const [r] = recordsFromSettlementReports([report()], window);
    expect([r?.captured, r?.refunded, r?.failedCaptures, r?.disputed]).toEqual([6_000, 1_500, ['CAP2'], true]);
  });

  it('every dispute row type folds: Chargeback withdraws, ChargebackReversed reinstates, SecondChargeback withdraws again', () => {
    const window = { from: new Date(DAY), to: new Date(DAY + 86_400_000) };
    const disputed = (types: readonly ('Chargeback' | 'ChargebackReversed' | 'SecondChargeback')[]): [boolean | undefined, string | undefined, number[]] => {
      const state = new AdyenSandboxState();
      state.book({ bookedMs: DAY + 1_000, type: 'Settled', payment, modificationReference: 'CAP1', amount: 10_000 });
      for (const [i, type] of types.entries()) state.book({ bookedMs: DAY + 2_000 + i, type, payment, modificationReference: 'DSP1', amount: 10_000 });
      const csv = settlementReport(state, { merchantAccount: 'Shop', kind: 'settlement_batch', dayStartMs: DAY, dayEndMs: DAY + 86_400_000 }, DAY + 86_400_000, 0)!;
      const [r] = recordsFromSettlementReports([csv], window);
      return [r?.disputed, r?.status, settlementLinesFromReports([csv], window).slice(1).map((l) => l.gross)];
    };
    expect(disputed(['Chargeback'])).toEqual([true, 'Chargeback', [-10_000]]);
    expect(disputed(['Chargeback', 'ChargebackReversed'])).toEqual([undefined, 'ChargebackReversed', [-10_000, 10_000]]);
    expect(disputed(['Chargeback', 'ChargebackReversed', 'SecondChargeback'])).toEqual([true, 'SecondChargeback', [-10_000, 10_000, -10_000]]);
    expect(disputed(['Chargeback', 'ChargebackReversed', 'SecondChargeback', 'ChargebackReversed'])).toEqual([undefined, 'ChargebackReversed', [-10_000, 10_000, -10_000, 10_000]]);
  });

  it('a payment is in the window by any of its rows; rows of earlier reports count toward its record', () => {
    const LATER = DAY + 10 * 86_400_000;
    const dayReport = (book: (state: AdyenSandboxState) => void, dayStartMs: number): string => {
      const state = new AdyenSandboxState();
      book(state);
      return settlementReport(state, { merchantAccount: 'Shop', kind: 'settlement_batch', dayStartMs, dayEndMs: dayStartMs + 86_400_000 }, dayStartMs + 86_400_000, 0)!;
    };
    const early = dayReport((st) => {
      st.book({ bookedMs: DAY + 1_000, type: 'Authorised', payment, modificationReference: 'PSP1', amount: 10_000 });
      st.book({ bookedMs: DAY + 2_000, type: 'Settled', payment, modificationReference: 'CAP1', amount: 10_000 });
    }, DAY);
    const late = dayReport((st) => st.book({ bookedMs: LATER + 1_000, type: 'Refunded', payment, modificationReference: 'REF1', amount: 2_500 }), LATER);
    const window = { from: new Date(LATER), to: new Date(LATER + 86_400_000) };
    // The window's report alone: a refund-only record, whose history is missing.
    expect(refsMissingHistory([late], window)).toEqual(new Set(['PSP1']));
    expect(recordsFromSettlementReports([late], window).map((r) => [r.captured, r.refunded])).toEqual([[0, 2_500]]);
    // With the earlier report read too: the payment's totals.
    expect(refsMissingHistory([early, late], window)).toEqual(new Set());
    expect(recordsFromSettlementReports([early, late], window).map((r) => [r.authorized, r.captured, r.refunded])).toEqual([[10_000, 10_000, 2_500]]);
    // A window with none of its rows: not in it.
    expect(recordsFromSettlementReports([early, late], { from: new Date(DAY + 86_400_000), to: new Date(LATER) })).toEqual([]);
  });
});
