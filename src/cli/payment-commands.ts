// `switchyard payments stuck|show|resolve`: what an operator needs when payments stop moving.
// stuck and show read the database; resolve starts the runtime in the api role (no workers) and
// goes through resolveByOperator() — transition() with origin 'operator' — like the dashboard.
// Heavy modules load when a command runs, so registering these costs nothing.

import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { parseDuration } from '../routing/duration.ts';
import { withDb } from './cli-database.ts';
import { CliInputError } from './cli-input-error.ts';
import type { GatewaySettings } from './settings.ts';
import type { OperationSummary } from '../ops/payment-ops.ts';
import type { AttemptRecords } from '../ops/provider-records.ts';

type Action = <A extends unknown[]>(run: (...args: A) => Promise<void> | void) => (...args: A) => Promise<void>;

export interface CommandContext {
  readonly action: Action;
  readonly print: (line: string) => void;
  readonly log: (line: string) => void;
  readonly settings: () => GatewaySettings;
}

/** "1h 05m", "3d 2h", "42s". */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

function durationOption(name: string) {
  return (v: string): number => {
    const ms = parseDuration(v);
    if (ms === null) throw new InvalidArgumentError(`${name} "${v}" is not a duration such as 90s, 30m, 1h or 2d`);
    return ms;
  };
}

function positiveInt(name: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 10_000) throw new InvalidArgumentError(`${name} "${v}" is not a number from 1 to 10000`);
    return Number(v);
  };
}


async function opsInput<T>(run: () => Promise<T>): Promise<T> {
  const { OpsInputError } = await import('../ops/payment-ops.ts');
  try {
    return await run();
  } catch (err) {
    if (err instanceof OpsInputError) throw new CliInputError(err.message);
    throw err;
  }
}

export async function stuckCommand(databaseUrl: string, o: { olderThanMs: number; limit: number; json: boolean }): Promise<string> {
  const { listStuckPayments } = await import('../ops/payment-ops.ts');
  return withDb(databaseUrl, async (db) => {
    const rows = await listStuckPayments(db, { olderThanMs: o.olderThanMs, now: new Date(), limit: o.limit });
    if (o.json) return JSON.stringify({ older_than_s: o.olderThanMs / 1000, count: rows.length, payments: rows });
    if (rows.length === 0) return `no stuck payments (none untouched for ${formatAge(o.olderThanMs / 1000)} in ${['authorizing', 'auth_unknown', 'capturing', 'voiding', 'needs_review'].join(', ')}, ...)`;
    const lines = rows.map((p) => [p.id, p.state.padEnd(13), (p.connector ?? '-').padEnd(12), formatAge(p.stuckSeconds).padStart(8), `${p.amount} ${p.currency}`, p.merchantId].join('  '));
    return [`${rows.length} stuck payment(s), longest first:`, `${'id'.padEnd(rows[0]!.id.length)}  ${'state'.padEnd(13)}  ${'connector'.padEnd(12)}  ${'stuck'.padStart(8)}  amount  merchant`, ...lines].join('\n');
  });
}

/** `failed (declined insufficient_funds [51]: Not enough balance)`, `succeeded (pi_…)`, `pending after 2 calls`. */
function operationLine(o: OperationSummary): string {
  const f = o.failure;
  const why = f === null ? '' : ` (${f.kind} ${f.code}${f.providerCode === null ? '' : ` [${f.providerCode}]`}${f.message === null ? '' : `: ${f.message}`})`;
  const ref = o.providerRef === null ? '' : `, provider ${o.providerRef}`;
  return `${o.status}${why}${ref}, ${o.calls} call${o.calls === 1 ? '' : 's'}`;
}

export async function showCommand(databaseUrl: string, id: string, json: boolean): Promise<string> {
  const { loadPaymentDetail } = await import('../ops/payment-ops.ts');
  return withDb(databaseUrl, async (db) => {
    const p = await loadPaymentDetail(db, id);
    if (p === null) throw new CliInputError(`no payment ${id}`);
    if (json) return JSON.stringify(p);
    const head = [
      `${p.id}  ${p.state}  ${p.amount} ${p.currency} (authorized ${p.amountAuthorized}, captured ${p.amountCaptured}, refunded ${p.amountRefunded}; ${p.captureMethod} capture)`,
      `merchant ${p.merchantId}  reference ${p.reference}  created ${p.createdAt}  updated ${p.updatedAt}`,
      ...p.attempts.map((a) => `attempt ${a.no} ${a.id} on ${a.connector}: ${a.status}${a.lastOutcome === null ? '' : `, last ${a.lastOutcome}`}${a.proof === null ? '' : `, proof ${a.proof}`}${a.providerRef === null ? '' : ` (${a.providerRef})`}`),
      ...p.captures.map((c) => `capture ${c.no} ${c.id}: ${c.amount} ${p.currency} ${operationLine(c)}`),
      ...p.refunds.map((r) => `refund ${r.no} ${r.id}: ${r.amount} ${p.currency} ${operationLine(r)}`),
      'timeline:',
    ];
    const lines = p.timeline.map((t) => {
      const edge = t.outcome === 'applied' ? `${t.from} -> ${t.to}` : `ignored (${t.code ?? 'noop'}) in ${t.from}`;
      const input = (t.input as { type?: string } | null)?.type ?? '?';
      return `  ${t.at}  ${t.origin.padEnd(9)}  ${input.padEnd(17)}  ${edge}  ${t.reason}`;
    });
    return [...head, ...lines].join('\n');
  });
}

/** What the provider's records say, per attempt, before anything is resolved. */
function recordsText(records: readonly AttemptRecords[]): string[] {
  const out = ['what the provider\'s records say:'];
  for (const r of records) {
    const from = r.source === 'provider_lookup' ? 'asked the provider now' : r.source === 'reports_and_notifications' ? 'no lookup here: the report rows and verified notifications we hold' : 'not looked up';
    out.push(`  attempt ${r.no} ${r.attemptId} on ${r.connector} (${from}): shows ${r.shows}`);
    for (const l of r.lines) out.push(`    ${l}`);
  }
  out.push('  an absent record proves nothing: only a record that shows the money is a fact');
  return out;
}

export async function resolveCommand(
  settings: GatewaySettings,
  id: string,
  o: { as: string; note: string; json: boolean; queuePrefix: string; override?: string | undefined; print?: (line: string) => void },
): Promise<string> {
  const { as, note, json } = o;
  const { isResolution, RESOLUTIONS, resolvePayment, ResolutionRefusedError } = await import('../ops/payment-ops.ts');
  // Bad input fails before anything starts.
  if (!isResolution(as)) throw new CliInputError(`--as must be one of ${RESOLUTIONS.join(', ')} (got "${as}")`);
  if (note.trim() === '') throw new CliInputError('--note must say why (it is kept in the payment timeline)');
  if (o.override !== undefined && o.override.trim() === '') throw new CliInputError('--override must name its reason');
  const { cliOperator } = await import('../ops/operators.ts');
  const operator = cliOperator();
  const { startRuntime } = await import('../app/runtime.ts');
  // The runtime's own lines (signing keys, the transition) are noise here: the result is the one line.
  const quiet = (): void => undefined;
  const rt = await startRuntime({ role: 'api', databaseUrl: settings.databaseUrl, redisUrl: settings.redisUrl, configFile: settings.configFile, queuePrefix: o.queuePrefix, log: quiet });
  try {
    const r = await opsInput(async () => {
      try {
        return await resolvePayment(rt, id, as, note, operator.name, { override: o.override });
      } catch (err) {
        // Refused: what the provider showed still goes out first, so the operator sees why.
        if (err instanceof ResolutionRefusedError && !json) o.print?.(recordsText(err.records).join('\n'));
        throw err;
      }
    });
    if (json) return JSON.stringify({ ...r, operator: operator.name });
    return [...recordsText(r.records), `payment ${r.id}: ${r.from} -> ${r.to} by operator ${operator.name} (transition ${r.transitionId}; see switchyard payments show ${r.id})`].join('\n');
  } finally {
    await rt.stop();
  }
}

export function registerPaymentCommands(program: Command, c: CommandContext): void {
  const payments = program.command('payments').description('operator tools for payments: stuck ones, a timeline, resolving needs_review');
  payments
    .command('stuck')
    .description('payments untouched for a while in authorizing, auth_unknown, capturing, voiding or needs_review, longest first')
    .option('--older-than <duration>', 'untouched for at least this long (90s, 30m, 1h, 2d)', durationOption('--older-than'), 3_600_000)
    .option('--limit <n>', 'at most this many', positiveInt('--limit'), 200)
    .option('--json', 'one JSON line')
    .addHelpText('after', '\nExamples:\n  switchyard payments stuck\n  switchyard payments stuck --older-than 15m --json')
    .action(c.action(async (o: { olderThan: number; limit: number; json?: boolean }) => {
      c.print(await stuckCommand(c.settings().databaseUrl, { olderThanMs: o.olderThan, limit: o.limit, json: o.json === true }));
    }));
  payments
    .command('show')
    .description('one payment with its attempts and its timeline (every input, applied or ignored, with its origin)')
    .argument('<id>', 'payment id (pay_...)')
    .option('--json', 'one JSON line')
    .action(c.action(async (id: string, o: { json?: boolean }) => {
      c.print(await showCommand(c.settings().databaseUrl, id, o.json === true));
    }));
  payments
    .command('resolve')
    .description('settle a payment parked in needs_review: shows first what the provider\'s records say for each attempt; failed/voided are refused while money is captured or in flight, or the provider shows it; recorded in its timeline with origin operator')
    .argument('<id>', 'payment id (pay_...)')
    .addOption(new Option('--as <state>', 'what happened: captured keeps what was captured (refund it through the normal refund path)').choices(['authorized', 'captured', 'failed', 'voided']).makeOptionMandatory())
    .requiredOption('--note <text>', 'why: what you checked, and where (kept in the timeline)')
    .option('--override <reason>', 'take failed/voided although the money guards refuse it; the reason is kept with the operator and recorded as a discrepancy')
    .option('--queue-prefix <prefix>', 'BullMQ key prefix of the gateway', 'sy')
    .option('--json', 'one JSON line')
    .addHelpText('after', '\nRecorded in the audit trail under the operator whose token SWITCHYARD_OPERATOR_TOKEN holds (with the override, if any).\n\nExamples:\n  switchyard payments resolve pay_01h... --as failed --note "Stripe dashboard: no charge for pi_123 (ticket OPS-42)"\n  switchyard payments resolve pay_01h... --as captured --note "capture 1 settled; capture 2 unknown (OPS-43)"')
    .action(c.action(async (id: string, o: { as: string; note: string; json?: boolean; queuePrefix: string; override?: string }) => {
      c.print(await resolveCommand(c.settings(), id, { as: o.as, note: o.note, json: o.json === true, queuePrefix: o.queuePrefix, override: o.override, print: c.print }));
    }));
}
