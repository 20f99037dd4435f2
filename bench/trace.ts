// node --import tsx bench/trace.ts [--payments N] [--concurrency C] [--seconds S]
// Profiling aid for the lifecycle stage (not part of the bench's figures). Runs the gateway in this
// process (role all, like bench/server.ts) with every pg round trip counted and timed, then:
//   1. N sequential lifecycles (create manual -> capture -> read): each HTTP request's latency, the
//      round trips it caused by statement, and for each payment the hops recorded in the database
//      (transition times, outbox row written -> published -> claimed -> done);
//   2. optionally C closed loops for S seconds (run under `node --cpu-prof` to see where CPU goes).
//   3. optionally (--failfast N) N sequential creates with every breaker open: latency and round trips.
// Its own database (switchyard_bench_trace, recreated) and queue prefix.

import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createApiApp } from '../src/api/app.ts';
import { startRuntime } from '../src/app/runtime.ts';
import { databaseUrlFromEnv, withDatabase } from '../src/store/database-url.ts';
import { createDatabase } from '../src/store/db.ts';
import { createMerchant } from '../src/store/merchants.ts';
import { benchConfig, recreateDatabase } from './config.ts';
import { closedLoop, HttpClient, percentile, round } from './lib.ts';

const { values } = parseArgs({
  options: {
    payments: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '0' },
    seconds: { type: 'string', default: '5' },
    /** Write a V8 CPU profile of the concurrent phase only (read it with bench/cpu-summary.ts). */
    profile: { type: 'string' },
    /** After the other phases: every sandbox down, every breaker open, then N sequential creates (each answered 201 failed). */
    failfast: { type: 'string', default: '0' },
  },
});

// ---- round-trip accounting: every query any pg.Client sends in this process ----
interface Stat { n: number; ms: number }
let phase = 'setup';
const byPhase = new Map<string, Map<string, Stat>>();
const normalize = (text: string): string => text.replace(/\s+/g, ' ').replace(/\$\d+/g, '?').slice(0, 110);
const clientProto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const original = clientProto.query;
clientProto.query = function patched(this: unknown, ...args: unknown[]): unknown {
  const first = args[0];
  const text = typeof first === 'string' ? first : typeof (first as { text?: unknown })?.text === 'string' ? (first as { text: string }).text : '?';
  const key = normalize(text);
  const started = performance.now();
  const stats = byPhase.get(phase) ?? new Map<string, Stat>();
  byPhase.set(phase, stats);
  const s = stats.get(key) ?? { n: 0, ms: 0 };
  stats.set(key, s);
  s.n++;
  const result = original.apply(this, args);
  if (result !== undefined && typeof (result as Promise<unknown>).then === 'function') {
    (result as Promise<unknown>).then(() => { s.ms += performance.now() - started; }, () => { s.ms += performance.now() - started; });
  }
  return result;
};

function dump(title: string, stats: Map<string, Stat> | undefined, per: number): void {
  if (stats === undefined) return;
  const rows = [...stats.entries()].sort((a, b) => b[1].n - a[1].n);
  const total = rows.reduce((t, [, s]) => t + s.n, 0);
  const ms = rows.reduce((t, [, s]) => t + s.ms, 0);
  console.log(`\n== ${title}: ${round(total / per, 1)} round trips and ${round(ms / per, 1)} ms of pg time per payment`);
  for (const [k, s] of rows) console.log(`${String(round(s.n / per, 2)).padStart(6)} x ${String(round(s.ms / s.n, 2)).padStart(6)} ms  ${k}`);
}

const card = { type: 'card', test_card: '4242424242424242' };

/** CPU ms used so far by this process and by every postgres and redis-server process (from /proc). */
function cpuNow(): { node: number; postgres: number; redis: number } {
  const tick = 10; // USER_HZ = 100 on Linux
  let postgres = 0;
  let redis = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(f[11]) + Number(f[12])) * tick;
      if (name === 'postgres') postgres += ms;
      else if (name === 'redis-server') redis += ms;
    } catch {
      // the process ended
    }
  }
  const u = process.cpuUsage();
  return { node: (u.user + u.system) / 1000, postgres, redis };
}

function cpuLine(before: ReturnType<typeof cpuNow>, after: ReturnType<typeof cpuNow>, per: number): string {
  const d = (k: 'node' | 'postgres' | 'redis'): number => round((after[k] - before[k]) / per, 1);
  return `CPU ms per lifecycle: gateway+driver ${d('node')}, postgres ${d('postgres')} (all databases: other sessions too), redis ${d('redis')}`;
}

/** Runs `fn` under the V8 profiler when --profile is given (the last profiled phase wins the file). */
async function profiled<T>(fn: () => Promise<T>): Promise<T> {
  if (values.profile === undefined) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(values.profile, JSON.stringify(profile));
    session.disconnect();
  }
}

async function failFastPhase(http: HttpClient, auth: Record<string, string>, rt: Awaited<ReturnType<typeof startRuntime>>, n: number): Promise<void> {
  for (const a of ['stripe_eu', 'adyen_eu']) await http.json('POST', `/_sandbox/${a}/outage`, {}, { seconds: 600 });
  const create = (amount: number) => http.json('POST', '/v1/payments', { ...auth, 'idempotency-key': randomBytes(8).toString('hex') }, {
    amount, currency: 'EUR', reference: 'ff', capture_method: 'manual', payment_method: card,
  });
  const deadline = Date.now() + 60_000;
  while (!['stripe_eu', 'adyen_eu'].every((a) => rt.breakers.state(a) === 'open')) {
    if (Date.now() > deadline) throw new Error('breakers did not open within 60 s');
    await Promise.all([1000, 150_000, 1000, 150_000].map((a) => create(a)));
  }
  await new Promise((r) => setTimeout(r, 1_000));
  phase = 'failfast';
  const ms: number[] = [];
  const cpu0 = cpuNow();
  await profiled(async () => {
    for (let i = 0; i < n; i++) {
      const r = await create(1000);
      if (r.status !== 201 || r.json['status'] !== 'failed') throw new Error(`fail-fast create answered ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
      ms.push(r.ms);
    }
  });
  const cpu1 = cpuNow();
  console.log(`\nfail-fast creates: ${n} sequential, p50 ${round(percentile(ms, 50))} ms  p90 ${round(percentile(ms, 90))} ms  max ${round(Math.max(...ms))} ms`);
  console.log(cpuLine(cpu0, cpu1, n).replace('lifecycle', 'create'));
  dump('all round trips, fail-fast phase', byPhase.get('failfast'), n);
}

async function main(): Promise<void> {
  const name = 'switchyard_bench_trace';
  const url = withDatabase(databaseUrlFromEnv(), name);
  await recreateDatabase(url, name);
  const database = createDatabase(url, { max: 2 });
  const key = (await createMerchant(database.db, { name: 'trace' })).apiKey;
  await database.close();

  const { listenApi } = await import('../src/api/server.ts');
  const server = await listenApi(0, '127.0.0.1');
  const rt = await startRuntime({
    role: 'all', databaseUrl: url, redisUrl: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', configFile: benchConfig(),
    queuePrefix: `sytrace_${randomBytes(3).toString('hex')}`, webhookBaseUrl: `http://127.0.0.1:${server.port}`, log: () => undefined,
  });
  server.attach(createApiApp(rt, { log: () => undefined, rateLimits: null }));
  const http = new HttpClient(server.port, 64);
  const auth = { authorization: `Bearer ${key}` };
  const timings: Record<string, number[]> = { create: [], capture: [], read: [] };
  const ids: string[] = [];

  const lifecycle = async (record: boolean): Promise<number> => {
    const t0 = performance.now();
    const created = await http.json('POST', '/v1/payments', { ...auth, 'idempotency-key': randomBytes(8).toString('hex') }, {
      amount: 1000, currency: 'EUR', reference: 'trace', capture_method: 'manual', payment_method: card,
    });
    if (created.status !== 201) throw new Error(`create ${created.status} ${JSON.stringify(created.json)}`);
    const id = String(created.json['id']);
    const captured = await http.json('POST', `/v1/payments/${id}/capture`, { ...auth, 'idempotency-key': randomBytes(8).toString('hex') }, {});
    if (captured.status !== 200) throw new Error(`capture ${captured.status}`);
    const read = await http.json('GET', `/v1/payments/${id}`, auth);
    if (record) {
      timings['create']!.push(created.ms);
      timings['capture']!.push(captured.ms);
      timings['read']!.push(read.ms);
      ids.push(id);
    }
    return performance.now() - t0;
  };

  try {
    for (let i = 0; i < 3; i++) await lifecycle(false); // warm-up
    await new Promise((r) => setTimeout(r, 500));
    const n = Number(values.payments);
    phase = 'sequential';
    const cpu0 = cpuNow();
    for (let i = 0; i < n; i++) await lifecycle(true);
    const cpu1 = cpuNow();
    await new Promise((r) => setTimeout(r, 500)); // let trailing webhooks and merchant events settle
    phase = 'after';
    console.log(`sequential lifecycles: ${n}`);
    for (const [k, v] of Object.entries(timings)) console.log(`  ${k.padEnd(8)} p50 ${round(percentile(v, 50))} ms  p90 ${round(percentile(v, 90))} ms  max ${round(Math.max(...v))} ms`);
    console.log(cpuLine(cpu0, cpu1, n));
    dump('all round trips, sequential phase', byPhase.get('sequential'), n);

    // Hops from the database: per payment, relative to the API's first transition.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const hops = await db.query<{ payment_id: string; what: string; t: number }>(`
      WITH p AS (SELECT unnest($1::text[]) AS id),
      t0 AS (SELECT payment_id, min(at) AS at FROM payment_transitions WHERE payment_id IN (SELECT id FROM p) GROUP BY payment_id)
      SELECT x.payment_id, x.what, extract(epoch FROM (x.t - t0.at)) * 1000 AS t FROM (
        SELECT payment_id, 'transition ' || origin || ' ' || from_state || '->' || to_state || ' ' || outcome AS what, at AS t FROM payment_transitions WHERE payment_id IN (SELECT id FROM p)
        UNION ALL SELECT payment_id, 'outbox ' || kind || coalesce(' ' || (payload->>'op'), '') || coalesce(' ' || (payload->>'type'), '') || ' written', created_at FROM outbox WHERE payment_id IN (SELECT id FROM p)
        UNION ALL SELECT payment_id, 'outbox ' || kind || coalesce(' ' || (payload->>'op'), '') || coalesce(' ' || (payload->>'type'), '') || ' published', published_at FROM outbox WHERE payment_id IN (SELECT id FROM p) AND published_at IS NOT NULL
        UNION ALL SELECT payment_id, 'outbox ' || kind || coalesce(' ' || (payload->>'op'), '') || coalesce(' ' || (payload->>'type'), '') || ' done', done_at FROM outbox WHERE payment_id IN (SELECT id FROM p) AND done_at IS NOT NULL
      ) x JOIN t0 USING (payment_id) ORDER BY x.payment_id, x.t`, [ids]);
    const byWhat = new Map<string, number[]>();
    for (const h of hops.rows) {
      const list = byWhat.get(h.what) ?? [];
      list.push(Number(h.t));
      byWhat.set(h.what, list);
    }
    console.log('\n== hops (ms after the create transition; p50 / max over payments; DB and JS clocks are the same host)');
    const lines = [...byWhat.entries()].map(([what, ts]) => ({ what, p50: percentile(ts, 50), max: Math.max(...ts), n: ts.length }));
    for (const l of lines.sort((a, b) => a.p50 - b.p50)) console.log(`${String(round(l.p50)).padStart(8)} ${String(round(l.max)).padStart(8)}  ${l.what} (${l.n})`);
    await db.end();

    const c = Number(values.concurrency);
    if (c > 0) {
      phase = 'concurrent';
      const c0 = cpuNow();
      const stats = await profiled(() => closedLoop(c, Number(values.seconds), () => lifecycle(false)));
      const c1 = cpuNow();
      const per = stats.ok;
      console.log(`\nconcurrent: ${c} loops, ${round(stats.ok / stats.seconds, 1)} lifecycles/s, p50 ${round(percentile(stats.latencies, 50))} ms, errors ${stats.errors} ${stats.firstError ?? ''}`);
      console.log(cpuLine(c0, c1, per));
      dump('all round trips, concurrent phase', byPhase.get('concurrent'), per);
    }
    const f = Number(values.failfast);
    if (f > 0) await failFastPhase(http, auth, rt, f);
  } finally {
    http.close();
    await server.close(2_000);
    await rt.stop();
  }
}

await main();
