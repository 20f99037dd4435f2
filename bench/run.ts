// npm run bench -- [--seconds S] [--json] [--processes K] [--stages 1,2,...]
// Runs, side by side on this machine: the raw Postgres limit R, the gateway's lifecycle throughput
// (with provider calls and CPU per payment), added latency against a direct Stripe integration at
// a fixed 200 ms provider delay, webhook intake against a bare express endpoint, a spike at 3x the
// measured capacity, and fail-fast with every breaker open. The gateway runs as K replicas
// (role all, round-robin), the sandboxes in their own process (`switchyard sandbox`). Its own
// database (switchyard_bench, recreated each run) and queue prefix; loopback only; every loop is
// bounded. With --json the last line is one JSON object.

import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { databaseName, databaseUrlFromEnv, withDatabase } from '../src/store/database-url.ts';
import { createDatabase } from '../src/store/db.ts';
import { createMerchant } from '../src/store/merchants.ts';
import { benchConfig, recreateDatabase } from './config.ts';
import { cpuDelta, cpuSample } from './cpu.ts';
import type { CpuSample } from './cpu.ts';
import { directClient, directSlice } from './direct.ts';
import type { DirectClient } from './direct.ts';
import { control, failFast, gatewaySlice, lifecycle, providerLatency, settle } from './gateway-stages.ts';
import { BENCH_STRIPE_SECRET, intakeSideBySide } from './intake.ts';
import { freePort, GatewayPool, HttpClient, percentile, round, startChild, startSandboxProcess } from './lib.ts';
import type { Child } from './lib.ts';
import { rawLimit } from './raw.ts';
import { spike } from './spike.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
    /** Gateway replicas (role all each), requests spread round-robin. */
    processes: { type: 'string', default: '2' },
    /** Run only these stages (e.g. 1,2 or 5), for profiling one of them; the JSON line then has only their fields. */
    stages: { type: 'string', default: '1,2,3,4,5,6,7' },
  },
});
const stages = new Set(values.stages.split(',').map((x) => Number(x.trim())));
// The lifecycle ratio needs R; added latency runs at half the lifecycle rate, the spike at 3x it.
if (stages.has(3)) {
  stages.add(1);
  stages.add(2);
}
if (stages.has(4) || stages.has(6)) stages.add(2);
const seconds = Number(values.seconds);
if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 600) throw new Error('--seconds must be a number in (0, 600]');
const processes = Number(values.processes);
if (!Number.isInteger(processes) || processes < 1 || processes > 8) throw new Error('--processes must be a whole number in [1, 8]');
const say = (line: string): void => {
  (values.json ? process.stderr : process.stdout).write(`${line}\n`);
};

/** The gateway's pool size (startRuntime's default dbPoolMax): R is measured at the same concurrency. */
const GATEWAY_POOL = 20;
const MERCHANTS = 8;
const LOOPS_PER_MERCHANT = 2;
const PROVIDER_DELAY_MS = 200;
/** The spike's 3x phase lasts this long (or --seconds, when shorter: the quick pass). */
const SPIKE_SECONDS = 10;
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
/** The gateway's accounts (routed to) and the direct integration's own account in the same sandbox process. */
const GATEWAY_ACCOUNTS = ['stripe_eu', 'adyen_eu'];
const DIRECT_ACCOUNT = 'stripe_direct';
const DIRECT_SECRET = 'sk_test_direct';

const load = (): string => `load average ${loadavg().map((l) => round(l, 2)).join(' / ')}`;

async function providerRequests(sandbox: HttpClient): Promise<number> {
  let n = 0;
  for (const a of GATEWAY_ACCOUNTS) n += Number((await control(sandbox, `/_sandbox/${a}/requests`, undefined, 'GET'))['requests_received']);
  return n;
}

async function main(): Promise<void> {
  // BENCH_DATABASE: another name, so the bench's own test does not collide with a manual run.
  const name = process.env['BENCH_DATABASE'] ?? 'switchyard_bench';
  const url = withDatabase(databaseUrlFromEnv(), name);
  say(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${round(totalmem() / 2 ** 30)} GiB; ${seconds} s per stage; ${processes} gateway process(es); ${load()} at start`);
  await recreateDatabase(url, name);

  const result: Record<string, unknown> = { processes };
  let raw: Awaited<ReturnType<typeof rawLimit>> | null = null;
  if (stages.has(1)) {
    say(`1. raw limit: plain pg, guarded UPDATE + 2 INSERTs per transaction, ${GATEWAY_POOL} clients`);
    raw = await rawLimit(url, GATEWAY_POOL, seconds);
    say(`   R = ${round(raw.tps)} tps (${raw.commits} commits, ${raw.errors} errors)`);
    result['raw_tps'] = round(raw.tps);
  }

  const database = createDatabase(url, { max: 2 });
  const keys: string[] = [];
  for (let i = 0; i < MERCHANTS; i++) keys.push((await createMerchant(database.db, { name: `bench-${i}` })).apiKey);
  await database.close();

  const [stripePort, adyenPort, directPort, controlPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const gatewayPorts: number[] = [];
  for (let i = 0; i < processes; i++) gatewayPorts.push(await freePort());
  const configFile = benchConfig({
    stripePort, adyenPort, certDir: mkdtempSync(join(tmpdir(), 'switchyard-bench-certs-')),
    extra: { name: DIRECT_ACCOUNT, port: directPort, secretKey: DIRECT_SECRET },
  });

  const stats = new pg.Client({ connectionString: url });
  await stats.connect();
  let sandboxes: Child | null = null;
  const gateways: Child[] = [];
  let baseline: Child | null = null;
  let http: GatewayPool | null = null;
  let direct: DirectClient | null = null;
  const sandbox = new HttpClient(controlPort, 8);
  try {
    // Webhooks from the providers go to the first replica's intake (one URL per account, as a provider has).
    sandboxes = await startSandboxProcess({ configFile, databaseUrl: url, controlPort, gatewayUrl: `http://127.0.0.1:${gatewayPorts[0]!}` });
    // The direct integration's webhooks are not part of its latency, and must not load the gateway's intake.
    await control(sandbox, `/_sandbox/${DIRECT_ACCOUNT}/webhooks`, { enabled: false });
    const prefix = `sybench_${randomBytes(3).toString('hex')}`;
    // One at a time: two cores are slow to boot several at once.
    for (const port of gatewayPorts) {
      gateways.push(await startChild('gateway', {
        DATABASE_URL: url, REDIS_URL, BENCH_CONFIG_FILE: configFile, BENCH_PORT: String(port),
        BENCH_QUEUE_PREFIX: prefix, STRIPE_WEBHOOK_SECRET: BENCH_STRIPE_SECRET,
      }));
    }
    http = new GatewayPool(gateways.map((g) => g.port), 256);
    const cpuTargets = {
      gatewayPids: gateways.map((g) => g.pid), sandboxPid: sandboxes.pid,
      databases: [databaseName(url), `${databaseName(url)}_sandbox`], redisPort: Number(new URL(REDIS_URL).port || 6379),
    };

    let life: Awaited<ReturnType<typeof lifecycle>> | null = null;
    if (stages.has(2)) {
      say(`2. lifecycle: ${MERCHANTS} merchants x ${LOOPS_PER_MERCHANT} loops, create (manual) -> capture -> read over HTTP, spread over ${processes} process(es) (${load()})`);
      let cpu0: CpuSample | null = null;
      let cpu: CpuSample | null = null;
      let calls0 = 0;
      let calls = 0;
      life = await lifecycle(http, stats, keys, LOOPS_PER_MERCHANT, seconds, {
        start: async () => {
          calls0 = await providerRequests(sandbox);
          cpu0 = cpuSample(cpuTargets);
        },
        end: async () => {
          cpu = cpuDelta(cpu0!, cpuSample(cpuTargets));
          calls = (await providerRequests(sandbox)) - calls0;
        },
      });
      const per = (ms: number): number => (life!.payments === 0 ? 0 : round(ms / life!.payments, 1));
      const c = cpu as CpuSample | null;
      const cpuPer = c === null ? null : { gateway: per(c.gateway), postgres: per(c.postgres), redis: per(c.redis), sandbox: per(c.sandbox) };
      const callsPer = life.payments === 0 ? 0 : round(calls / life.payments, 2);
      say(`   ${round(life.paymentsPerS)} payments/s, ${round(life.transitionsPerS)} transitions/s, ${round(life.commitsPerPayment, 2)} commits/payment (${round(life.writeCommitsPerPayment, 2)} that wrote), p50 ${round(life.p50Ms)} ms p99 ${round(life.p99Ms)} ms per lifecycle, ${life.errors} errors${life.firstError === null ? '' : ` (${life.firstError})`}`);
      say(`   ${callsPer} provider requests per payment (counted by the sandbox); CPU ms per payment: ${JSON.stringify(cpuPer)} (postgres: the bench's databases' backends + the server's auxiliary processes; redis: the server on ${cpuTargets.redisPort}, shared with anything else using it)`);
      Object.assign(result, {
        payments_per_s: round(life.paymentsPerS), transitions_per_s: round(life.transitionsPerS),
        commits_per_payment: round(life.commitsPerPayment, 2), write_commits_per_payment: round(life.writeCommitsPerPayment, 2),
        provider_calls_per_payment: callsPer, cpu_ms_per_payment: cpuPer,
      });
    }
    if (stages.has(3) && raw !== null && life !== null) {
      const ratio = life.paymentsPerS / (raw.tps / 3);
      say(`3. lifecycle_ratio = ${round(life.paymentsPerS)} / (${round(raw.tps)} / 3) = ${round(ratio, 3)}`);
      result['lifecycle_ratio'] = round(ratio, 3);
    }

    if (stages.has(4) && life !== null) {
      const drained = await settle(stats);
      const rate = Math.max(1, round(life.paymentsPerS / 2));
      say(`4. added latency: manual-capture payments at ${rate}/s (half the lifecycle rate), the sandbox answering after ${PROVIDER_DELAY_MS} ms per call; the gateway and a direct stripe-node integration in alternating slices (backlog drained in ${round(drained / 1000, 1)} s first; ${load()})`);
      await providerLatency(sandbox, [...GATEWAY_ACCOUNTS, DIRECT_ACCOUNT], PROVIDER_DELAY_MS);
      direct = directClient(directPort, DIRECT_SECRET);
      const gw = { authMs: [] as number[], captureMs: [] as number[], minus: [] as number[], calls: 0, n: 0, errors: 0, firstError: null as string | null };
      const dr = { authMs: [] as number[], captureMs: [] as number[], n: 0, errors: 0, firstError: null as string | null };
      for (let k = 0; k < 2; k++) {
        const g = await gatewaySlice(http, stats, keys, rate, seconds / 2, PROVIDER_DELAY_MS);
        gw.authMs.push(...g.authMs);
        gw.captureMs.push(...g.captureMs);
        gw.minus.push(...g.minusProviderMs);
        gw.calls += g.callsPerCreate * g.authMs.length;
        gw.n += g.requests;
        gw.errors += g.errors;
        gw.firstError ??= g.firstError;
        const d = await directSlice(direct, rate, seconds / 2);
        dr.authMs.push(...d.authMs);
        dr.captureMs.push(...d.captureMs);
        dr.n += d.requests;
        dr.errors += d.errors;
        dr.firstError ??= d.firstError;
      }
      const p = (xs: number[], q: number): number => round(percentile(xs, q), 2);
      const added = { p50: round(p(gw.authMs, 50) - p(dr.authMs, 50), 2), p99: round(p(gw.authMs, 99) - p(dr.authMs, 99), 2) };
      say(`   authorization: gateway p50 ${p(gw.authMs, 50)} ms p99 ${p(gw.authMs, 99)} ms (${gw.n} payments, ${round(gw.authMs.length === 0 ? 0 : gw.calls / gw.authMs.length, 2)} provider calls each, ${gw.errors} errors${gw.firstError === null ? '' : `: ${gw.firstError}`}); direct p50 ${p(dr.authMs, 50)} ms p99 ${p(dr.authMs, 99)} ms (${dr.n} payments, 1 call each, ${dr.errors} errors${dr.firstError === null ? '' : `: ${dr.firstError}`})`);
      say(`   added vs direct: p50 ${added.p50} ms, p99 ${added.p99} ms; capture: gateway p50 ${p(gw.captureMs, 50)} / p99 ${p(gw.captureMs, 99)} ms, direct p50 ${p(dr.captureMs, 50)} / p99 ${p(dr.captureMs, 99)} ms`);
      say(`   round-2 figure (gateway latency minus ${PROVIDER_DELAY_MS} ms per provider call it made): p50 ${p(gw.minus, 50)} ms, p99 ${p(gw.minus, 99)} ms`);
      Object.assign(result, {
        direct_latency_ms: { p50: p(dr.authMs, 50), p99: p(dr.authMs, 99) },
        gateway_latency_ms: { p50: p(gw.authMs, 50), p99: p(gw.authMs, 99) },
        added_vs_direct_ms: added,
        added_vs_provider_time_ms: { p50: p(gw.minus, 50), p99: p(gw.minus, 99) },
      });
    }

    if (stages.has(5)) {
      // Events about payments the gateway knows (from stage 2), as a provider sends them: each is
      // verified, stored, and applied (an ignored duplicate fact) by the inbound worker meanwhile.
      const known = await stats.query<{ paymentId: string; attemptId: string; providerRef: string }>(
        `SELECT payment_id AS "paymentId", id AS "attemptId", provider_ref AS "providerRef" FROM payment_attempts
          WHERE connector = 'stripe_eu' AND provider_ref IS NOT NULL ORDER BY created_at DESC LIMIT 2000`,
      );
      say(`5. webhook intake: signed Stripe events about ${known.rows.length === 0 ? 'unknown payments' : `${known.rows.length} known payments`}, 50 connections to the first replica; gateway and bare express in alternating slices (${load()})`);
      baseline = await startChild('baseline');
      const { gateway: gw, bare } = await intakeSideBySide(gateways[0]!.port, baseline.port, 'stripe_eu', 50, seconds, known.rows);
      await baseline.stop();
      baseline = null;
      const intakeRatio = bare.rps === 0 ? 0 : gw.rps / bare.rps;
      say(`   gateway ${round(gw.rps)} req/s p50 ${round(gw.p50Ms)} ms p99 ${round(gw.p99Ms)} ms (${gw.errors} errors${gw.firstError === null ? '' : `: ${gw.firstError}`})`);
      say(`   bare express ${round(bare.rps)} req/s p99 ${round(bare.p99Ms)} ms; intake_ratio ${round(intakeRatio, 3)}`);
      Object.assign(result, { intake_rps: round(gw.rps), intake_p99_ms: round(gw.p99Ms, 2), baseline_rps: round(bare.rps), intake_ratio: round(intakeRatio, 3) });
    }

    if (stages.has(6) && life !== null) {
      const drained = await settle(stats);
      const spikeSeconds = Math.min(SPIKE_SECONDS, seconds);
      await providerLatency(sandbox, GATEWAY_ACCOUNTS, PROVIDER_DELAY_MS);
      say(`6. spike: creates at 3x the lifecycle rate for ${spikeSeconds} s, then half of it for ${seconds} s, the sandbox answering after ${PROVIDER_DELAY_MS} ms per call (backlog drained in ${round(drained / 1000, 1)} s first; ${load()})`);
      const s = await spike(http, keys, life.paymentsPerS, spikeSeconds, seconds);
      say(`   ${s.requests} requests (${round(s.spikeRate, 1)}/s, then ${round(s.afterRate, 1)}/s): answered ${s.answered} p50 ${round(s.answeredP50Ms)} ms p99 ${round(s.answeredP99Ms)} ms; shed ${s.shed} (${round((100 * s.shed) / Math.max(1, s.requests), 1)} %, p99 ${round(s.shedP99Ms, 1)} ms); other 5xx ${s.errors5xx}; other errors ${s.errorsOther}; drained ${round(s.drainS, 2)} s after the spike; answers ${JSON.stringify(s.statuses)}`);
      result['spike'] = {
        answered_p99_ms: round(s.answeredP99Ms, 1), shed_pct: round((100 * s.shed) / Math.max(1, s.requests), 1), errors_5xx: s.errors5xx,
        shed: s.shed, errors_other: s.errorsOther, drain_s: round(s.drainS, 2),
      };
    }

    if (stages.has(7)) {
      const drained = await settle(stats);
      say(`7. fail-fast: every sandbox down, every breaker of every process open (backlog drained in ${round(drained / 1000, 1)} s first; ${load()})`);
      const ff = await failFast(http, http.clients, sandbox, keys, Math.min(seconds, 5));
      say(`   p50 ${round(ff.p50Ms, 2)} ms, p99 ${round(ff.p99Ms, 2)} ms over ${ff.requests} requests; answers ${JSON.stringify(ff.statuses)}`);
      result['failfast_p99_ms'] = round(ff.p99Ms, 2);
    }

    say(`done (${load()})`);
    if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    http?.close();
    direct?.close();
    sandbox.close();
    await baseline?.stop();
    for (const g of gateways) await g.stop();
    await sandboxes?.stop();
    await stats.end();
  }
}

await main();
