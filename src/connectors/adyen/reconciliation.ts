// Reconciliation: Adyen has no list-payments API, so the connector downloads the daily
// settlement-details reports (CSV) that cover the window and folds their rows per pspReference.
// Amounts in the report are decimal strings in major units; they are read back to minor units by
// string arithmetic, never through a float.

import https from 'node:https';
import { CURRENCY_EXPONENTS } from '../../core/money.ts';
import type { ReconciliationRecord, ReconciliationWindow } from '../contract.ts';

export class ReconciliationFetchError extends Error {
  override readonly name = 'ReconciliationFetchError';
}

const DAY_MS = 86_400_000;

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

/** "12.34" -> 1234 for a 2-decimal currency; null when the text is not such an amount. */
export function minorUnits(text: string, currency: string): number | null {
  if (text.trim() === '') return 0;
  const exponent = CURRENCY_EXPONENTS[currency];
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (exponent === undefined || m === null) return null;
  const fraction = (m[2] ?? '').padEnd(exponent, '0');
  if (fraction.length > exponent) return null;
  const value = Number(`${m[1] ?? '0'}${fraction}`);
  return Number.isSafeInteger(value) ? value : null;
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
}

/** Folds report rows into one record per pspReference. Unreadable rows throw: a report we misread is worse than none. */
export function recordsFromSettlementReports(csvs: readonly string[], window: ReconciliationWindow): ReconciliationRecord[] {
  const folds = new Map<string, Fold>();
  for (const csv of csvs) {
    const [head, ...lines] = parseCsv(csv);
    if (head === undefined) continue;
    const col = (name: string): number => {
      const i = head.indexOf(name);
      if (i < 0) throw new ReconciliationFetchError(`settlement report has no column "${name}"`);
      return i;
    };
    const c = { psp: col('Psp Reference'), ref: col('Merchant Reference'), created: col('Creation Date'), type: col('Type'), currency: col('Gross Currency'), debit: col('Gross Debit (GC)'), credit: col('Gross Credit (GC)') };
    for (const line of lines) {
      const psp = line[c.psp] ?? '';
      const currency = line[c.currency] ?? '';
      const debit = minorUnits(line[c.debit] ?? '', currency);
      const credit = minorUnits(line[c.credit] ?? '', currency);
      if (psp === '' || debit === null || credit === null) throw new ReconciliationFetchError(`unreadable settlement row: ${line.join(',')}`);
      const createdAt = new Date(`${(line[c.created] ?? '').replace(' ', 'T')}Z`).toISOString();
      const fold = folds.get(psp) ?? { providerRef: psp, attemptId: line[c.ref] || null, status: '', currency, authorized: 0, captured: 0, refunded: 0, createdAt, disputed: false };
      const type = line[c.type] ?? '';
      if (type === 'Authorised') fold.authorized += credit;
      else if (type === 'Settled') fold.captured += credit;
      else if (type === 'Refunded') fold.refunded += debit;
      else if (type === 'RefundedReversed') fold.refunded -= credit;
      else if (type === 'Chargeback') fold.disputed = true;
      else if (type === 'ChargebackReversed') fold.disputed = false;
      fold.status = type;
      if (createdAt < fold.createdAt) fold.createdAt = createdAt;
      folds.set(psp, fold);
    }
  }
  const from = window.from.toISOString();
  const to = window.to.toISOString();
  return [...folds.values()]
    .filter((f) => f.createdAt >= from && f.createdAt < to)
    .map((f) => {
      // A settlement without an Authorised row (a live report) still proves the amount was authorised.
      const authorized = Math.max(f.authorized, f.captured);
      return { providerRef: f.providerRef, attemptId: f.attemptId, status: f.status, amount: authorized, currency: f.currency, authorized, captured: f.captured, refunded: f.refunded, createdAt: f.createdAt, ...(f.disputed ? { disputed: true } : {}) };
    });
}

export interface ReportSource {
  readonly baseUrl: string;
  readonly merchantAccount: string;
  readonly apiKey: string;
  readonly ca: string | undefined;
  readonly timeoutMs: number;
}

function download(url: string, source: ReportSource): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { headers: { 'x-api-key': source.apiKey }, ...(source.ca !== undefined && { ca: source.ca }), timeout: source.timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        if (!res.complete) return reject(new ReconciliationFetchError(`report download cut off: ${url}`));
        if (res.statusCode === 404) return resolve(null); // not generated yet
        if (res.statusCode !== 200) return reject(new ReconciliationFetchError(`report download ${url}: HTTP ${res.statusCode ?? '?'}`));
        resolve(Buffer.concat(chunks).toString('utf8'));
      });
    });
    req.on('timeout', () => req.destroy(new ReconciliationFetchError(`report download timed out: ${url}`)));
    req.on('error', (e) => reject(e instanceof ReconciliationFetchError ? e : new ReconciliationFetchError(`report download ${url}: ${e.message}`, { cause: e })));
  });
}

export function reportFileName(dayStartMs: number): string {
  const iso = new Date(dayStartMs).toISOString();
  return `settlement_detail_report_${iso.slice(0, 4)}_${iso.slice(5, 7)}_${iso.slice(8, 10)}.csv`;
}

/** Downloads the report of every UTC day the window touches; a day not generated yet contributes nothing. */
export async function fetchSettlementRecords(source: ReportSource, window: ReconciliationWindow): Promise<ReconciliationRecord[]> {
  const csvs: string[] = [];
  for (let day = Math.floor(window.from.getTime() / DAY_MS) * DAY_MS; day < window.to.getTime(); day += DAY_MS) {
    const url = `${source.baseUrl}/reports/download/MerchantAccount/${encodeURIComponent(source.merchantAccount)}/${reportFileName(day)}`;
    const csv = await download(url, source);
    if (csv !== null) csvs.push(csv);
  }
  return recordsFromSettlementReports(csvs, window);
}
