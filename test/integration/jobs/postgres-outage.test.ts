// PostgreSQL refuses every connection to this test's database for longer than a job's retry
// budget (ALLOW_CONNECTIONS false, its backends terminated): the job fails for good, and so would
// any write marking its row dead. The row's fate must not hang on that write: once PostgreSQL is
// back the relay's sweep finds the failed job and runs the row again (an outage is not a reason to
// park a capture), while a row that keeps failing for another reason still reaches the dead letters.
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCapture } from '../../../src/app/payment-service.ts';
import type { Payment } from '../../../src/core/payment.ts';
import { callQueueName, outboxJobId } from '../../../src/jobs/queues.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { withDatabase } from '../../../src/store/database-url.ts';
import { settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';
import { until } from '../helpers/until.ts';

let gw: TestGateway;
let a: SandboxControl;
/** What the capture call does under test: the provider's answer, or a failure before it is sent. */
let captureFails: Error | null = null;
let captureRuns = 0;

const ATTEMPTS = 3;

beforeAll(async () => {
  gw = await startTestGateway('jobs_pg_outage', twoStripeConfig(), {
    // Every row through the relay and BullMQ, so the job is what meets the outage.
    dispatchAtCommit: false,
    // A short retry budget (3 tries, 100 ms then 200 ms apart): the outage outlasts it in a second.
    jobAttempts: ATTEMPTS, jobBackoffMs: 100, relayRepublishMs: 1_000,
    aroundCall: async (effect, call) => {
      if (effect.op !== 'capture') return call();
      captureRuns += 1;
      if (captureFails !== null) throw captureFails;
      return call();
    },
  });
  a = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
});
afterAll(async () => gw?.close(), 60_000);

async function admin<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: withDatabase(gw.db.url, 'postgres') });
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

/** This test's database refuses every new connection, and its open ones are cut (never another file's). */
async function refuseConnections(): Promise<void> {
  await admin(async (c) => {
    await c.query(`ALTER DATABASE ${pg.escapeIdentifier(gw.db.name)} ALLOW_CONNECTIONS false`);
    await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [gw.db.name]);
  });
}

async function allowConnections(): Promise<void> {
  await admin((c) => c.query(`ALTER DATABASE ${pg.escapeIdentifier(gw.db.name)} ALLOW_CONNECTIONS true`));
}

/** Reads through the gateway's pool, which may still hand out a connection cut by the outage: read again. */
async function read<T>(work: () => Promise<T>): Promise<T> {
  for (let tryNo = 1; ; tryNo++) {
    try {
      return await work();
    } catch (err) {
      if (tryNo >= 20) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

interface Row {
  readonly id: number;
  readonly status: string;
  readonly attempts: number;
  readonly last_error: string | null;
  readonly published: boolean;
}

async function captureRow(p: Payment): Promise<Row | null> {
  const r = await read(() => gw.rt.database.db.execute<{ id: string; status: string; attempts: number; last_error: string | null; published: boolean }>(sql`
    SELECT id, status, attempts, last_error, published_at IS NOT NULL AS published FROM outbox
     WHERE payment_id = ${p.id} AND kind = 'provider_call' AND payload->>'op' = 'capture' ORDER BY id DESC LIMIT 1`));
  const row = r.rows[0];
  return row === undefined ? null : { ...row, id: Number(row.id) };
}

async function authorized(): Promise<Payment> {
  const p = await gw.waitFor((await gw.pay()).id, settled);
  expect(p.state).toBe('authorized');
  return p;
}

describe('a job that fails for good', () => {
  it('while PostgreSQL refuses connections past its retries: its row runs once PostgreSQL is back, not dead-lettered', async () => {
    const p = await authorized();
    const queue = gw.rt.queues.get(callQueueName('stripe_a'));
    // Held in the queue until the outage has begun, so the job is what meets it.
    await queue.pause();
    await requestCapture(gw.rt, gw.merchantId, p, 1000, true);
    const row = await until(() => captureRow(p), (r) => r?.published === true, 'the capture row published');
    const jobId = outboxJobId(row!.id);
    await until(() => queue.getJobState(jobId), (s) => s !== 'unknown', 'the capture job queued');

    await refuseConnections();
    try {
      await queue.resume();
      // Every try refused: the job is in BullMQ's failed set, and nothing could write the row.
      await until(() => queue.getJobState(jobId), (s) => s === 'failed', 'the capture job failed for good', 20_000);
    } finally {
      await allowConnections();
    }
    expect(captureRuns).toBe(0);

    const done = await read(() => gw.waitFor(p.id, (x) => x.state !== 'capturing', 20_000));
    expect(done.state).toBe('captured');
    expect(captureRuns).toBe(1);
    expect(await captureRow(p)).toMatchObject({ status: 'done' });
    expect((await a.ledger()).find((e) => e.reference === p.attempts[0]!.id)!.captured).toBe(1000);
  }, 90_000);

  it('for another reason: dead-lettered, also when the worker\'s write of it is lost', async () => {
    const p = await authorized();
    captureFails = new Error('planted: the capture path throws');
    captureRuns = 0;
    await requestCapture(gw.rt, gw.merchantId, p, 1000, true);
    const dead = await until(() => captureRow(p), (r) => r?.status === 'dead', 'the capture row dead-lettered by the worker');
    expect(dead!.last_error).toBe('planted: the capture path throws');
    expect(captureRuns).toBe(ATTEMPTS);

    // As if the worker's write had been lost (PostgreSQL away at that moment): the sweep decides the same.
    await gw.rt.database.db.execute(sql`UPDATE outbox SET status = 'pending' WHERE id = ${dead!.id}`);
    const again = await until(() => captureRow(p), (r) => r?.status === 'dead', 'the capture row dead-lettered by the sweep', 10_000);
    expect(again!.last_error).toBe('planted: the capture path throws');
    expect(captureRuns).toBe(ATTEMPTS);
    captureFails = null;
  });

  it('on infrastructure again and again after its row was claimed: dead-lettered after three jobs\' worth, not re-run for ever', async () => {
    const p = await authorized();
    captureFails = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    captureRuns = 0;
    await requestCapture(gw.rt, gw.merchantId, p, 1000, true);
    const dead = await until(() => captureRow(p), (r) => r?.status === 'dead', 'the capture row dead-lettered', 30_000);
    expect(dead!.last_error).toMatch(/^infrastructure: connect ECONNREFUSED .*\(claimed 9 times without finishing\)$/);
    expect(captureRuns).toBe(3 * ATTEMPTS);
    captureFails = null;
  }, 60_000);
});
