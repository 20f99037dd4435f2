// CPU time from /proc, per role, for the bench's cpu_ms_per_payment: the gateway processes and the
// sandbox process by pid; PostgreSQL as the backends serving the bench's own databases plus the
// server's auxiliary processes (WAL writer, checkpointer, ... — shared with anything else using
// the server); Redis as the redis-server listening on the bench's port (shared likewise).
// Linux only; a process that ends between two samples takes its CPU with it.

import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ = 100 on Linux

export interface CpuSample {
  readonly gateway: number;
  readonly postgres: number;
  readonly redis: number;
  readonly sandbox: number;
}

function statMs(pid: number | string): { name: string; ms: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { name, ms: (Number(f[11]) + Number(f[12])) * TICK_MS };
  } catch {
    return null; // the process ended
  }
}

function cmdline(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

export interface CpuTargets {
  readonly gatewayPids: readonly number[];
  readonly sandboxPid: number;
  /** PostgreSQL databases whose backends count (the bench's and its sandbox's). */
  readonly databases: readonly string[];
  readonly redisPort: number;
}

/** CPU ms used so far by each role. */
export function cpuSample(t: CpuTargets): CpuSample {
  const sum = (pids: readonly number[]): number => pids.reduce((s, p) => s + (statMs(p)?.ms ?? 0), 0);
  let postgres = 0;
  let redis = 0;
  const dbs = new Set(t.databases);
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const s = statMs(pid);
    if (s === null) continue;
    if (s.name === 'postgres') {
      // Backends: "postgres: 15/main: <user> <database> <host>(<port>) <state>"; auxiliaries have no client address.
      const cmd = cmdline(pid);
      const backend = /^postgres: (?:\S+: )?\S+ (\S+) \S+\(\d+\)/.exec(cmd);
      if (backend === null || dbs.has(backend[1]!)) postgres += s.ms;
    } else if (s.name === 'redis-server') {
      if (new RegExp(`:${t.redisPort}\\b`).test(cmdline(pid))) redis += s.ms;
    }
  }
  return { gateway: sum(t.gatewayPids), postgres, redis, sandbox: sum([t.sandboxPid]) };
}

export function cpuDelta(before: CpuSample, after: CpuSample): CpuSample {
  return { gateway: after.gateway - before.gateway, postgres: after.postgres - before.postgres, redis: after.redis - before.redis, sandbox: after.sandbox - before.sandbox };
}
