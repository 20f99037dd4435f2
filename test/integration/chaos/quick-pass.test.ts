// `.ci/run`'s quick chaos pass: the CLI, as an operator runs it, over 300 payments with every
// fault kind — kill -9 of API and worker processes, a Redis restart, Postgres connections cut —
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

beforeAll(async () => {
  db = await createTestDatabase('chaos_quick');
});
afterAll(async () => {
  await db?.drop();
});

function runChaosCli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'chaos/main.ts', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('chaos quick pass', () => {
  it('300 payments under every fault kind: no violation, nothing in flight, exit 0', async () => {
    const record = join(tmpdir(), `sy-chaos-quick-${process.pid}.json`);
    const r = await runChaosCli(['--payments', '300', '--seed', '20261130', '--concurrency', '40', '--json', '--quiesce', '120', '--record', record], { ...process.env, DATABASE_URL: db.url });
    const lines = r.stdout.trim().split('\n');
    const report = JSON.parse(lines[lines.length - 1]!) as Record<string, unknown> & { faults_by_kind: Record<string, number>; violations_by_invariant: Record<string, number> };
    expect(Object.keys(report.violations_by_invariant).sort()).toEqual([...INVARIANTS].sort());
    expect(Object.keys(report.faults_by_kind).sort()).toEqual([...FAULT_KINDS].sort());
    for (const kind of FAULT_KINDS) expect(report.faults_by_kind[kind], kind).toBeGreaterThan(0);
    expect(report['kills']).toBeGreaterThan(0);
    const details = (JSON.parse(readFileSync(record, 'utf8')) as { violations: unknown[] }).violations;
    expect({ violations: report.violations_by_invariant, in_flight: report['in_flight'], details, stderr: r.stderr.slice(-2000) }).toMatchObject({
      violations: Object.fromEntries(INVARIANTS.map((k) => [k, 0])), in_flight: 0,
    });
    expect(r.code).toBe(0);
  }, 600_000);

  it('bad input is one clear line and exit 2', async () => {
    const r = await runChaosCli(['--payments', 'many'], { ...process.env, DATABASE_URL: db.url });
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('--payments must be a positive integer');
  });
});
