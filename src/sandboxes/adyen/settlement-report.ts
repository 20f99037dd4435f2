// The settlement-details report (CSV), one file per UTC booking day:
// GET /reports/download/MerchantAccount/{merchantAccount}/settlement_detail_report_{YYYY_MM_DD}.csv
// A row appears once `availabilityDelayMs` has passed since it was booked (sandbox clock); a day
// that has not begun that long ago is 404, as a report not generated yet. Amounts are decimal
// strings in major units, as Adyen writes them. Settled rows carry the commission in force when
// they were booked (setSettlementCommission; none by default: net = gross); other rows none. The sandbox books
// Settled when the capture succeeds, so a capture the scheme rejects later (CAPTURE_FAILED) shows
// as a CaptureFailed debit row for the same modification.

import { adyenDecimals } from './currencies.ts';
import type { AdyenSandboxState, SettlementBooking } from './state.ts';

export const SETTLEMENT_REPORT_COLUMNS = [
  'Company Account', 'Merchant Account', 'Psp Reference', 'Merchant Reference', 'Payment Method', 'Creation Date', 'TimeZone',
  'Type', 'Modification Reference', 'Gross Currency', 'Gross Debit (GC)', 'Gross Credit (GC)', 'Exchange Rate', 'Net Currency',
  'Net Debit (NC)', 'Net Credit (NC)', 'Commission (NC)', 'Batch Number',
] as const;

const REPORT_PATH = /^\/reports\/download\/MerchantAccount\/([^/]+)\/settlement_detail_report_(\d{4})_(\d{2})_(\d{2})\.csv$/;
const DAY_MS = 86_400_000;

export interface ReportRequest {
  readonly merchantAccount: string;
  readonly dayStartMs: number;
}

export function matchReportPath(path: string): ReportRequest | null {
  const m = REPORT_PATH.exec(path);
  if (m === null) return null;
  const [, account, y, mo, d] = m;
  const dayStartMs = Date.UTC(Number(y), Number(mo) - 1, Number(d));
  return Number.isNaN(dayStartMs) || account === undefined ? null : { merchantAccount: decodeURIComponent(account), dayStartMs };
}

export function settlementReportFileName(date: Date): string {
  const iso = date.toISOString();
  return `settlement_detail_report_${iso.slice(0, 4)}_${iso.slice(5, 7)}_${iso.slice(8, 10)}.csv`;
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

function row(b: SettlementBooking, batch: number): string[] {
  const debit = b.type === 'Refunded' || b.type === 'Chargeback' || b.type === 'Cancelled' || b.type === 'CaptureFailed';
  const amount = majorUnits(b.amount, b.payment.amount.currency);
  const currency = b.payment.amount.currency;
  const fee = b.fee ?? 0;
  const net = majorUnits(b.amount - fee, currency);
  const created = new Date(b.bookedMs).toISOString().replace('T', ' ').slice(0, 19);
  return [
    'SwitchyardSandbox', b.payment.merchantAccount, b.payment.pspReference, b.payment.merchantReference, b.payment.paymentMethod, created, 'UTC',
    b.type, b.modificationReference, currency, debit ? amount : '', debit ? '' : amount, '1', currency, debit ? amount : '', debit ? '' : net, majorUnits(fee, currency), String(batch),
  ];
}

/** The CSV for one day, or null when that report does not exist yet. */
export function settlementReport(state: AdyenSandboxState, request: ReportRequest, nowMs: number, availabilityDelayMs: number): string | null {
  const cutoff = nowMs - availabilityDelayMs;
  if (request.dayStartMs > cutoff) return null;
  const dayEnd = request.dayStartMs + DAY_MS;
  const batch = Math.floor(request.dayStartMs / DAY_MS) % 10_000;
  const lines = state.bookings
    .filter((b) => b.bookedMs >= request.dayStartMs && b.bookedMs < dayEnd && b.bookedMs <= cutoff && b.payment.merchantAccount === request.merchantAccount)
    .map((b) => row(b, batch).map(csvField).join(','));
  return `${[SETTLEMENT_REPORT_COLUMNS.join(','), ...lines].join('\r\n')}\r\n`;
}
