// `npm run chaos -- [--payments N] [--seed S] [--processes K] [--json] [--record FILE] [--replay FILE] [--vault-process] [--vaulted-share R]`
// Exit 0 only when no invariant was violated, nothing is left in flight and every process is up.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { databaseUrlFromEnv, withDatabase } from '../src/store/database-url.ts';
import { passed, runChaos, reportJson } from './harness.ts';
import type { ChaosReport, Progress } from './harness.ts';
import { FAULT_KINDS } from './plan.ts';
import type { FaultEvent, FaultKind, ProviderOp } from './plan.ts';
import { PLANTED_BUGS } from './planted-bugs.ts';
import type { PlantedBug } from './planted-bugs.ts';
import { ROOT } from './processes.ts';

const positive = (what: string) => (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${what} must be a positive integer`);
  return n;
};

interface Cli {
  payments: number;
  seed?: number;
  processes: number;
  json?: boolean;
  record?: string;
  replay?: string;
  plant?: PlantedBug;
  concurrency: number;
  faultRate: number;
  quiesce: number;
  kinds?: FaultKind[];
  ops?: ProviderOp[];
  vaultProcess?: boolean;
  vaultedShare?: number;
}

/** A comma-separated list whose every item is one of `allowed`. */
function listOf<T extends string>(flag: string, allowed: readonly T[]): (v: string) => T[] {
  return (v) => {
    const items = v.split(',').map((x) => x.trim()).filter((x) => x !== '');
    const bad = items.find((x) => !(allowed as readonly string[]).includes(x));
    if (bad !== undefined || items.length === 0) throw new InvalidArgumentError(`${flag} takes a comma-separated list of: ${allowed.join(', ')}${bad === undefined ? '' : ` (not ${bad})`}`);
    return items as T[];
  };
}

function bar(p: Progress): string {
  const width = 30;
  const done = Math.round((p.paymentsDone / Math.max(1, p.payments)) * width);
  const tail = p.phase === 'settling' ? ` · settling${p.inFlight === undefined ? '' : `: ${p.inFlight} in flight`}` : p.phase === 'checking' ? ' · checking invariants' : '';
  return `\rchaos [${'#'.repeat(done)}${'-'.repeat(width - done)}] ${p.paymentsDone}/${p.payments} payments · ${p.operations} ops · ${p.faults} faults${tail}\x1b[K`;
}

function textReport(r: ChaosReport, repro: string): string {
  const kinds = Object.entries(r.faults_by_kind).map(([k, n]) => `${k} ${n}`).join(', ');
  const inv = Object.entries(r.violations_by_invariant).map(([k, n]) => `${k} ${n}`).join(' · ');
  const lines = [
    `chaos seed ${r.seed}${r.details.plant === null ? '' : ` (planted bug: ${r.details.plant})`}: ${r.payments} payments, ${r.operations} operations, ${r.faults} faults, ${r.kills} kills, ${r.duration_s} s`,
    `faults: ${kinds}`,
    `after quiescence: ${r.in_flight} in flight, ${r.needs_review} needs_review; processes: ${r.start_failures} exits during start (restarted), ${r.processes_down} down at the checks`,
    ...(r.needs_review === 0 ? [] : [`parked: ${Object.entries(r.needs_review_by_reason).map(([k, n]) => `${n}× ${k}`).join('; ')}`]),
    `invariants: ${inv}`,
    `customers (authentication lifecycle.outcome): ${Object.entries(r.customers).sort().map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`,
  ];
  for (const v of r.details.violations.slice(0, 50)) lines.push(`  [${v.invariant}] ${v.paymentId ?? '-'}: ${v.detail}`);
  if (r.details.violations.length > 50) lines.push(`  ... and ${r.details.violations.length - 50} more`);
  lines.push(passed(r) ? 'result: PASS' : `result: FAIL — reproduce with: ${repro}`);
  return lines.join('\n');
}

const program = new Command('chaos')
  .description('drive seeded payment lifecycles through the real gateway while injecting faults, then check every invariant')
  .option('--payments <n>', 'payments to drive', positive('--payments'), 200)
  .option('--seed <s>', 'fixes the lifecycles and the fault plan (default: random)', (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new InvalidArgumentError('--seed must be an integer from 0 to 4294967295');
    return n;
  })
  .option('--processes <k>', 'API processes and worker processes (k of each)', positive('--processes'), 1)
  .option('--json', 'no progress bar; the last line is one JSON object')
  .option('--record <file>', 'write the fault schedule as executed (for replay and the report)')
  .option('--replay <file>', 'run the faults of a recorded schedule instead of the seeded plan')
  .addOption(new Option('--plant <bug>', 'inject a deliberately broken part, to see the invariants catch it').choices(PLANTED_BUGS))
  .option('--concurrency <n>', 'lifecycles driven at once', positive('--concurrency'), 24)
  .option('--fault-rate <r>', 'faults per operation', (v) => {
    const n = Number(v);
    if (!(n >= 0 && n <= 2)) throw new InvalidArgumentError('--fault-rate must be a number from 0 to 2');
    return n;
  }, 0.25)
  .option('--kinds <list>', 'only these fault kinds (comma-separated; default all)', listOf('--kinds', FAULT_KINDS))
  .option('--ops <list>', 'sandbox faults only on these provider operations (comma-separated)', listOf('--ops', ['create', 'authorize', 'capture', 'refund', 'void', 'resume'] as const))
  .option('--quiesce <seconds>', 'how long to wait for quiescence after the faults stop', positive('--quiesce'), 180)
  .option('--vault-process', 'run the vault as its own process (switchyard start --role vault), with kill_vault faults')
  .option('--vaulted-share <r>', 'of the approved payments, the share paid with a vaulted card', (v) => {
    const n = Number(v);
    if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('--vaulted-share must be a number from 0 to 1');
    return n;
  })
  .action(async (o: Cli) => {
    const seed = o.seed ?? Math.floor(Math.random() * 0xffffffff);
    const databaseUrl = process.env['DATABASE_URL'] !== undefined && process.env['DATABASE_URL'] !== '' ? process.env['DATABASE_URL'] : withDatabase(databaseUrlFromEnv(), 'switchyard_chaos');
    let replay: FaultEvent[] | undefined;
    if (o.replay !== undefined) {
      try {
        replay = (JSON.parse(readFileSync(o.replay, 'utf8')) as { executed: FaultEvent[] }).executed.map(({ ...f }) => f).sort((a, b) => a.atOp - b.atOp);
      } catch (err) {
        throw new InvalidArgumentError(`--replay ${o.replay}: ${(err as Error).message}`);
      }
    }
    const showBar = o.json !== true && process.stderr.isTTY === true;
    const report = await runChaos({
      payments: o.payments, seed, processes: o.processes, databaseUrl, runDir: join(ROOT, '.data', 'chaos', `${seed}-${Date.now()}`),
      concurrency: o.concurrency, faultRate: o.faultRate, quiesceMs: o.quiesce * 1000,
      ...(replay === undefined ? {} : { replay }),
      ...(o.plant === undefined ? {} : { plant: o.plant }),
      ...(o.kinds === undefined ? {} : { kinds: o.kinds }),
      ...(o.ops === undefined ? {} : { faultOps: o.ops }),
      ...(o.vaultProcess === true ? { vaultProcess: true } : {}),
      ...(o.vaultedShare === undefined ? {} : { vaultedShare: o.vaultedShare }),
      onProgress: (p) => {
        if (showBar) process.stderr.write(bar(p));
        else if (o.json !== true && p.phase !== 'driving') process.stderr.write(`chaos: ${p.phase}\n`);
      },
      log: (l) => process.stderr.write(`${showBar ? '\n' : ''}${l}\n`),
    });
    if (showBar) process.stderr.write('\n');
    if (o.record !== undefined) {
      writeFileSync(o.record, `${JSON.stringify({ seed, payments: o.payments, processes: o.processes, fault_rate: o.faultRate, executed: report.details.executed, violations: report.details.violations }, null, 2)}\n`);
    }
    const repro = `npm run chaos -- --seed ${seed} --payments ${o.payments} --processes ${o.processes}${o.record === undefined ? '' : ` --replay ${o.record}`}${o.plant === undefined ? '' : ` --plant ${o.plant}`}`;
    console.log(o.json === true ? reportJson(report) : textReport(report, repro));
    process.exit(passed(report) ? 0 : 1);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`chaos: ${(err as Error).message}`);
  process.exit(2);
});
