// The reports live Adyen serves, by the names it announces (REPORT_AVAILABLE):
// GET /reports/download/MerchantAccount/{merchantAccount}/settlement_detail_report_batch_{N}.csv
// and .../payments_accounting_report_{YYYY_MM_DD}.csv, each once its account-zone day has closed
// plus `availabilityDelayMs` (404 before). No file named by UTC day: live Adyen serves none. Amounts are decimal
// strings in major units, as Adyen writes them. Settled rows carry the commission in force when
// they were booked (setSettlementCommission; none by default: net = gross); other rows none. The sandbox books
// Settled when the capture succeeds, so a capture the scheme rejects later (CAPTURE_FAILED) shows
// as a CaptureFailed debit row for the same modification.

import { adyenDecimals } from './currencies.ts';
import { nextCalendarDay, zoneDay, zoneLocalTime, zoneMidnight } from './report-zone.ts';
import type { AdyenSandboxState, SettlementBooking } from './state.ts';

export const SETTLEMENT_REPORT_COLUMNS = [
  'Company Account', 'Merchant Account', 'Psp Reference', 'Merchant Reference', 'Payment Method', 'Creation Date', 'TimeZone',
  'Type', 'Modification Reference', 'Gross Currency', 'Gross Debit (GC)', 'Gross Credit (GC)', 'Exchange Rate', 'Net Currency',
  'Net Debit (NC)', 'Net Credit (NC)', 'Commission (NC)', 'Batch Number',
] as const;

const BATCH_PATH = /^\/reports\/download\/MerchantAccount\/([^/]+)\/settlement_detail_report_batch_([1-9]\d{0,8})\.csv$/;
const ACCOUNTING_PATH = /^\/reports\/download\/MerchantAccount\/([^/]+)\/payments_accounting_report_(\d{4})_(\d{2})_(\d{2})\.csv$/;
const DAY_MS = 86_400_000;

export interface ReportRequest {
  readonly merchantAccount: string;
  /** settlement_batch: batch N = the Nth local day since 1970; accounting: the daily payments accounting report. */
  readonly kind: 'settlement_batch' | 'accounting';
  readonly dayStartMs: number;
  readonly dayEndMs: number;
}

/** The batch number of an instant: the account-zone calendar day, counted from 1970-01-01. */
export function batchOf(zone: string, ms: number): number {
  return Math.floor(Date.parse(`${zoneDay(zone, ms)}T00:00:00Z`) / DAY_MS);
}

export function batchDay(batch: number): string {
  return new Date(batch * DAY_MS).toISOString().slice(0, 10);
}

export function matchReportPath(path: string, zone = 'UTC'): ReportRequest | null {
  const local = (day: string): { dayStartMs: number; dayEndMs: number } => ({ dayStartMs: zoneMidnight(zone, day), dayEndMs: zoneMidnight(zone, nextCalendarDay(day)) });
  const b = BATCH_PATH.exec(path);
  if (b !== null) return { merchantAccount: decodeURIComponent(b[1] ?? ''), kind: 'settlement_batch', ...local(batchDay(Number(b[2]))) };
  const a = ACCOUNTING_PATH.exec(path);
  if (a === null) return null;
  const [, account, y, mo, d] = a;
  const day = `${y}-${mo}-${d}`;
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d));
  if (Number.isNaN(utc) || account === undefined || new Date(utc).toISOString().slice(0, 10) !== day) return null;
  return { merchantAccount: decodeURIComponent(account), kind: 'accounting', ...local(day) };
}

/** Adyen minor units -> "12.34", with Adyen's decimals ("5000.00" CLP, "12345" IDR), by string arithmetic. */
export function majorUnits(minor: number, currency: string): string {
  const exponent = adyenDecimals(currency) ?? 2;
  if (exponent === 0) return String(minor);
  const digits = String(minor).padStart(exponent + 1, '0');
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

function row(b: SettlementBooking, zone: string): string[] {
  const batch = batchOf(zone, b.bookedMs);
  const debit = b.type === 'Refunded' || b.type === 'Chargeback' || b.type === 'SecondChargeback' || b.type === 'Cancelled' || b.type === 'CaptureFailed';
  const amount = majorUnits(b.amount, b.payment.amount.currency);
  const currency = b.payment.amount.currency;
  const fee = b.fee ?? 0;
  const net = majorUnits(b.amount - fee, currency);
  const { local: created, abbreviation } = zoneLocalTime(zone, b.bookedMs);
  return [
    'SwitchyardSandbox', b.payment.merchantAccount, b.payment.pspReference, b.payment.merchantReference, b.payment.paymentMethod, created, abbreviation,
    b.type, b.modificationReference, currency, debit ? amount : '', debit ? '' : amount, '1', currency, debit ? amount : '', debit ? '' : net, majorUnits(fee, currency), String(batch),
  ];
}

/**
 * The CSV for one report, or null when it does not exist yet: a batch and a daily accounting report
 * exist only once their day has closed (plus the availability delay), as Adyen generates them then.
 */
export function settlementReport(state: AdyenSandboxState, request: ReportRequest, nowMs: number, availabilityDelayMs: number, zone = 'UTC'): string | null {
  const cutoff = nowMs - availabilityDelayMs;
  if (request.dayEndMs > cutoff) return null;
  const inReport = state.bookings.filter((b) => b.bookedMs >= request.dayStartMs && b.bookedMs < request.dayEndMs && b.bookedMs <= cutoff && b.payment.merchantAccount === request.merchantAccount);
  if (request.kind === 'accounting') return accountingReport(inReport, zone);
  const lines = inReport.map((b) => row(b, zone).map(csvField).join(','));
  return `${[SETTLEMENT_REPORT_COLUMNS.join(','), ...lines].join('\r\n')}\r\n`;
}

export const ACCOUNTING_REPORT_COLUMNS = [
  'Company Account', 'Merchant Account', 'Psp Reference', 'Merchant Reference', 'Payment Method', 'Booking Date', 'TimeZone',
  'Main Currency', 'Main Amount', 'Record Type', 'Payment Currency', 'Received (PC)', 'Authorised (PC)', 'Captured (PC)',
  'Settlement Currency', 'Payable (SC)', 'Commission (SC)', 'Modification Reference',
] as const;

/** Record types of the payments accounting report for a booking: a capture is SentForSettle then Settled, a refund SentForRefund then Refunded. */
function recordTypes(type: SettlementBooking['type']): string[] {
  if (type === 'Settled') return ['SentForSettle', 'Settled'];
  if (type === 'Refunded') return ['SentForRefund', 'Refunded'];
  if (type === 'Authorised') return ['Received', 'Authorised'];
  return [type];
}

function accountingReport(bookings: readonly SettlementBooking[], zone: string): string {
  const lines: string[] = [];
  for (const b of bookings) {
    const currency = b.payment.amount.currency;
    const amount = majorUnits(b.amount, currency);
    const fee = majorUnits(b.fee ?? 0, currency);
    const { local, abbreviation } = zoneLocalTime(zone, b.bookedMs);
    for (const recordType of recordTypes(b.type)) {
      const received = recordType === 'Received' ? amount : '';
      const authorised = recordType === 'Authorised' ? amount : '';
      const captured = recordType === 'SentForSettle' || recordType === 'Settled' ? amount : '';
      const payable = recordType === 'Settled' ? majorUnits(b.amount - (b.fee ?? 0), currency) : '';
      lines.push([
        'SwitchyardSandbox', b.payment.merchantAccount, b.payment.pspReference, b.payment.merchantReference, b.payment.paymentMethod, local, abbreviation,
        currency, amount, recordType, currency, received, authorised, captured, currency, payable, recordType === 'Settled' ? fee : '', b.modificationReference,
      ].map(csvField).join(','));
    }
  }
  return `${[ACCOUNTING_REPORT_COLUMNS.join(','), ...lines].join('\r\n')}\r\n`;
}
