// One planted bug, run as its plan says (planted-plans.ts) until an invariant it must trip catches
// it: up to `tries` seeded runs on a shared topology, stopping at the first that catches it. A bug
// shows only when the workload meets it (a lost answer on the right call, two refunds in flight
// when an event arrives), and process timing is not seeded, so a run may miss it.

import { runChaos } from './harness.ts';
import type { ChaosReport } from './harness.ts';
import { EXPECTED_INVARIANTS } from './planted-bugs.ts';
import type { PlantedBug } from './planted-bugs.ts';
import { PLANTED_PLANS } from './planted-plans.ts';
import type { Topology } from './topology.ts';

export interface PlantedRun {
  readonly bug: PlantedBug;
  /** The last run's report: the one that caught the bug, or the last one that did not. */
  readonly report: ChaosReport;
  readonly caught: boolean;
  /** Seeded runs it took. */
  readonly runs: number;
}

export async function catchPlantedBug(bug: PlantedBug, topology: Topology, databaseUrl: string, tries = 5, log: (line: string) => void = () => undefined): Promise<PlantedRun> {
  const aim = PLANTED_PLANS[bug];
  let report: ChaosReport | null = null;
  for (let tryNo = 0; tryNo < tries; tryNo++) {
    const seed = aim.seed + 100 * tryNo;
    // When each phase began, for the log line: where a run's time goes.
    const began = new Map<string, number>();
    const t0 = Date.now();
    report = await runChaos(
      {
        payments: aim.payments, keep: aim.keep, seed, processes: 1, databaseUrl, runDir: topology.opts.runDir, plant: bug,
        kinds: aim.kinds, faultRate: aim.rate, quiesceMs: aim.quiesceMs ?? 20_000,
        ...(aim.accounts === undefined ? {} : { faultAccounts: aim.accounts }),
        ...(aim.ops === undefined ? {} : { faultOps: aim.ops }),
        ...(aim.webhookDelayMs === undefined ? {} : { webhookDelayMs: aim.webhookDelayMs }),
        ...(aim.releaseMode === undefined ? {} : { releaseMode: aim.releaseMode }),
        ...(aim.shortKeysShare === undefined ? {} : { shortKeysShare: aim.shortKeysShare }),
        vaultedShare: aim.vaultedShare ?? 0,
        ...(aim.settleTimeoutMs === undefined ? {} : { settleTimeoutMs: aim.settleTimeoutMs }),
        onProgress: (p) => {
          if (!began.has(p.phase)) began.set(p.phase, Date.now());
        },
      },
      topology,
    );
    const seen = Object.entries(report.violations_by_invariant).filter(([, n]) => n > 0);
    const phases = [...began.entries()].map(([phase, at], i, all) => `${phase} ${(((all[i + 1]?.[1] ?? Date.now()) - at) / 1000).toFixed(1)}`).join(', ');
    log(`${bug}: seed ${seed}, ${report.payments} payments, ${report.operations} operations, ${report.faults} faults, ${report.duration_s} s (${phases}; ${((Date.now() - t0) / 1000).toFixed(1)} with the stop): ${seen.length === 0 ? 'no violation' : seen.map(([k, n]) => `${k} ${n}`).join(', ')}`);
    if (report.details.violations.some((v) => EXPECTED_INVARIANTS[bug].includes(v.invariant))) return { bug, report, caught: true, runs: tryNo + 1 };
    // A miss says what each fault did, so a CI log shows where the aim went wide.
    for (const f of report.details.executed) log(`  ${f.kind}${f.op === undefined ? '' : ` (${f.op})`} at op ${f.atOp}, ${f.firedAtMs} ms: ${f.result}`);
  }
  return { bug, report: report!, caught: false, runs: tries };
}
