// Announced provider reports (Adyen REPORT_AVAILABLE, issue 33). The intake records each announced
// report once (webhooks/inbound/inbox.ts); here each is downloaded once — by file name, from the
// connector's configured origin, never from the notification — and its settlement rows are posted
// once (the report's imported_at and each posting's UNIQUE source). A report that is missing after
// a grace period is a finding: a gap in the settlement batch numbers, or a daily accounting report
// absent `graceMs` after its day ended.

import { and, eq, gte, isNotNull, isNull, lte, sql } from 'drizzle-orm';
import type { Connector, ReconciliationRecord, ReconciliationWindow } from '../connectors/contract.ts';
import type { SettlementImport } from '../ledger/settlement.ts';
import { postSettlementLines } from '../ledger/settlement.ts';
import type { Db } from '../store/db.ts';
import { providerReports } from '../store/schema.ts';
import type { Finding } from './compare.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

export interface ReportSync extends SettlementImport {
  /** Reports downloaded by this sync. */
  readonly downloaded: number;
  /** Reports whose rows this sync imported. */
  readonly imported: number;
  /** Announced reports the provider does not serve (yet). */
  readonly unavailable: number;
  /** The provider refused the report credential (401/403): a finding naming it; nothing more is downloaded this run. */
  readonly accessRefused: Finding | null;
}

const NONE: ReportSync = { downloaded: 0, imported: 0, unavailable: 0, lines: 0, posted: 0, unmatched: 0, accessRefused: null };

/** A download refused for its credential (the connector's error carries the config path of it). */
function refusedCredential(err: unknown): string | null {
  const setting = (err as { setting?: unknown } | null)?.setting;
  return typeof setting === 'string' ? setting : null;
}

/**
 * One finding per refused credential (dedupe key `missing_report:-:<setting>:report_access`): the
 * reports exist, we may not read them, and reconciliation sees nothing of the account meanwhile.
 */
export function reportAccessFinding(setting: string, fileName: string, message: string): Finding {
  return {
    category: 'missing_report', paymentId: null, attemptId: null, providerRef: setting, aspect: 'report_access',
    detail: `${message}: no report of this account can be read, so reconciliation sees none of its payments (first refused: ${fileName})`,
    provider: { status: 'refused' }, ours: { credential: setting },
  };
}

/** Downloads every announced report not downloaded yet, then imports every downloaded one not imported yet. */
export async function syncProviderReports(db: Db, account: string, connector: Connector, now: Date): Promise<ReportSync> {
  const reports = connector.reports;
  if (reports === undefined) return NONE;
  let downloaded = 0;
  let unavailable = 0;
  let accessRefused: Finding | null = null;
  const pending = await db.select({ fileName: providerReports.fileName }).from(providerReports).where(and(eq(providerReports.connector, account), isNull(providerReports.content)));
  for (const { fileName } of pending) {
    // The intake accepted the name already; the connector checks it again before any request.
    if (reports.accepts(fileName) === null) continue;
    let text: string | null;
    try {
      text = await reports.download(fileName);
    } catch (err) {
      await db.update(providerReports).set({ lastError: safeErrorText(err) }).where(and(eq(providerReports.connector, account), eq(providerReports.fileName, fileName)));
      const setting = refusedCredential(err);
      if (setting === null) throw err;
      // Every other download would be refused alike: the run goes on with what is stored, and says why it sees nothing new.
      accessRefused = reportAccessFinding(setting, fileName, (err as Error).message);
      break;
    }
    if (text === null) {
      unavailable++;
      await db.update(providerReports).set({ lastError: 'not available (404)' }).where(and(eq(providerReports.connector, account), eq(providerReports.fileName, fileName)));
      continue;
    }
    const rows = await db
      .update(providerReports)
      .set({ content: text, downloadedAt: now, lastError: null })
      .where(and(eq(providerReports.connector, account), eq(providerReports.fileName, fileName), isNull(providerReports.content)))
      .returning({ fileName: providerReports.fileName });
    downloaded += rows.length;
  }
  let imported = 0;
  const totals = { lines: 0, posted: 0, unmatched: 0 };
  const toImport = await db
    .select({ fileName: providerReports.fileName })
    .from(providerReports)
    .where(and(eq(providerReports.connector, account), isNotNull(providerReports.content), isNull(providerReports.importedAt)));
  for (const { fileName } of toImport) {
    await db.transaction(async (tx) => {
      // Claimed by the row lock: two runs importing at once post it once.
      const [row] = await tx
        .select({ content: providerReports.content, importedAt: providerReports.importedAt })
        .from(providerReports)
        .where(and(eq(providerReports.connector, account), eq(providerReports.fileName, fileName)))
        .for('update');
      if (row === undefined || row.content === null || row.importedAt !== null) return;
      const lines = reports.settlementLines({ name: fileName, text: row.content });
      const r = await postSettlementLines(tx, account, lines, now);
      totals.lines += r.lines;
      totals.posted += r.posted;
      totals.unmatched += r.unmatched;
      await tx.update(providerReports).set({ importedAt: now }).where(and(eq(providerReports.connector, account), eq(providerReports.fileName, fileName)));
      imported++;
    });
  }
  return { downloaded, imported, unavailable, ...totals, accessRefused };
}

export interface MissingReportRules {
  /** How long a report may be late before it is a finding. */
  readonly graceMs: number;
}

interface KnownReport {
  readonly fileName: string;
  readonly kind: string;
  readonly sequence: number | null;
  readonly reportDay: string | null;
  readonly announcedAt: Date;
}

/**
 * Missing reports, as findings (category `missing_report`, one per file): a settlement batch
 * number absent between two announced ones, once the later one was announced `graceMs` ago; a daily
 * accounting report absent `graceMs` after its day ended (account zone), for every day from the
 * first one announced to now; and, for an account that never had one announced, the report of the
 * day of its first payment attempt once it is `graceMs` late. A missing report that arrives later
 * simply stops being found.
 */
export async function missingReports(db: Db, account: string, connector: Connector, rules: MissingReportRules, now: Date): Promise<Finding[]> {
  const reports = connector.reports;
  if (reports === undefined) return [];
  const known: KnownReport[] = await db
    .select({ fileName: providerReports.fileName, kind: providerReports.kind, sequence: providerReports.sequence, reportDay: providerReports.reportDay, announcedAt: providerReports.announcedAt })
    .from(providerReports)
    .where(eq(providerReports.connector, account));
  const { rows } = await db.execute<{ first: string | Date | null }>(sql`SELECT min(created_at) AS first FROM payment_attempts WHERE connector = ${account}`);
  const first = rows[0]?.first ?? null;
  return missingFrom(known, (day) => reports.dayEndMs(day), rules, now, first === null ? null : new Date(first));
}

/** The account-zone day (YYYY-MM-DD) an instant falls in, from the zone's day ends. */
function dayOf(ms: number, dayEndMs: (day: string) => number): string {
  let day = new Date(ms).toISOString().slice(0, 10);
  // A zone's day is within a day of the UTC one.
  if (dayEndMs(day) <= ms) day = nextDay(day);
  else if (dayEndMs(nextDay(day, -1)) > ms) day = nextDay(day, -1);
  return day;
}

/** `firstAttemptAt`: the account's first payment attempt, if any (an account with none owes no report). */
export function missingFrom(known: readonly KnownReport[], dayEndMs: (day: string) => number, rules: MissingReportRules, now: Date, firstAttemptAt: Date | null = null): Finding[] {
  const out: Finding[] = [];
  const finding = (fileName: string, detail: string): Finding => ({
    category: 'missing_report', paymentId: null, attemptId: null, providerRef: fileName, aspect: 'report', detail,
    provider: { status: 'missing' }, ours: { status: 'not announced' },
  });
  const batches = known.filter((r) => r.kind === 'settlement_batch' && r.sequence !== null).sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0));
  for (let i = 1; i < batches.length; i++) {
    const prev = batches[i - 1]!;
    const next = batches[i]!;
    if (now.getTime() - next.announcedAt.getTime() < rules.graceMs) continue;
    for (let n = (prev.sequence ?? 0) + 1; n < (next.sequence ?? 0); n++) {
      out.push(finding(`settlement_detail_report_batch_${n}.csv`, `settlement details batch ${n} was never announced (batches ${prev.sequence} and ${next.sequence} were)`));
    }
  }
  const days = new Set(known.filter((r) => r.kind === 'accounting_daily' && r.reportDay !== null).map((r) => r.reportDay!));
  if (days.size === 0 && firstAttemptAt !== null) {
    // Never announced: nothing is ever fetched by a made-up name (live Adyen serves only what it
    // announces), so without this the account's payments would go unreconciled in silence.
    const day = dayOf(firstAttemptAt.getTime(), dayEndMs);
    if (dayEndMs(day) + rules.graceMs <= now.getTime()) {
      out.push(finding(`payments_accounting_report_${day.replace(/-/g, '_')}.csv`, `no report was ever announced for this account: its first payment attempt was on ${day}, whose payments accounting report is ${Math.round(rules.graceMs / 3_600_000)} h late; reconciliation sees none of its payments until reports are announced (REPORT_AVAILABLE notifications on, report generation enabled at Adyen)`));
    }
  }
  const first = [...days].sort()[0];
  if (first !== undefined) {
    for (let t = Date.parse(`${first}T00:00:00Z`); ; t += 86_400_000) {
      const day = new Date(t).toISOString().slice(0, 10);
      if (dayEndMs(day) + rules.graceMs > now.getTime()) break;
      if (!days.has(day)) out.push(finding(`payments_accounting_report_${day.replace(/-/g, '_')}.csv`, `payments accounting report of ${day} not announced ${Math.round(rules.graceMs / 3_600_000)} h after the day ended`));
    }
  }
  return out;
}

const DAY_MS = 86_400_000;
const nextDay = (day: string, n = 1): string => new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);

export interface StoredRecords {
  readonly records: readonly ReconciliationRecord[];
  /** Activity before this instant is in the reports read; later activity is not expected in the records yet. */
  readonly coveredUntil: Date;
}

/**
 * The window's records from the downloaded daily status reports (Adyen payments accounting
 * reports) of the window's days and the connector's history days before them. Null for a
 * connector without announced reports (its own fetch is used). An account with none downloaded
 * yet has no records and nothing covered: nothing is expected of it, and `missingReports` says why.
 */
export async function recordsFromStoredReports(db: Db, account: string, connector: Connector, window: ReconciliationWindow): Promise<StoredRecords | null> {
  const reports = connector.reports;
  if (reports === undefined) return null;
  const any = await db
    .select({ fileName: providerReports.fileName })
    .from(providerReports)
    .where(and(eq(providerReports.connector, account), eq(providerReports.kind, 'accounting_daily'), isNotNull(providerReports.content)))
    .limit(1);
  if (any.length === 0) return { records: [], coveredUntil: window.from };
  const from = window.from.getTime();
  const to = window.to.getTime();
  // A day either side of the exact bounds (any zone's day is within a day of the UTC one); filtered exactly below.
  const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
  const rows = await db
    .select({ fileName: providerReports.fileName, reportDay: providerReports.reportDay, content: providerReports.content })
    .from(providerReports)
    .where(and(
      eq(providerReports.connector, account), eq(providerReports.kind, 'accounting_daily'), isNotNull(providerReports.content),
      gte(providerReports.reportDay, isoDay(from - (reports.historyDays + 1) * DAY_MS)), lte(providerReports.reportDay, isoDay(to + DAY_MS)),
    ));
  const dayStart = (day: string): number => reports.dayEndMs(nextDay(day, -1));
  const wanted = rows.filter((r) => r.reportDay !== null && reports.dayEndMs(r.reportDay) > from - reports.historyDays * DAY_MS && dayStart(r.reportDay) < to);
  const present = new Set(wanted.map((r) => r.reportDay!));
  // Covered: from the window's first day on, as long as every day's report is there.
  let covered = from;
  const first = [...present].sort().find((d) => reports.dayEndMs(d) > from);
  if (first !== undefined && dayStart(first) <= from) {
    for (let d = first; present.has(d); d = nextDay(d)) covered = reports.dayEndMs(d);
  }
  const records = reports.records(wanted.map((r) => ({ name: r.fileName, text: r.content! })), window);
  return { records, coveredUntil: new Date(Math.min(covered, to)) };
}
