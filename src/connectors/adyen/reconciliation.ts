// Reconciliation: Adyen has no list-payments API; it announces report files (REPORT_AVAILABLE), which
// the connector downloads by name and folds per pspReference (src/reconcile/provider-reports.ts).
// Amounts in the report are decimal strings in major units; they are read back to minor units by
// string arithmetic, never through a float.

import https from 'node:https';
import { ADYEN_EXPONENTS, fromAdyenValue } from './currencies.ts';
import type { ReconciliationRecord, ReconciliationWindow, SettlementLine } from '../contract.ts';
import { reportDownloadUrl, reportInstant } from './report-files.ts';

/** A downloaded report: its file name (for errors) and text. A bare string is an unnamed report. */
export type ReportText = string | { readonly name: string; readonly text: string };

function textOf(r: ReportText): { name: string; text: string } {
  return typeof r === 'string' ? { name: 'report', text: r } : r;
}

/**
 * A row's `Creation Date` as an instant: the local time in the account's zone, checked against the
 * row's TimeZone abbreviation. A report without a TimeZone column is read as UTC.
 */
function rowInstant(line: readonly string[], created: number, timeZoneCol: number, zone: string, where: string): string {
  const local = line[created] ?? '';
  const abbreviation = timeZoneCol < 0 ? 'UTC' : (line[timeZoneCol] ?? '');
  return reportInstant(local, abbreviation, zone, where);
}

export class ReconciliationFetchError extends Error {
  override readonly name = 'ReconciliationFetchError';
}


/** RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows.filter((r) => r.some((f) => f !== ''));
}

/**
 * A report's major-unit text -> gateway (ISO) minor units. The report writes amounts with Adyen's
 * decimals ("5000.00" CLP, "12345" IDR): the text is read as Adyen's minor units first, then
 * converted like any Adyen value, so a fraction ISO cannot hold is refused, never rounded.
 * Null when the text is not such an amount.
 */
export function minorUnits(text: string, currency: string): number | null {
  if (text.trim() === '') return 0;
  const exponent = ADYEN_EXPONENTS[currency];
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (exponent === undefined || m === null) return null;
  const fraction = (m[2] ?? '').padEnd(exponent, '0');
  if (fraction.length > exponent) return null;
  const value = Number(`${m[1] ?? '0'}${fraction}`);
  if (!Number.isSafeInteger(value)) return null;
  const iso = fromAdyenValue(value, currency);
  return iso.ok ? iso.value : null;
}

interface Fold {
  providerRef: string;
  attemptId: string | null;
  status: string;
  currency: string;
  authorized: number;
  captured: number;
  refunded: number;
  createdAt: string;
  disputed: boolean;
  failedCaptures: string[];
  returned: number;
  /** A row of the payment is booked in the window: the window concerns it. */
  inWindow: boolean;
  /** Its authorisation row was read: the fold holds the payment's whole history. */
  hasStart: boolean;
}

/**
 * Dispute rows, settlement and accounting reports alike: whether the payment's funds are withdrawn
 * for a dispute after the row. A chargeback withdraws, its reversal reinstates, a second chargeback
 * (the issuer declined the defense) withdraws again.
 */
const DISPUTE_ROWS: Readonly<Record<string, boolean>> = { Chargeback: true, SecondChargeback: true, ChargebackReversed: false };

/** A column's index by its header; a missing column throws: a report we misread is worse than none. */
function columnOf(head: readonly string[]): (name: string) => number {
  return (name) => {
    const i = head.indexOf(name);
    if (i < 0) throw new ReconciliationFetchError(`settlement report has no column "${name}"`);
    return i;
  };
}

/**
 * Folds report rows into one record per pspReference, for every payment with a row (of any type)
 * booked in the window; rows outside the window (earlier reports read for a payment's history)
 * count toward the record's amounts. Unreadable rows throw: a report we misread is worse than none.
 */
export function recordsFromSettlementReports(csvs: readonly ReportText[], window: ReconciliationWindow, zone = 'UTC'): ReconciliationRecord[] {
  return [...foldReports(csvs, window, zone).values()].filter((f) => f.inWindow).map(recordOf);
}

/** pspReferences with rows in the window whose authorisation row is not among the rows read: their history starts earlier. */
export function refsMissingHistory(csvs: readonly ReportText[], window: ReconciliationWindow, zone = 'UTC'): Set<string> {
  return new Set([...foldReports(csvs, window, zone).values()].filter((f) => f.inWindow && !f.hasStart).map((f) => f.providerRef));
}

function foldReports(csvs: readonly ReportText[], window: ReconciliationWindow, zone: string): Map<string, Fold> {
  const from = window.from.toISOString();
  const to = window.to.toISOString();
  const folds = new Map<string, Fold>();
  for (const report of csvs) {
    const { name, text } = textOf(report);
    const [head, ...lines] = parseCsv(text);
    if (head === undefined) continue;
    const col = columnOf(head);
    const c = { psp: col('Psp Reference'), ref: col('Merchant Reference'), created: col('Creation Date'), timeZone: head.indexOf('TimeZone'), type: col('Type'), currency: col('Gross Currency'), debit: col('Gross Debit (GC)'), credit: col('Gross Credit (GC)'), modification: col('Modification Reference') };
    for (const [n, line] of lines.entries()) {
      const psp = line[c.psp] ?? '';
      const currency = line[c.currency] ?? '';
      const debit = minorUnits(line[c.debit] ?? '', currency);
      const credit = minorUnits(line[c.credit] ?? '', currency);
      if (psp === '' || debit === null || credit === null) throw new ReconciliationFetchError(`unreadable settlement row: ${line.join(',')}`);
      const createdAt = rowInstant(line, c.created, c.timeZone, zone, `${name} row ${n + 2}`);
      const fold = folds.get(psp) ?? { providerRef: psp, attemptId: line[c.ref] || null, status: '', currency, authorized: 0, captured: 0, refunded: 0, createdAt, disputed: false, failedCaptures: [], returned: 0, inWindow: false, hasStart: false };
      const type = line[c.type] ?? '';
      if (type === 'Authorised') {
        fold.authorized += credit;
        fold.hasStart = true;
      } else if (type === 'Settled') fold.captured += credit;
      else if (type === 'CaptureFailed') {
        fold.captured -= debit;
        fold.failedCaptures.push(line[c.modification] ?? '');
      }
      else if (type === 'Refunded') fold.refunded += debit;
      else if (type === 'RefundedReversed') {
        fold.refunded -= credit;
        fold.returned += credit;
      }
      else if (DISPUTE_ROWS[type] !== undefined) fold.disputed = DISPUTE_ROWS[type];
      fold.status = type;
      if (createdAt < fold.createdAt) fold.createdAt = createdAt;
      if (createdAt >= from && createdAt < to) fold.inWindow = true;
      folds.set(psp, fold);
    }
  }
  return folds;
}

function recordOf(f: Fold): ReconciliationRecord {
  // A settlement without an Authorised row (a live report) still proves the amount was authorised.
  const authorized = Math.max(f.authorized, f.captured);
  return {
    providerRef: f.providerRef, attemptId: f.attemptId, status: f.status, amount: authorized, currency: f.currency, authorized, captured: f.captured, refunded: f.refunded, createdAt: f.createdAt,
    ...(f.disputed ? { disputed: true } : {}), ...(f.failedCaptures.length > 0 ? { failedCaptures: f.failedCaptures } : {}), refundsReturned: f.returned,
  };
}

export interface ReportSource {
  readonly baseUrl: string;
  readonly merchantAccount: string;
  /** The report service user's credential, with the config path that names it (for findings). */
  readonly credential: ReportCredential;
  readonly ca: string | undefined;
  readonly timeoutMs: number;
  /** The account's IANA zone: report times are local to it. */
  readonly zone: string;
}

export type ReportCredential =
  | { readonly kind: 'api_key'; readonly apiKey: string; readonly setting: string }
  | { readonly kind: 'basic_auth'; readonly username: string; readonly password: string; readonly setting: string };

/** Adyen refused the report credential (401: unknown; 403: a user without the Merchant Report Download role). */
export class ReportAccessError extends Error {
  override readonly name = 'ReportAccessError';
  constructor(
    readonly status: number,
    /** The config setting holding the credential that was refused. */
    readonly setting: string,
    fileName: string,
  ) {
    super(`report download of ${fileName} refused with HTTP ${status}: ${status === 403 ? 'the report user lacks the Merchant Report Download role' : 'Adyen does not accept the credential'} (${setting})`);
  }
}

function authHeaders(credential: ReportCredential): Record<string, string> {
  if (credential.kind === 'api_key') return { 'x-api-key': credential.apiKey };
  return { authorization: `Basic ${Buffer.from(`${credential.username}:${credential.password}`, 'utf8').toString('base64')}` };
}

/**
 * One announced report by file name, from the configured origin and merchant account only (never a
 * URL from the notification). Null when the report is not there (404); a 401/403 is a
 * ReportAccessError naming the credential. Live Adyen serves only the files it announces: nothing
 * is ever asked for by a name we make up (a UTC day).
 */
export function downloadReportFile(source: ReportSource, fileName: string): Promise<string | null> {
  const url = reportDownloadUrl(source.baseUrl, source.merchantAccount, fileName);
  return new Promise((resolve, reject) => {
    const req = https.get(url, { headers: authHeaders(source.credential), ...(source.ca !== undefined && { ca: source.ca }), timeout: source.timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        if (!res.complete) return reject(new ReconciliationFetchError(`report download cut off: ${url}`));
        if (res.statusCode === 404) return resolve(null); // announced, not served yet
        if (res.statusCode === 401 || res.statusCode === 403) return reject(new ReportAccessError(res.statusCode, source.credential.setting, fileName));
        if (res.statusCode !== 200) return reject(new ReconciliationFetchError(`report download ${url}: HTTP ${res.statusCode ?? '?'}`));
        resolve(Buffer.concat(chunks).toString('utf8'));
      });
    });
    req.on('timeout', () => req.destroy(new ReconciliationFetchError(`report download timed out: ${url}`)));
    req.on('error', (e) => reject(e instanceof ReconciliationFetchError ? e : new ReconciliationFetchError(`report download ${url}: ${e.message}`, { cause: e })));
  });
}

/** Rows that book no money: the sandbox's Authorised / Cancelled additions. */
const NOT_MONEY = new Set(['Authorised', 'Cancelled', 'Received', 'SentForSettle', 'SentForRefund']);

/**
 * The money-moving rows booked in the window, one SettlementLine each. gross = credit - debit in
 * the gross currency; fee = gross - net (the net columns are what the bank receives, so every
 * commission, markup and scheme fee is in it). A row settled in another currency than it was
 * booked in is refused: converting it is not something to guess.
 */
export function settlementLinesFromReports(csvs: readonly ReportText[], window: ReconciliationWindow | null, zone = 'UTC'): SettlementLine[] {
  const out: SettlementLine[] = [];
  const from = window?.from.toISOString() ?? '';
  const to = window?.to.toISOString() ?? '\uffff';
  for (const report of csvs) {
    const { name, text } = textOf(report);
    const [head, ...lines] = parseCsv(text);
    if (head === undefined) continue;
    const col = columnOf(head);
    const c = {
      psp: col('Psp Reference'), ref: col('Merchant Reference'), created: col('Creation Date'), type: col('Type'), modification: col('Modification Reference'),
      currency: col('Gross Currency'), debit: col('Gross Debit (GC)'), credit: col('Gross Credit (GC)'),
      netCurrency: col('Net Currency'), netDebit: col('Net Debit (NC)'), netCredit: col('Net Credit (NC)'), batch: col('Batch Number'),
      timeZone: head.indexOf('TimeZone'),
    };
    const seen = new Map<string, number>();
    for (const [rowIndex, line] of lines.entries()) {
      const type = line[c.type] ?? '';
      if (NOT_MONEY.has(type)) continue;
      const psp = line[c.psp] ?? '';
      const currency = line[c.currency] ?? '';
      const [debit, credit, netDebit, netCredit] = [c.debit, c.credit, c.netDebit, c.netCredit].map((i) => minorUnits(line[i] ?? '', currency));
      if (psp === '' || debit == null || credit == null || netDebit == null || netCredit == null) throw new ReconciliationFetchError(`unreadable settlement row: ${line.join(',')}`);
      if ((line[c.netCurrency] ?? currency) !== currency) throw new ReconciliationFetchError(`settlement row in ${currency} settled in ${line[c.netCurrency] ?? '?'}: not supported: ${line.join(',')}`);
      const modificationRef = line[c.modification] || null;
      const batch = line[c.batch] ?? '';
      const key = `${batch}:${psp}:${type}:${modificationRef ?? '-'}`;
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      const bookedAt = rowInstant(line, c.created, c.timeZone, zone, `${name} row ${rowIndex + 2}`);
      if (bookedAt < from || bookedAt >= to) continue;
      const gross = credit - debit;
      out.push({ lineId: n === 1 ? key : `${key}#${n}`, providerRef: psp, attemptId: line[c.ref] || null, modificationRef, type, currency, gross, fee: gross - (netCredit - netDebit), bookedAt, batch });
    }
  }
  return out;
}

/**
 * Records from the daily payments accounting reports: one per payment with a record of any type
 * booked in the window (Received, Authorised, SentForSettle, Settled, SentForRefund, Refunded,
 * RefundedReversed, Chargeback, ChargebackReversed, SecondChargeback, CaptureFailed, Cancelled, Refused, Expired,
 * Error, …), its status the latest record type, its amounts those of the money-moving ones (Main
 * Amount), every report read counting toward the payment's history. Booking Date is local to the
 * account zone, checked against the row's TimeZone.
 */
export function recordsFromAccountingReports(reports: readonly ReportText[], window: ReconciliationWindow, zone: string): ReconciliationRecord[] {
  const from = window.from.toISOString();
  const to = window.to.toISOString();
  const folds = new Map<string, Fold>();
  const rows: { psp: string; ref: string; at: string; type: string; currency: string; amount: number; modification: string }[] = [];
  for (const report of reports) {
    const { name, text } = textOf(report);
    const [head, ...lines] = parseCsv(text);
    if (head === undefined) continue;
    const col = (n: string): number => {
      const i = head.indexOf(n);
      if (i < 0) throw new ReconciliationFetchError(`${name}: payments accounting report has no column "${n}"`);
      return i;
    };
    const c = { psp: col('Psp Reference'), ref: col('Merchant Reference'), booked: col('Booking Date'), timeZone: col('TimeZone'), type: col('Record Type'), currency: col('Main Currency'), amount: col('Main Amount'), modification: head.indexOf('Modification Reference') };
    for (const [i, line] of lines.entries()) {
      const where = `${name} row ${i + 2}`;
      const currency = line[c.currency] ?? '';
      const amount = minorUnits((line[c.amount] ?? '').replace(/^-/, ''), currency);
      const psp = line[c.psp] ?? '';
      if (psp === '' || amount === null) throw new ReconciliationFetchError(`${where}: unreadable accounting row: ${line.join(',')}`);
      rows.push({ psp, ref: line[c.ref] ?? '', at: rowInstant(line, c.booked, c.timeZone, zone, where), type: line[c.type] ?? '', currency, amount, modification: c.modification < 0 ? '' : (line[c.modification] ?? '') });
    }
  }
  // Record types in booking order, whatever order the reports were read in.
  rows.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  for (const r of rows) {
    const fold = folds.get(r.psp) ?? { providerRef: r.psp, attemptId: r.ref || null, status: '', currency: r.currency, authorized: 0, captured: 0, refunded: 0, createdAt: r.at, disputed: false, failedCaptures: [], returned: 0, inWindow: false, hasStart: false };
    switch (r.type) {
      case 'Authorised': fold.authorized += r.amount; fold.hasStart = true; break;
      case 'Received': fold.hasStart = true; break;
      case 'Settled': fold.captured += r.amount; break;
      case 'CaptureFailed': fold.captured -= r.amount; fold.failedCaptures.push(r.modification); break;
      case 'Refunded': fold.refunded += r.amount; break;
      case 'RefundedReversed': fold.refunded -= r.amount; fold.returned += r.amount; break;
      case 'Chargeback':
      case 'SecondChargeback':
      case 'ChargebackReversed':
        fold.disputed = DISPUTE_ROWS[r.type]!; break;
      default: break; // SentForSettle, SentForRefund, Cancelled, Refused, Expired, Error, …: a status, no money of their own
    }
    fold.status = r.type;
    if (r.at >= from && r.at < to) fold.inWindow = true;
    folds.set(r.psp, fold);
  }
  return [...folds.values()].filter((f) => f.inWindow).map(recordOf);
}
