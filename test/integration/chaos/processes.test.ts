// The chaos harness supervises its processes: one that exits during start is started again (and
// counted), as systemd or Kubernetes would, instead of being left down for the rest of the run.

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManagedProcess } from '../../../chaos/processes.ts';
import { freePort } from '../helpers/redis-server.ts';

let managed: ManagedProcess | null = null;
afterEach(async () => {
  await managed?.stop(2_000);
  managed = null;
});

/** A process that exits with code 1 on its first `failures` starts, then serves /readyz. */
function flakyScript(counter: string, failures: number, port: number): string {
  return `
const fs = require('node:fs');
const n = fs.existsSync(${JSON.stringify(counter)}) ? Number(fs.readFileSync(${JSON.stringify(counter)}, 'utf8')) : 0;
fs.writeFileSync(${JSON.stringify(counter)}, String(n + 1));
if (n < ${failures}) { console.error('start ' + (n + 1) + ': failing'); process.exit(1); }
require('node:http').createServer((req, res) => res.end('ok')).listen(${port}, '127.0.0.1');
`;
}

describe('ManagedProcess', () => {
  it('starts a process that exits during start again, counts each exit, and resolves once it is ready', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-chaos-proc-'));
    const port = await freePort();
    managed = new ManagedProcess({
      name: 'flaky', port, args: ['-e', flakyScript(join(dir, 'count'), 3, port)], env: process.env,
      logFile: join(dir, 'flaky.log'), readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
    await managed.start(30_000);
    expect(managed.startFailures).toBe(3);
    expect(managed.alive).toBe(true);
    expect(await managed.ready()).toBe(true);
    expect(readFileSync(join(dir, 'count'), 'utf8')).toBe('4');
  });

  it('gives up at the deadline, naming the exits, and reports itself not ready', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-chaos-proc-'));
    const port = await freePort();
    managed = new ManagedProcess({
      name: 'broken', port, args: ['-e', flakyScript(join(dir, 'count'), 1_000, port)], env: process.env,
      logFile: join(dir, 'broken.log'), readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
    // Long enough for a few exits even on a loaded machine (each node start plus the 500 ms pause).
    await expect(managed.start(8_000)).rejects.toThrow(/^broken not ready after 8000 ms \(\d+ exits during start, last code 1\)/);
    expect(managed.startFailures).toBeGreaterThanOrEqual(1);
    expect(await managed.ready()).toBe(false);
  });
});
