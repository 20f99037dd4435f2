// Adyen report files: which names we accept, where we download them from, and how a report's
// local times are read back to instants.
//
// A REPORT_AVAILABLE notification names the file in `pspReference` and carries a download URL in
// `reason`. The HMAC covers pspReference but NOT reason, so the URL is never used: the download URL
// is built from the configured report base URL and merchant account plus the file name, and only
// names of the known report patterns are accepted (no path, no query, nothing to smuggle a host in).

export type ReportFile =
  | { readonly kind: 'settlement_batch'; readonly fileName: string; readonly batch: number }
  | { readonly kind: 'accounting_daily'; readonly fileName: string; readonly day: string };

const SETTLEMENT_BATCH = /^settlement_detail_report_batch_([1-9]\d{0,8})\.csv$/;
const ACCOUNTING_DAILY = /^payments_accounting_report_(\d{4})_(\d{2})_(\d{2})\.csv$/;

/** The report a file name denotes, or null when it is not one of the known patterns. */
export function parseReportFileName(name: string): ReportFile | null {
  const s = SETTLEMENT_BATCH.exec(name);
  if (s !== null) return { kind: 'settlement_batch', fileName: name, batch: Number(s[1]) };
  const a = ACCOUNTING_DAILY.exec(name);
  if (a !== null) {
    const [, y, m, d] = a;
    const day = `${y}-${m}-${d}`;
    const t = Date.UTC(Number(y), Number(m) - 1, Number(d));
    if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== day) return null;
    return { kind: 'accounting_daily', fileName: name, day };
  }
  return null;
}

export function settlementBatchFileName(batch: number): string {
  return `settlement_detail_report_batch_${batch}.csv`;
}

export function accountingReportFileName(day: string): string {
  return `payments_accounting_report_${day.replace(/-/g, '_')}.csv`;
}

/** `{base}/reports/download/MerchantAccount/{account}/{file}`; throws for a name that is not a known report. */
export function reportDownloadUrl(baseUrl: string, merchantAccount: string, fileName: string): string {
  if (parseReportFileName(fileName) === null) throw new RangeError(`not a known Adyen report file name: ${JSON.stringify(fileName.slice(0, 120))}`);
  const origin = new URL(baseUrl).origin;
  return `${origin}/reports/download/MerchantAccount/${encodeURIComponent(merchantAccount)}/${fileName}`;
}

// ---- time zones -------------------------------------------------------------------------------

export class ReportTimeError extends Error {
  override readonly name = 'ReportTimeError';
}

/**
 * Offsets (minutes east of UTC) of the abbreviations Adyen writes in a report's TimeZone column.
 * Some abbreviations mean more than one zone (IST: Irish or Indian; CST: US Central or China): the
 * candidate the account zone is at wins.
 */
const ABBREVIATIONS: Readonly<Record<string, readonly number[]>> = {
  UTC: [0], GMT: [0], WET: [0], WEST: [60], BST: [60], IST: [60, 330], CET: [60], CEST: [120], MET: [60], MEST: [120], EET: [120], EEST: [180], MSK: [180],
  EST: [-300], EDT: [-240], CST: [-360, 480], CDT: [-300], MST: [-420], MDT: [-360], PST: [-480], PDT: [-420], AKST: [-540], AKDT: [-480], HST: [-600],
  AEST: [600], AEDT: [660], ACST: [570], ACDT: [630], AWST: [480], NZST: [720], NZDT: [780], JST: [540], KST: [540], HKT: [480], SGT: [480], WIB: [420], ICT: [420], PHT: [480],
  BRT: [-180], ART: [-180], GST: [240],
};

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at an instant, in minutes east (Intl's longOffset: "GMT+02:00"). */
export function zoneOffsetMinutes(zone: string, ms: number): number {
  let f = offsetFormats.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    offsetFormats.set(zone, f);
  }
  const name = f.formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /^GMT(?:([+-])(\d{2}):(\d{2}))?$/.exec(name);
  if (m === null) throw new ReportTimeError(`cannot read the offset of ${zone}: ${name}`);
  return m[1] === undefined ? 0 : (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
}

/** Throws when `zone` is not an IANA zone this runtime knows. */
export function checkTimeZone(zone: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw new RangeError(`unknown IANA time zone "${zone}"`);
  }
  return zone;
}

/**
 * A report's local time ("2026-03-29 02:30:00") with its TimeZone abbreviation, in the account's
 * IANA zone, as an ISO instant. The abbreviation fixes the offset (so the repeated hour of an
 * autumn change is not ambiguous); the zone must be at that offset at that instant, otherwise the
 * report is not in the zone we think and nothing it says about times can be trusted. `where`
 * names the report and row for the error.
 */
export function reportInstant(local: string, abbreviation: string, zone: string, where: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(local.trim());
  if (m === null) throw new ReportTimeError(`${where}: unreadable time "${local}"`);
  const offsets = ABBREVIATIONS[abbreviation.trim().toUpperCase()];
  if (offsets === undefined) throw new ReportTimeError(`${where}: unknown TimeZone "${abbreviation}" (account zone ${zone})`);
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  const naive = Date.UTC(y, mo - 1, d, h, mi, s);
  for (const offset of offsets) {
    const ms = naive - offset * 60_000;
    if (zoneOffsetMinutes(zone, ms) === offset) return new Date(ms).toISOString();
  }
  const actual = zoneOffsetMinutes(zone, naive - (offsets[0] ?? 0) * 60_000);
  throw new ReportTimeError(`${where}: TimeZone "${abbreviation}" at ${local} is not the account zone ${zone} (UTC${actual >= 0 ? '+' : '-'}${Math.abs(actual) / 60} then)`);
}

/** YYYY-MM-DD plus n days. */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

/** The instant a calendar day begins in a zone (midnight local; offsets change at 01:00 UTC or later in Europe, at 02:00 local elsewhere). */
export function zoneDayStartMs(zone: string, day: string): number {
  const naive = Date.parse(`${day}T00:00:00Z`);
  // Two passes: the offset at the guess, then at the corrected instant (a change that day).
  let ms = naive - zoneOffsetMinutes(zone, naive) * 60_000;
  ms = naive - zoneOffsetMinutes(zone, ms) * 60_000;
  return ms;
}
