// `switchyard reconcile --since 24h [--connector NAME] [--json]`: compares the providers' records
// for the window with ours (src/reconcile). The runtime starts in the api role: connectors and
// the database, no workers — the transitions it applies are published by any running relay.

import { startRuntime } from '../app/runtime.ts';
import type { Runtime } from '../app/runtime.ts';
import { reconcile, UnknownConnectorError } from '../reconcile/run.ts';
import type { ReconcileSummary } from '../reconcile/run.ts';
import { CliInputError } from './cli-input-error.ts';
import type { GatewaySettings } from './settings.ts';

const UNITS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "24h", "90m", "7d" → milliseconds. */
export function parseSince(text: string): number {
  const m = /^(\d+)([mhd])$/.exec(text.trim());
  const unit = m === null ? undefined : UNITS[m[2] ?? ''];
  if (m === null || unit === undefined || Number(m[1]) === 0) throw new CliInputError(`--since "${text}" is not a duration such as 90m, 24h or 7d`);
  return Number(m[1]) * unit;
}

export interface ReconcileCommandOptions {
  readonly since: string;
  readonly connector?: string;
  readonly json: boolean;
}

/** The --json line: exactly the documented keys. */
export function summaryLine(s: ReconcileSummary): string {
  return JSON.stringify({ window: s.window, checked: s.checked, discrepancies: s.discrepancies, by_category: s.by_category, auto_resolved: s.auto_resolved, new: s.new, reopened: s.reopened, updated: s.updated, errors: s.errors });
}

/** Runs against an already started runtime (tests) or starts one from the settings. */
export async function runReconcile(rt: Runtime, o: ReconcileCommandOptions, progress: (line: string) => void): Promise<ReconcileSummary> {
  const to = rt.now();
  const from = new Date(to.getTime() - parseSince(o.since));
  try {
    return await reconcile(
      {
        db: rt.database.db, connectors: rt.connectors, envs: rt.envs, now: rt.now, onApplied: () => rt.relay.kick(),
        ...(o.json ? {} : { onProgress: (account, done, total) => progress(`reconcile [${'#'.repeat(done)}${'.'.repeat(total - done)}] ${done}/${total} ${account}`) }),
      },
      { window: { from, to }, ...(o.connector === undefined ? {} : { connector: o.connector }) },
    );
  } catch (err) {
    if (err instanceof UnknownConnectorError) throw new CliInputError(err.message);
    throw err;
  }
}

export async function reconcileCommand(settings: GatewaySettings, o: ReconcileCommandOptions, print: (line: string) => void, log: (line: string) => void): Promise<void> {
  parseSince(o.since); // bad input fails before anything starts
  const rt = await startRuntime({ role: 'api', databaseUrl: settings.databaseUrl, redisUrl: settings.redisUrl, configFile: settings.configFile, log });
  try {
    const s = await runReconcile(rt, o, log);
    if (o.json) return print(summaryLine(s));
    const cats = Object.entries(s.by_category).filter(([, n]) => n > 0).map(([c, n]) => `${c} ${n}`).join(', ');
    const settled = s.settlement.lines === 0 ? '' : `; settlement: ${s.settlement.lines} rows, ${s.settlement.posted} posted, ${s.settlement.unmatched} unmatched`;
    print(`reconciled ${s.window.from} .. ${s.window.to}: ${s.checked} checked, ${s.discrepancies} discrepancies${cats === '' ? '' : ` (${cats})`}, ${s.auto_resolved} auto-resolved, ${s.new} new${s.reopened > 0 ? ` (${s.reopened} reopened)` : ''}${s.updated > 0 ? `, ${s.updated} updated` : ''}${settled}${s.errors.length > 0 ? `; ${s.errors.length} error(s), left for the next run` : ''}`);
    for (const e of s.errors) print(`  error: ${e.account} ${e.paymentId ?? '-'} ${e.category}: ${e.error}`);
  } finally {
    await rt.stop();
  }
}
