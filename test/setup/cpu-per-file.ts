// Per-file CPU for docs/testing.md: with SWITCHYARD_TEST_CPU_LOG set, each test file appends one JSON
// line {file, cpu_ms, wall_ms} to that file when it ends. CPU is its worker process's own and that
// of the child processes it reaped (gateways, CLIs, sandboxes: /proc's cutime/cstime), not the
// database's or Redis's. Without the variable this does nothing.

import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';

const log = process.env['SWITCHYARD_TEST_CPU_LOG'];
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime + stime + cutime + cstime of this process, in ms. */
function cpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command: state is field 3, utime 14, stime 15, cutime 16, cstime 17 (1-based).
  return [11, 12, 13, 14].reduce((n, i) => n + Number(fields[i]), 0) * TICK_MS;
}

if (log !== undefined && log !== '') {
  // Taken when the setup file loads, before the test file's own imports: those count too.
  const cpu0 = cpuMs();
  const wall0 = Date.now();
  afterAll(() => {
    const file = relative(process.cwd(), expect.getState().testPath ?? 'unknown');
    appendFileSync(log, `${JSON.stringify({ file, cpu_ms: cpuMs() - cpu0, wall_ms: Date.now() - wall0 })}\n`);
  });
}
