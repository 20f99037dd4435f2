// `switchyard start` and `npm start` during a dependency blip: a process started while its
// database's connections are being terminated, or while Redis is down, waits (503 on /readyz)
// and comes up once they are back, with no manual step; an error that cannot heal fails at once
// in one line. Real processes, the shared PostgreSQL (only this file's database is cut), and a
// private redis-server that is stopped and started for real.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withDatabase } from '../../../src/store/database-url.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { freePort, startPrivateRedis } from '../helpers/redis-server.ts';
import type { PrivateRedis } from '../helpers/redis-server.ts';
import { twoStripeConfig } from '../helpers/runtime.ts';

let db: TestDatabase;
let redis: PrivateRedis;
let configFile: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  // Not migrated: the process's own migrations are part of what the blip interrupts.
  db = await createTestDatabase('start_retry', { migrate: false });
  redis = await startPrivateRedis();
  configFile = join(mkdtempSync(join(tmpdir(), 'sy-start-retry-')), 'switchyard.yaml');
  writeFileSync(configFile, twoStripeConfig());
});
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  }
});
afterAll(async () => {
  await redis?.stop();
  await db?.drop();
});

interface Started {
  readonly child: ChildProcess;
  readonly port: number;
  stderr(): string;
  exited(): Promise<number | null>;
}

async function start(args: readonly string[], env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, [...args.map((a) => (a === '$PORT' ? String(port) : a))], {
    env: { ...process.env, DATABASE_URL: db.url, REDIS_URL: redis.url, SWITCHYARD_CONFIG: configFile, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  child.stdout.resume();
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, port, stderr: () => err, exited: () => exit };
}

async function readyz(port: number): Promise<number> {
  return fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  }, () => 0);
}

async function until(what: string, p: Started, cond: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (p.child.exitCode !== null) throw new Error(`exited (${p.child.exitCode}) waiting for ${what}: ${p.stderr()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${p.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const retryLines = (text: string, what: string): string[] => text.split('\n').filter((l) => l.includes(`"start: ${what} not available, retry `));

/** Terminates every backend of this file's database, over and over, from a connection to another database. */
function terminateInLoop(dbName: string): { stop(): Promise<number> } {
  let running = true;
  let terminated = 0;
  const done = (async () => {
    const client = new pg.Client({ connectionString: withDatabase(db.url, 'postgres') });
    await client.connect();
    try {
      while (running) {
        const r = await client.query<{ n: number }>('SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
        terminated += r.rows[0]!.n;
        await new Promise((res) => setTimeout(res, 5));
      }
    } finally {
      await client.end();
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return terminated;
    },
  };
}

describe('start during a blip', () => {
  it('an API process started while its database connections are being terminated comes up once they stop', async () => {
    const cut = terminateInLoop(db.name);
    let terminated = 0;
    try {
      const p = await start(['bin/switchyard.js', 'start', '--role', 'api', '--port', '$PORT'], {});
      await until('a PostgreSQL retry line', p, () => retryLines(p.stderr(), 'PostgreSQL').length + retryLines(p.stderr(), 'PostgreSQL or Redis').length >= 2, 30_000);
      // Waiting, not ready, not gone.
      expect(await readyz(p.port)).toBe(503);
      expect(p.child.exitCode).toBeNull();
      terminated = await cut.stop();
      await until('/readyz 200', p, async () => (await readyz(p.port)) === 200, 60_000);
      expect(terminated).toBeGreaterThan(0);
      // One line per retry, each naming what it waits for and why, never the whole stack.
      for (const line of retryLines(p.stderr(), 'PostgreSQL')) expect(line).toMatch(/retry \d+ in \d+\.\d s \(\d+ s left\): .+"\}$/);
      expect(p.stderr()).not.toMatch(/\n\s+at /);
    } finally {
      await cut.stop();
    }
  });

  it('a worker process started while Redis is down comes up when Redis is started', async () => {
    await redis.stop();
    try {
      const p = await start(['bin/switchyard.js', 'start', '--role', 'worker', '--port', '$PORT'], {});
      await until('two Redis retry lines', p, () => retryLines(p.stderr(), 'Redis').length >= 2, 30_000);
      expect(await readyz(p.port)).toBe(503);
      await redis.restart();
      await until('/readyz 200', p, async () => (await readyz(p.port)) === 200, 60_000);
      expect(retryLines(p.stderr(), 'Redis')[0]).toContain(`cannot reach Redis at ${redis.url}`);
    } finally {
      await redis.restart();
    }
  });
});

describe('errors that will not heal fail at once, in one line', () => {
  it('switchyard start with a PostgreSQL role that does not exist', async () => {
    const began = Date.now();
    const p = await start(['bin/switchyard.js', 'start', '--role', 'all'], { DATABASE_URL: withDatabase(db.url, db.name).replace('postgres@', 'no_such_role@') });
    expect(await p.exited()).toBe(1);
    expect(Date.now() - began).toBeLessThan(20_000);
    const lines = p.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^PostgreSQL at postgres:\/\/no_such_role@127\.0\.0\.1:5432\/switchyard_test_start_retry_\w+ refused us: role "no_such_role" does not exist \(28000\): check the user, password and database name in DATABASE_URL$/);
  });

  it('npm start with a config that does not validate, even while Redis is down', async () => {
    await redis.stop();
    const bad = join(mkdtempSync(join(tmpdir(), 'sy-start-bad-')), 'switchyard.yaml');
    writeFileSync(bad, 'connectors:\n  stripe_a: { type: paypal }\nrouting:\n  default: { priority: [stripe_a] }\n');
    const began = Date.now();
    const p = await start(['--import', 'tsx', 'src/main.ts'], { SWITCHYARD_CONFIG: bad });
    try {
      expect(await p.exited()).toBe(1);
      expect(Date.now() - began).toBeLessThan(20_000);
      const lines = p.stderr().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^switchyard: cannot start: .*connectors\.stripe_a/);
    } finally {
      await redis.restart();
    }
  });
});
