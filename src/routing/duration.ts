// Durations in config files: "500ms", "90s", "30m", "24h", "7d".
const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number | null {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (m === null) return null;
  const n = Number(m[1]);
  const unit = UNITS[m[2]!]!;
  const ms = n * unit;
  return Number.isSafeInteger(ms) ? ms : null;
}
