// npm run bench -- [--seconds S] [--json]
// Runs, side by side on this machine: the raw Postgres limit R, the gateway's lifecycle throughput,
// added latency at a fixed 200 ms provider delay, webhook intake against a bare express endpoint,
// and fail-fast with every breaker open. Its own database (switchyard_bench, recreated each run) and
// queue prefix; loopback only; every loop is bounded. With --json the last line is one JSON object.

import { randomBytes } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { databaseUrlFromEnv, withDatabase } from '../src/store/database-url.ts';
import { createDatabase } from '../src/store/db.ts';
import { createMerchant } from '../src/store/merchants.ts';
import { benchConfig, recreateDatabase } from './config.ts';
import { addedLatency, failFast, lifecycle, settle } from './gateway-stages.ts';
import { BENCH_STRIPE_SECRET, intakeSideBySide } from './intake.ts';
import { HttpClient, round, startChild } from './lib.ts';
import type { Child } from './lib.ts';
import { rawLimit } from './raw.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
    /** Run only these stages (e.g. 1,2 or 5), for profiling one of them; the JSON line then has only their fields. */
    stages: { type: 'string', default: '1,2,3,4,5,6' },
  },
});
const stages = new Set(values.stages.split(',').map((x) => Number(x.trim())));
// The lifecycle ratio needs R; added latency runs at half the lifecycle rate.
if (stages.has(3)) {
  stages.add(1);
  stages.add(2);
}
if (stages.has(4)) stages.add(2);
const seconds = Number(values.seconds);
if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 600) throw new Error('--seconds must be a number in (0, 600]');
const say = (line: string): void => {
  (values.json ? process.stderr : process.stdout).write(`${line}\n`);
};

/** The gateway's pool size (startRuntime's default dbPoolMax): R is measured at the same concurrency. */
const GATEWAY_POOL = 20;
const MERCHANTS = 8;
const LOOPS_PER_MERCHANT = 2;
const PROVIDER_DELAY_MS = 200;
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

async function main(): Promise<void> {
  // BENCH_DATABASE: another name, so the bench's own test does not collide with a manual run.
  const name = process.env['BENCH_DATABASE'] ?? 'switchyard_bench';
  const url = withDatabase(databaseUrlFromEnv(), name);
  say(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${round(totalmem() / 2 ** 30)} GiB; ${seconds} s per stage`);
  await recreateDatabase(url, name);

  const result: Record<string, unknown> = {};
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

  const stats = new pg.Client({ connectionString: url });
  await stats.connect();
  let gateway: Child | null = null;
  let baseline: Child | null = null;
  let http: HttpClient | null = null;
  try {
    gateway = await startChild('gateway', {
      DATABASE_URL: url, REDIS_URL, BENCH_CONFIG_FILE: benchConfig(),
      BENCH_QUEUE_PREFIX: `sybench_${randomBytes(3).toString('hex')}`, STRIPE_WEBHOOK_SECRET: BENCH_STRIPE_SECRET,
    });
    http = new HttpClient(gateway.port, 256);

    let life: Awaited<ReturnType<typeof lifecycle>> | null = null;
    if (stages.has(2)) {
      say(`2. lifecycle: ${MERCHANTS} merchants x ${LOOPS_PER_MERCHANT} loops, create (manual) -> capture -> read over HTTP`);
      life = await lifecycle(http, stats, keys, LOOPS_PER_MERCHANT, seconds);
      say(`   ${round(life.paymentsPerS)} payments/s, ${round(life.transitionsPerS)} transitions/s, ${round(life.commitsPerPayment, 2)} commits/payment (${round(life.writeCommitsPerPayment, 2)} that wrote), p50 ${round(life.p50Ms)} ms p99 ${round(life.p99Ms)} ms per lifecycle, ${life.errors} errors${life.firstError === null ? '' : ` (${life.firstError})`}`);
      Object.assign(result, {
        payments_per_s: round(life.paymentsPerS), transitions_per_s: round(life.transitionsPerS),
        commits_per_payment: round(life.commitsPerPayment, 2), write_commits_per_payment: round(life.writeCommitsPerPayment, 2),
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
      say(`4. added latency: creates at ${rate}/s (half the lifecycle rate), sandbox answering after ${PROVIDER_DELAY_MS} ms per call (backlog drained in ${round(drained / 1000, 1)} s first)`);
      const lat = await addedLatency(http, stats, keys, rate, seconds, PROVIDER_DELAY_MS);
      say(`   added p50 ${round(lat.p50Ms)} ms, p99 ${round(lat.p99Ms)} ms over ${lat.requests} requests (${round(lat.callsPerCreate, 2)} provider calls each), ${lat.errors} errors${lat.firstError === null ? '' : ` (${lat.firstError})`}`);
      result['added_latency_ms'] = { p50: round(lat.p50Ms, 2), p99: round(lat.p99Ms, 2) };
    }

    if (stages.has(5)) {
      // Events about payments the gateway knows (from stage 2), as a provider sends them: each is
      // verified, stored, and applied (an ignored duplicate fact) by the inbound worker meanwhile.
      const known = await stats.query<{ paymentId: string; attemptId: string; providerRef: string }>(
        `SELECT payment_id AS "paymentId", id AS "attemptId", provider_ref AS "providerRef" FROM payment_attempts
          WHERE connector = 'stripe_eu' AND provider_ref IS NOT NULL ORDER BY created_at DESC LIMIT 2000`,
      );
      say(`5. webhook intake: signed Stripe events about ${known.rows.length === 0 ? 'unknown payments' : `${known.rows.length} known payments`}, 50 connections; gateway and bare express in alternating slices`);
      baseline = await startChild('baseline');
      const { gateway: gw, bare } = await intakeSideBySide(gateway.port, baseline.port, 'stripe_eu', 50, seconds, known.rows);
      await baseline.stop();
      baseline = null;
      const intakeRatio = bare.rps === 0 ? 0 : gw.rps / bare.rps;
      say(`   gateway ${round(gw.rps)} req/s p50 ${round(gw.p50Ms)} ms p99 ${round(gw.p99Ms)} ms (${gw.errors} errors${gw.firstError === null ? '' : `: ${gw.firstError}`})`);
      say(`   bare express ${round(bare.rps)} req/s p99 ${round(bare.p99Ms)} ms; intake_ratio ${round(intakeRatio, 3)}`);
      Object.assign(result, { intake_rps: round(gw.rps), intake_p99_ms: round(gw.p99Ms, 2), baseline_rps: round(bare.rps), intake_ratio: round(intakeRatio, 3) });
    }

    if (stages.has(6)) {
      const drained = await settle(stats);
      say(`6. fail-fast: every sandbox down, every breaker open (backlog drained in ${round(drained / 1000, 1)} s first)`);
      const ff = await failFast(http, keys, Math.min(seconds, 5));
      say(`   p50 ${round(ff.p50Ms, 2)} ms, p99 ${round(ff.p99Ms, 2)} ms over ${ff.requests} requests; answers ${JSON.stringify(ff.statuses)}`);
      result['failfast_p99_ms'] = round(ff.p99Ms, 2);
    }

    if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    http?.close();
    await baseline?.stop();
    await gateway?.stop();
    await stats.end();
  }
}

await main();
