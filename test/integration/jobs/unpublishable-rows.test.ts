// Outbox rows of a connector account no longer in the config can never be published. They must not
// stop the relay's sweep for every other account (it used to take the oldest 500 due rows and stop
// when a full batch published nothing), /readyz and a metric show them, and once the account has
// been absent past the orphan grace they are dead-lettered (account_not_configured), replayable
// when the account is back.
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthRoutes } from '../../../src/api/health-routes.ts';
import { requestCapture } from '../../../src/app/payment-service.ts';
import { startRuntime } from '../../../src/app/runtime.ts';
import type { Runtime } from '../../../src/app/runtime.ts';
import type { Payment } from '../../../src/core/payment.ts';
import { listDeadLetters, replayDeadLetter } from '../../../src/jobs/dlq.ts';
import { callQueueName, outboxJobId } from '../../../src/jobs/queues.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { REDIS_URL, settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';
import { until } from '../helpers/until.ts';

let gw: TestGateway;
/** The runtime serving the test now (the first one is gw.rt; the second test restarts with other configs). */
let rt: Runtime;

beforeAll(async () => {
  // Every row through the relay and BullMQ: the sweep is what must reach the orphaned row.
  gw = await startTestGateway('jobs_unpublishable', twoStripeConfig(), { dispatchAtCommit: false, relayRepublishMs: 1_000 });
  rt = gw.rt;
});
afterAll(async () => {
  await rt?.stop();
  await gw?.db.drop();
}, 60_000);

async function captureRow(p: Payment): Promise<{ id: number; status: string; last_error: string | null } | null> {
  const r = await rt.database.db.execute<{ id: string; status: string; last_error: string | null }>(sql`
    SELECT id, status, last_error FROM outbox WHERE payment_id = ${p.id} AND kind = 'provider_call' AND payload->>'op' = 'capture' AND published_at IS NOT NULL ORDER BY id DESC LIMIT 1`);
  const row = r.rows[0];
  return row === undefined ? null : { ...row, id: Number(row.id) };
}

/** Requests a capture whose job waits in its paused queue: the row is published, its job not run. */
async function captureHeld(p: Payment): Promise<number> {
  const queue = rt.queues.get(callQueueName(p.attempts[0]!.connector));
  await queue.pause();
  await requestCapture(rt, gw.merchantId, p, 1000, true);
  const row = await until(() => captureRow(p), (r) => r !== null, 'the capture row published');
  await until(() => queue.getJobState(outboxJobId(row!.id)), (s) => s !== 'unknown', 'its job queued');
  return row!.id;
}

async function readyz(runtime: Runtime): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> {
  const server = express().use(healthRoutes(runtime)).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
  } finally {
    server.close();
  }
}

/** The payment's state as the runtime serving now reads it. */
async function stateOf(p: Payment): Promise<string> {
  const r = await rt.database.db.execute<{ state: string }>(sql`SELECT state FROM payments WHERE id = ${p.id}`);
  return r.rows[0]!.state;
}

function configFile(yaml: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sy-unpublishable-')), 'switchyard.yaml');
  writeFileSync(file, yaml);
  return file;
}

/** A process on the same database and queues with another config (a deploy that removed or brought back an account). */
async function restartWith(yaml: string, orphanGraceMs?: number): Promise<Runtime> {
  await rt.stop();
  rt = await startRuntime({
    role: 'all', databaseUrl: gw.db.url, redisUrl: REDIS_URL, configFile: configFile(yaml), queuePrefix: gw.prefix, relaySweepMs: 200, relayRepublishMs: 1_000,
    dispatchAtCommit: false, log: () => undefined, ...(orphanGraceMs === undefined ? {} : { orphanGraceMs }),
  });
  return rt;
}

describe('rows the relay cannot publish', () => {
  it('600 of them ahead of an orphaned payment\'s row do not stop the sweep; readiness and the metric show them', async () => {
    const p = await gw.waitFor((await gw.pay()).id, settled);
    expect(p.state).toBe('authorized');
    // Older than anything else due: an account removed from the config long ago left these behind.
    await rt.database.db.execute(sql`
      INSERT INTO outbox (kind, payload, connector, run_at)
      SELECT 'provider_call', '{}'::jsonb, 'stripe_gone', now() - interval '1 hour' - g * interval '1 second' FROM generate_series(1, 600) g`);

    // The capture's job is lost (a Redis flush after its publish): only the sweep can publish it again.
    const id = await captureHeld(p);
    const queue = rt.queues.get(callQueueName('stripe_a'));
    await queue.remove(outboxJobId(id));
    await rt.database.db.execute(sql`UPDATE outbox SET published_at = now() - interval '1 hour' WHERE id = ${id}`);
    await queue.resume();

    const done = await gw.waitFor(p.id, (x) => x.state !== 'capturing', 15_000);
    expect(done.state).toBe('captured');
    expect(await captureRow(p)).toMatchObject({ status: 'done' });

    const ready = await readyz(rt);
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
    expect(ready.body.checks['outbox']).toMatch(/^600 row\(s\) wait for connector accounts not in the config: stripe_gone \(600\);/);
    expect((await rt.metrics.text()).body).toContain('switchyard_outbox_unpublishable_rows{connector="stripe_gone"} 600');
    await rt.database.db.execute(sql`DELETE FROM outbox WHERE connector = 'stripe_gone'`);
  });

  it('an account absent past the grace: its rows are dead-lettered account_not_configured, and replayed once it is back', async () => {
    const p = await gw.waitFor((await gw.pay()).id, settled);
    expect(p.attempts[0]!.connector).toBe('stripe_a');
    const id = await captureHeld(p);

    // stripe_a renamed away: its capture row can no longer be published.
    const renamed = twoStripeConfig().replace(/stripe_a/g, 'stripe_c');
    await restartWith(renamed, 3_000);
    expect((await readyz(rt)).body.checks['outbox']).toMatch(/^1 row\(s\) wait for connector accounts not in the config: stripe_a \(1\);/);
    const dead = await until(() => listDeadLetters(rt.database.db), (d) => d.some((x) => x.id === id), 'the capture row dead-lettered', 15_000);
    expect(dead.find((x) => x.id === id)!.lastError).toMatch(/^account_not_configured: connector account stripe_a is not in the config/);
    expect((await readyz(rt)).body.checks['outbox']).toBe('ok');
    expect(await stateOf(p)).toBe('capturing');

    // stripe_a is back: the operator replays the dead letter, and the capture goes out.
    await restartWith(twoStripeConfig());
    expect(await replayDeadLetter(rt.database.db, rt.queues, rt.queueFor('provider_call', 'stripe_a')!, id)).toBe(true);
    await rt.queues.get(callQueueName('stripe_a')).resume();
    rt.relay.kick();
    expect(await until(() => stateOf(p), (s) => s !== 'capturing', 'the capture replayed', 15_000)).toBe('captured');
    const a: SandboxControl = rt.sandboxes.find((s) => s.account === 'stripe_a')!;
    expect((await a.ledger()).find((e) => e.reference === p.attempts[0]!.id)!.captured).toBe(1000);
  }, 90_000);
});
