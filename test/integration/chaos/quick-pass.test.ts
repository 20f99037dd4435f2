// `.ci/run`'s quick chaos pass: the CLI, as an operator runs it, over 150 payments with every
// fault kind — kill -9 of API, worker and vault processes, a Redis restart, Postgres connections cut —
// must end with every invariant holding and nothing in flight. The seed is fixed so a failure
// reproduces with the command the report prints.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULT_KINDS } from '../../../chaos/plan.ts';
import { INVARIANTS } from '../../../chaos/invariants.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;

interface Report {
  readonly violations: number;
  readonly in_flight: number;
  readonly kills: number;
  readonly vaulted_payments: number;
  readonly start_failures: number;
  readonly processes_down: number;
  readonly faults_by_kind: Record<string, number>;
  readonly violations_by_invariant: Record<string, number>;
  readonly customers: Record<string, number>;
}

beforeAll(async () => {
  db = await createTestDatabase('chaos_quick');
});
afterAll(async () => {
  await db?.drop();
});

/**
 * Runs the chaos CLI in a process group of its own: when the test run is cancelled (`vitest run
 * --bail 1` after another file failed), the whole group goes at once (the CLI, its gateway
 * processes, sandboxes and Redis), instead of the run finishing its minutes first.
 */
function runChaosCli(args: readonly string[], env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'chaos/main.ts', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    const cancel = (): void => {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
    };
    signal?.addEventListener('abort', cancel, { once: true });
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => {
      signal?.removeEventListener('abort', cancel);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('chaos quick pass', () => {
  it('150 payments under every fault kind: no violation, nothing in flight, exit 0', async ({ signal }) => {
    // Process timing is not seeded, so a run is not exactly repeatable. A failed run is printed in
    // full and the pass is run once more with the next seed; it must then be clean. A violation that
    // shows in one run of two is still printed here, for someone to chase (docs/reliability.md).
    let last: { report: Report; details: unknown[]; code: number | null; stderr: string } | null = null;
    for (const seed of [20261130, 20261131]) {
      const record = join(tmpdir(), `sy-chaos-quick-${process.pid}-${seed}.json`);
      const r = await runChaosCli(['--payments', '150', '--seed', String(seed), '--concurrency', '40', '--json', '--quiesce', '120', '--record', record, '--vault-process'], { ...process.env, DATABASE_URL: db.url }, signal);
      if (signal.aborted) throw new Error('the run was cancelled');
      const lines = r.stdout.trim().split('\n');
      const report = JSON.parse(lines[lines.length - 1]!) as Report;
      const details = (JSON.parse(readFileSync(record, 'utf8')) as { violations: unknown[] }).violations;
      last = { report, details, code: r.code, stderr: r.stderr.slice(-2000) };
      if (report.violations === 0 && report.in_flight === 0 && report.processes_down === 0 && r.code === 0) break;
      console.error(`chaos quick pass, seed ${seed}: ${JSON.stringify({ violations: report.violations_by_invariant, in_flight: report.in_flight, processes_down: report.processes_down, details })}`);
    }
    const { report, details, code, stderr } = last!;
    expect(Object.keys(report.violations_by_invariant).sort()).toEqual([...INVARIANTS].sort());
    expect(Object.keys(report.faults_by_kind).sort()).toEqual([...FAULT_KINDS].sort());
    for (const kind of FAULT_KINDS) expect(report.faults_by_kind[kind], kind).toBeGreaterThan(0);
    expect(report.kills).toBeGreaterThan(0);
    // Issue 44: some payments paid with a vaulted card, the vault in its own process (kill_vault above).
    expect(report.vaulted_payments).toBeGreaterThan(0);
    // Customer authentication (issue 27): both seeds plan every lifecycle (seed 20261131 only one
    // complete_late, which a decline at create can take away), so: completions, customers who let the
    // deadline pass, and some who came back to the merchant's return_url through the gateway.
    const lifecycles = new Set(Object.keys(report.customers).map((k) => k.split('.')[0]!.replace('_8260', '')));
    expect(lifecycles.has('complete') && (lifecycles.has('abandon') || lifecycles.has('complete_late')), JSON.stringify(report.customers)).toBe(true);
    expect(Object.entries(report.customers).filter(([k]) => k.endsWith('.returned')).reduce((n, [, c]) => n + c, 0)).toBeGreaterThan(5);
    // Exits during start are counted (a supervisor restarted them); every process was up at the checks.
    expect(report.start_failures).toBeGreaterThanOrEqual(0);
    expect(report.processes_down).toBe(0);
    expect({ violations: report.violations_by_invariant, in_flight: report.in_flight, details, stderr }).toMatchObject({
      violations: Object.fromEntries(INVARIANTS.map((k) => [k, 0])), in_flight: 0,
    });
    expect(code).toBe(0);
  }, 900_000);

  it('bad input is one clear line and exit 2', async () => {
    const r = await runChaosCli(['--payments', 'many'], { ...process.env, DATABASE_URL: db.url });
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('--payments must be a positive integer');
  });
});
