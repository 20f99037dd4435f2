// The sandbox's own reading of its account zone, written independently of the connector's (which
// goes from an abbreviation to an offset and checks it): here Intl's calendar fields and its short
// zone name, as the Customer Area writes them. A simulator that shared the connector's conversion
// would agree with its bugs.

const DAY_MS = 86_400_000;
const fieldFormats = new Map<string, Intl.DateTimeFormat>();
const nameFormats = new Map<string, Intl.DateTimeFormat[]>();

function fieldsOf(zone: string, ms: number): { y: number; mo: number; d: number; h: number; mi: number; s: number } {
  let f = fieldFormats.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    fieldFormats.set(zone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  return { y: Number(parts['year']), mo: Number(parts['month']), d: Number(parts['day']), h: Number(parts['hour']), mi: Number(parts['minute']), s: Number(parts['second']) };
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** "YYYY-MM-DD HH:MM:SS" in the zone and its abbreviation (CET, CEST, BST, EST, …). */
export function zoneLocalTime(zone: string, ms: number): { local: string; abbreviation: string } {
  const f = fieldsOf(zone, ms);
  let formats = nameFormats.get(zone);
  if (formats === undefined) {
    formats = ['en-GB', 'en-US', 'en-AU'].map((locale) => new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: 'short' }));
    nameFormats.set(zone, formats);
  }
  const names = formats.map((x) => x.formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName')?.value ?? '');
  const abbreviation = names.find((n) => /^[A-Z]{2,5}$/.test(n));
  if (abbreviation === undefined) throw new RangeError(`the sandbox has no abbreviation for ${zone} (${names.join(', ')})`);
  return { local: `${pad(f.y, 4)}-${pad(f.mo)}-${pad(f.d)} ${pad(f.h)}:${pad(f.mi)}:${pad(f.s)}`, abbreviation };
}

/** The zone's calendar day of an instant, YYYY-MM-DD. */
export function zoneDay(zone: string, ms: number): string {
  const f = fieldsOf(zone, ms);
  return `${pad(f.y, 4)}-${pad(f.mo)}-${pad(f.d)}`;
}

/** The first instant (whole second) of a calendar day in the zone, by bisection over the day's possible span. */
export function zoneMidnight(zone: string, day: string): number {
  let lo = Date.parse(`${day}T00:00:00Z`) - 15 * 3_600_000; // no zone is ahead of UTC by more than 14 h
  let hi = lo + 30 * 3_600_000;
  while (hi - lo > 1_000) {
    const mid = lo + Math.floor((hi - lo) / 2_000) * 1_000;
    if (zoneDay(zone, mid) < day) lo = mid;
    else hi = mid;
  }
  return hi;
}

export function nextCalendarDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
}
