// The process a supervisor signals is the one that stops (issue 43). Under `npm start` that is npm:
// a SIGTERM to npm's pid (not its process group) must reach the gateway, which drains and exits,
// leaving nothing running. SIGHUP reloads the config when sent to the process package.json's start
// command runs (it execs node: no shell in between); npm itself forwards no SIGHUP, so a gateway
// whose npm is gone stops gracefully rather than running on unsupervised.
// Real processes, the shared PostgreSQL, a private redis-server.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';
import type { GatewayProcess } from '../helpers/gateway-process.ts';
import { freePort, startPrivateRedis } from '../helpers/redis-server.ts';
import type { PrivateRedis } from '../helpers/redis-server.ts';
import { until } from '../helpers/until.ts';

let db: TestDatabase;
let redis: PrivateRedis;
let configFile: string;
const running: GatewayProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase('npm_signals');
  redis = await startPrivateRedis();
  configFile = join(mkdtempSync(join(tmpdir(), 'sy-npm-signals-')), 'switchyard.yaml');
  writeFileSync(configFile, readFileSync('config/switchyard.yaml', 'utf8'));
});
afterEach(async () => {
  for (const g of running.splice(0)) await g.stop('SIGKILL');
});
afterAll(async () => {
  await redis?.stop();
  await db?.drop();
});

async function launch(launcher: 'npm start' | 'start script'): Promise<GatewayProcess> {
  const port = await freePort();
  const g = await startGatewayProcess(launcher, {
    DATABASE_URL: db.url, REDIS_URL: redis.url, SWITCHYARD_CONFIG: configFile, PORT: String(port),
    SWITCHYARD_METRICS_TOKEN: '', SWITCHYARD_METRICS_PORT: '', SWITCHYARD_START_TIMEOUT: '10s',
  });
  running.push(g);
  return g;
}

/** Every process left in the launched process group (it was started detached: its group is its pid). */
function groupMembers(pgid: number): string[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '-g', String(pgid)], { encoding: 'utf8' }).split('\n').map((l) => l.trim()).filter((l) => l !== '');
  } catch {
    return []; // ps exits 1 when it lists nothing
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The gateway's own pid, as it prints it at start. */
function gatewayPid(g: GatewayProcess): number {
  const m = /pid (\d+): SIGTERM or SIGINT stops it gracefully; SIGHUP reloads/.exec(g.output());
  if (m === null) throw new Error(`no pid line in:\n${g.output()}`);
  return Number(m[1]);
}

describe('npm start under a supervisor', () => {
  it('SIGTERM to the npm process drains the gateway and exits 0, leaving no process behind', async () => {
    const g = await launch('npm start');
    const node = await until(async () => (/pid (\d+): SIGTERM/.test(g.output()) ? gatewayPid(g) : 0), (p) => p > 0, 'the gateway pid line');
    expect(node).not.toBe(g.pid);
    expect((await fetch(`${g.url}/readyz`)).status).toBe(200);

    process.kill(g.pid, 'SIGTERM');
    const exit = await g.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(g.output()).toContain('SIGTERM: shutting down');
    await until(async () => groupMembers(g.pid), (m) => m.length === 0, 'every process of npm start to be gone', 10_000);
    expect(alive(node)).toBe(false);
    await expect(fetch(`${g.url}/healthz`)).rejects.toThrow();
  });

  it('SIGHUP to the process the start script runs reloads the config; SIGTERM to it stops it', async () => {
    const g = await launch('start script');
    // The script execs node: the shell's pid is the gateway's.
    await until(async () => g.output(), (o) => /pid \d+: SIGTERM/.test(o), 'the gateway pid line');
    expect(gatewayPid(g)).toBe(g.pid);

    process.kill(g.pid, 'SIGHUP');
    const ready = await until(
      async () => (await (await fetch(`${g.url}/readyz`)).json()) as { config: { last_reload: { result: string; trigger: string } | null; file_on_disk: string } },
      (r) => r.config.last_reload !== null,
      'the SIGHUP reload in /readyz',
    );
    expect(ready.config).toMatchObject({ last_reload: { result: 'unchanged', trigger: 'signal' }, file_on_disk: 'same' });
    expect(alive(g.pid)).toBe(true);

    process.kill(g.pid, 'SIGTERM');
    expect(await g.exited).toEqual({ code: 0, signal: null });
    expect(g.output()).toContain('SIGTERM: shutting down');
  });

  it('a SIGHUP that ends npm (npm forwards none) stops the gateway gracefully instead of leaving it unsupervised', async () => {
    const g = await launch('npm start');
    const node = await until(async () => (/pid (\d+): SIGTERM/.test(g.output()) ? gatewayPid(g) : 0), (p) => p > 0, 'the gateway pid line');
    process.kill(g.pid, 'SIGHUP');
    await g.exited;
    await until(async () => alive(node), (a) => !a, 'the gateway to stop once npm is gone', 15_000);
    expect(groupMembers(g.pid)).toEqual([]);
  });
});
