// Report times are local to the Adyen account's zone, with a TimeZone abbreviation per row (issue 33).
import { describe, expect, it } from 'vitest';
import { recordsFromAccountingReports, recordsFromSettlementReports, settlementLinesFromReports } from '../../../../src/connectors/adyen/reconciliation.ts';
import { parseReportFileName, reportDownloadUrl, reportInstant, zoneDayStartMs } from '../../../../src/connectors/adyen/report-files.ts';
import { batchOf, matchReportPath, settlementReport } from '../../../../src/sandboxes/adyen/settlement-report.ts';
import { AdyenSandboxState } from '../../../../src/sandboxes/adyen/state.ts';
import type { PaymentRecord } from '../../../../src/sandboxes/adyen/state.ts';

const ZONE = 'Europe/Amsterdam';
const HEAD = 'Company Account,Merchant Account,Psp Reference,Merchant Reference,Payment Method,Creation Date,TimeZone,Type,Modification Reference,Gross Currency,Gross Debit (GC),Gross Credit (GC),Exchange Rate,Net Currency,Net Debit (NC),Net Credit (NC),Commission (NC),Batch Number';
const line = (psp: string, created: string, tz: string) => `Co,Shop,${psp},att_${psp},visa,${created},${tz},Settled,M${psp},EUR,,10.00,1,EUR,,10.00,0.00,7`;

describe('report times across daylight-saving changes', () => {
  it('reads live-style rows in CET and CEST as the right instants (spring and the repeated autumn hour)', () => {
    const csv = [HEAD,
      line('A', '2027-03-28 01:30:00', 'CET'), // before the spring change (01:00 UTC)
      line('B', '2027-03-28 03:30:00', 'CEST'), // after it
      line('C', '2026-10-25 02:30:00', 'CEST'), // the autumn hour, first time
      line('D', '2026-10-25 02:30:00', 'CET'), // the same local time an hour later
    ].join('\r\n');
    const lines = settlementLinesFromReports([{ name: 'settlement_detail_report_batch_7.csv', text: csv }], null, ZONE);
    expect(lines.map((l) => [l.providerRef, l.bookedAt])).toEqual([
      ['A', '2027-03-28T00:30:00.000Z'], ['B', '2027-03-28T01:30:00.000Z'], ['C', '2026-10-25T00:30:00.000Z'], ['D', '2026-10-25T01:30:00.000Z'],
    ]);
    // A window is in instants: the CEST row of 03:30 local is outside a window ending 01:00 UTC.
    const recs = recordsFromSettlementReports([csv], { from: new Date('2027-03-27T23:00:00Z'), to: new Date('2027-03-28T01:00:00Z') }, ZONE);
    expect(recs.map((r) => r.providerRef)).toEqual(['A']);
  });

  it('refuses an unknown abbreviation, or one the account zone is not in at that time, naming the report and row', () => {
    const unknown = [HEAD, line('A', '2027-01-10 10:00:00', 'CET'), line('B', '2027-01-10 11:00:00', 'XYZ')].join('\r\n');
    expect(() => settlementLinesFromReports([{ name: 'settlement_detail_report_batch_9.csv', text: unknown }], null, ZONE)).toThrow(/settlement_detail_report_batch_9\.csv row 3: unknown TimeZone "XYZ"/);
    const wrong = [HEAD, line('A', '2027-07-10 10:00:00', 'CET')].join('\r\n');
    expect(() => settlementLinesFromReports([{ name: 'r.csv', text: wrong }], null, ZONE)).toThrow(/r\.csv row 2: TimeZone "CET" .* not the account zone Europe\/Amsterdam/);
    expect(() => reportInstant('2027-07-10 10:00:00', 'BST', ZONE, 'x')).toThrow(/not the account zone/);
    expect(reportInstant('2027-07-10 10:00:00', 'BST', 'Europe/London', 'x')).toBe('2027-07-10T09:00:00.000Z');
    // One abbreviation, two zones: the account's decides.
    expect(reportInstant('2027-07-10 10:00:00', 'IST', 'Europe/Dublin', 'x')).toBe('2027-07-10T09:00:00.000Z');
    expect(reportInstant('2027-07-10 10:00:00', 'IST', 'Asia/Kolkata', 'x')).toBe('2027-07-10T04:30:00.000Z');
    // The hour the spring change skips does not exist in CET or CEST.
    expect(() => reportInstant('2027-03-28 02:30:00', 'CET', ZONE, 'x')).toThrow(/not the account zone/);
  });

  it('the sandbox writes a batch of an Amsterdam day that crosses the change in its local time, and the connector reads it back', () => {
    const payment = { pspReference: 'PSP1', merchantReference: 'att_1', merchantAccount: 'Shop', paymentMethod: 'visa', amount: { value: 1_000, currency: 'EUR' } } as unknown as PaymentRecord;
    const instants = [Date.parse('2027-03-27T23:30:00Z'), Date.parse('2027-03-28T00:59:59Z'), Date.parse('2027-03-28T01:00:00Z'), Date.parse('2027-03-28T21:59:59Z')];
    const state = new AdyenSandboxState();
    for (const [i, ms] of instants.entries()) state.book({ bookedMs: ms, type: 'Settled', payment, modificationReference: `CAP${i}`, amount: 1_000 });
    state.book({ bookedMs: Date.parse('2027-03-28T22:00:00Z'), type: 'Settled', payment, modificationReference: 'NEXT_DAY', amount: 1_000 });
    const batch = batchOf(ZONE, instants[0]!);
    expect(new Set(instants.map((ms) => batchOf(ZONE, ms)))).toEqual(new Set([batch]));
    const name = `settlement_detail_report_batch_${batch}.csv`;
    const request = matchReportPath(`/reports/download/MerchantAccount/Shop/${name}`, ZONE)!;
    expect([request.dayStartMs, request.dayEndMs]).toEqual([zoneDayStartMs(ZONE, '2027-03-28'), Date.parse('2027-03-28T22:00:00Z')]);
    expect(request.dayEndMs - request.dayStartMs).toBe(23 * 3_600_000); // the spring day is 23 hours long
    const csv = settlementReport(state, request, Date.parse('2027-03-30T00:00:00Z'), 0, ZONE)!;
    expect(csv).toContain('2027-03-28 00:30:00,CET');
    expect(csv).toContain('2027-03-28 03:00:00,CEST');
    const lines = settlementLinesFromReports([{ name, text: csv }], null, ZONE);
    expect(lines.map((l) => Date.parse(l.bookedAt))).toEqual(instants);
    expect(lines.every((l) => l.batch === String(batch))).toBe(true);
  });
});

describe('report file names', () => {
  it('accepts only the known patterns, and the download URL keeps the configured origin', () => {
    expect(parseReportFileName('settlement_detail_report_batch_12.csv')).toEqual({ kind: 'settlement_batch', fileName: 'settlement_detail_report_batch_12.csv', batch: 12 });
    expect(parseReportFileName('payments_accounting_report_2027_03_28.csv')?.kind).toBe('accounting_daily');
    for (const bad of ['payments_accounting_report_2027_02_30.csv', '../settlement_detail_report_batch_1.csv', 'settlement_detail_report_batch_1.csv?x=https://evil', 'https://evil.example/settlement_detail_report_batch_1.csv', 'settlement_detail_report_batch_0.csv', 'dispute_report_2027_01_01.csv']) {
      expect(parseReportFileName(bad), bad).toBeNull();
      expect(() => reportDownloadUrl('https://ca-test.adyen.com', 'Shop', bad)).toThrow(RangeError);
    }
    expect(reportDownloadUrl('https://ca-test.adyen.com', 'My Shop', 'settlement_detail_report_batch_3.csv')).toBe('https://ca-test.adyen.com/reports/download/MerchantAccount/My%20Shop/settlement_detail_report_batch_3.csv');
  });
});

describe('payments accounting report records', () => {
  const HEADA = 'Company Account,Merchant Account,Psp Reference,Merchant Reference,Payment Method,Booking Date,TimeZone,Main Currency,Main Amount,Record Type,Payment Currency,Received (PC),Authorised (PC),Captured (PC),Settlement Currency,Payable (SC),Commission (SC),Modification Reference';
  const rowA = (psp: string, at: string, tz: string, type: string, amount: string, mod = '') => `Co,Shop,${psp},att_${psp},visa,${at},${tz},EUR,${amount},${type},EUR,,,,EUR,,,${mod}`;
  it('folds every record type into the payment status and amounts, in booking order across reports', () => {
    const day1 = [HEADA, rowA('P', '2027-03-27 10:00:00', 'CET', 'Received', '50.00'), rowA('P', '2027-03-27 10:00:01', 'CET', 'Authorised', '50.00'), rowA('P', '2027-03-27 11:00:00', 'CET', 'SentForSettle', '50.00')].join('\r\n');
    const day2 = [HEADA, rowA('P', '2027-03-28 09:00:00', 'CEST', 'Settled', '50.00'), rowA('P', '2027-03-28 10:00:00', 'CEST', 'SentForRefund', '20.00'), rowA('P', '2027-03-28 10:30:00', 'CEST', 'Refunded', '20.00'),
      rowA('P', '2027-03-28 12:00:00', 'CEST', 'RefundedReversed', '5.00'), rowA('P', '2027-03-28 13:00:00', 'CEST', 'Chargeback', '30.00'), rowA('Q', '2027-03-28 13:00:00', 'CEST', 'Refused', '9.00')].join('\r\n');
    const window = { from: new Date('2027-03-27T22:00:00Z'), to: new Date('2027-03-28T22:00:00Z') };
    const records = recordsFromAccountingReports([{ name: 'payments_accounting_report_2027_03_28.csv', text: day2 }, { name: 'payments_accounting_report_2027_03_27.csv', text: day1 }], window, ZONE);
    expect(records.find((r) => r.providerRef === 'P')).toMatchObject({ status: 'Chargeback', authorized: 5_000, captured: 5_000, refunded: 1_500, refundsReturned: 500, disputed: true, createdAt: '2027-03-27T09:00:00.000Z' });
    expect(records.find((r) => r.providerRef === 'Q')).toMatchObject({ status: 'Refused', captured: 0 });
    // A second chargeback after the reversal: withdrawn again.
    const day3 = [HEADA, rowA('P', '2027-03-28 14:00:00', 'CEST', 'ChargebackReversed', '30.00'), rowA('P', '2027-03-28 15:00:00', 'CEST', 'SecondChargeback', '30.00')].join('\r\n');
    const after = recordsFromAccountingReports([day2, day3], window, ZONE).find((r) => r.providerRef === 'P');
    expect([after?.status, after?.disputed]).toEqual(['SecondChargeback', true]);
    const reversed = recordsFromAccountingReports([day2, [HEADA, rowA('P', '2027-03-28 14:00:00', 'CEST', 'ChargebackReversed', '30.00')].join('\r\n')], window, ZONE).find((r) => r.providerRef === 'P');
    expect([reversed?.status, reversed?.disputed]).toEqual(['ChargebackReversed', undefined]);
    // Day 1 alone is outside the window: its payment appears only through day 2's records.
    expect(recordsFromAccountingReports([day1], window, ZONE)).toEqual([]);
  });
});
