// Small readers for the Prometheus text format and for JSON log lines, shared by the observability tests.

/** The value of one series (labels matched exactly, in any order); undefined when absent. */
export function metricValue(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const pair of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) got[pair[1]!] = pair[2]!;
    const wanted = Object.entries(labels);
    if (wanted.length === Object.keys(got).length && wanted.every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

/** Every series of a metric with its labels. */
export function metricSeries(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const pair of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    out.push({ labels, value: Number(m[4]) });
  }
  return out;
}

export type LogLine = Record<string, unknown> & { msg?: string };

/** The JSON lines among captured log lines. */
export function jsonLines(lines: readonly string[]): LogLine[] {
  const out: LogLine[] = [];
  for (const l of lines) {
    try {
      const v = JSON.parse(l) as unknown;
      if (typeof v === 'object' && v !== null) out.push(v as LogLine);
    } catch {
      // a plain line
    }
  }
  return out;
}

export async function until<T>(probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let v = await probe();
  while (!done(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    v = await probe();
  }
  return v;
}
