// The operator's CLI through its launcher: payments stuck / show / resolve and webhooks
// redeliver, against a gateway whose payments cannot move (API role only: no workers).
import { spawn } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_ENV, runCli } from '../helpers/cli.ts';
import type { CliResult } from '../helpers/cli.ts';
import { freePort, startPrivateRedis } from '../helpers/redis-server.ts';
import { REDIS_URL, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway('obs_cli', twoStripeConfig(), { role: 'api', dispatchAtCommit: false });
});
afterAll(async () => gw?.close());

function cli(args: string[]): Promise<CliResult> {
  return runCli(args, { DATABASE_URL: gw.db.url, REDIS_URL, SWITCHYARD_CONFIG: gw.rt.config.file, ...OPERATOR_ENV.alice });
}

/** Parks a payment for review (authorizing -> needs_review is a legal edge), untouched for `ago`. */
async function park(id: string, ago: string): Promise<void> {
  await gw.db.db.execute(sql`UPDATE payments SET state = 'needs_review', updated_at = now() - ${ago}::interval WHERE id = ${id}`);
}

describe('switchyard payments', () => {
  it('stuck lists payments untouched longer than --older-than, longest first; show prints the timeline', async () => {
    const [old, older, fresh] = [await gw.pay(), await gw.pay(), await gw.pay()];
    await park(old.id, '2 hours');
    await park(older.id, '3 hours');

    const listed = await cli(['payments', 'stuck', '--older-than', '1h', '--json']);
    expect(listed.code).toBe(0);
    const body = JSON.parse(listed.stdout) as { count: number; payments: { id: string; state: string; connector: string; stuckSeconds: number }[] };
    expect(body.payments.map((p) => p.id)).toEqual([older.id, old.id]);
    expect(body.payments[0]).toMatchObject({ state: 'needs_review', connector: 'stripe_a' });
    expect(body.payments[0]!.stuckSeconds).toBeGreaterThan(3 * 3600 - 60);
    const all = JSON.parse((await cli(['payments', 'stuck', '--older-than', '0s', '--json'])).stdout) as { payments: { id: string }[] };
    expect(all.payments.map((p) => p.id)).toContain(fresh.id);
    const text = await cli(['payments', 'stuck']);
    expect(text.stdout).toContain('2 stuck payment(s), longest first:');
    expect(text.stdout).toMatch(new RegExp(`${older.id}\\s+needs_review\\s+stripe_a\\s+3h 0\\dm`));

    const shown = await cli(['payments', 'show', old.id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`${old.id}  needs_review  1000 EUR`);
    expect(shown.stdout).toMatch(/api\s+submit\s+created -> authorizing/);
    expect(shown.stdout).toContain('attempt 1');
  });

  it('resolve settles a needs_review payment through transition() with origin operator and the note, audited in the timeline', async () => {
    const p = await gw.pay();
    await park(p.id, '1 hour');
    const prefix = ['--queue-prefix', `${gw.prefix}_cli`];
    const done = await cli(['payments', 'resolve', p.id, '--as', 'failed', '--note', 'Stripe dashboard shows no charge (OPS-42)', ...prefix]);
    expect(done.stderr).not.toContain('switchyard:');
    expect([done.code, done.stdout.trim().split('\n').at(-1)]).toEqual([0, `payment ${p.id}: needs_review -> failed by operator alice (transition ${/transition (\d+)/.exec(done.stdout)?.[1]}; see switchyard payments show ${p.id})`]);
    // The provider's records first (the API role never prepared a PaymentIntent: none is found), and that absence proves nothing.
    expect(done.stdout).toMatch(new RegExp(`attempt 1 \\S+ on stripe_a \\(asked the provider now\\): shows nothing_found`));
    expect(done.stdout).toContain('an absent record proves nothing');
    const row = await gw.db.db.execute<{ state: string }>(sql`SELECT state FROM payments WHERE id = ${p.id}`);
    expect(row.rows[0]!.state).toBe('failed');
    const timeline = JSON.parse((await cli(['payments', 'show', p.id, '--json'])).stdout) as { timeline: { origin: string; from: string; to: string; reason: string; input: { type: string; note: string } }[] };
    expect(timeline.timeline.at(-1)).toMatchObject({ origin: 'operator', from: 'needs_review', to: 'failed', reason: 'operator: Stripe dashboard shows no charge (OPS-42)', input: { type: 'operator_resolved', note: 'Stripe dashboard shows no charge (OPS-42)', operator: 'alice', provider: [{ shows: 'nothing_found' }] } });

    // The audit row names the operator whose token the CLI held, committed with the transition.
    const audit = await gw.db.db.execute<{ operator: string; action: string; before: unknown; after: unknown; note: string }>(sql`SELECT operator, action, before, after, note FROM operator_audit WHERE target = ${p.id}`);
    expect(audit.rows).toEqual([{ operator: 'alice', action: 'payment.resolve', before: { state: 'needs_review' }, after: { state: 'failed' }, note: 'Stripe dashboard shows no charge (OPS-42)' }]);

    // Already failed: step() refuses, the command says why in one line — and nothing is audited.
    const again = await cli(['payments', 'resolve', p.id, '--as', 'voided', '--note', 'again', ...prefix]);
    expect([again.code, again.stderr.trim()]).toEqual([1, `payment ${p.id} not resolved: operator resolution needs a payment in needs_review, not failed`]);
    expect((await gw.db.db.execute(sql`SELECT 1 FROM operator_audit WHERE target = ${p.id}`)).rows).toHaveLength(1);
    const listed = JSON.parse((await cli(['audit', 'list', '--target', p.id, '--operator', 'alice', '--since', '1h', '--json'])).stdout) as { audit: { action: string; target: string }[] };
    expect(listed.audit.map((a) => [a.action, a.target])).toEqual([['payment.resolve', p.id]]);
  });

  it('refuses bad input with one line and a non-zero exit', async () => {
    const blank = await cli(['payments', 'resolve', 'pay_x', '--as', 'failed', '--note', '   ']);
    expect([blank.code, blank.stderr.trim()]).toEqual([1, '--note must say why (it is kept in the payment timeline)']);
    const noNote = await cli(['payments', 'resolve', 'pay_x', '--as', 'failed']);
    expect(noNote.code).toBe(1);
    expect(noNote.stderr).toContain("required option '--note <text>' not specified");
    const badAs = await cli(['payments', 'resolve', 'pay_x', '--as', 'settled', '--note', 'x']);
    expect(badAs.code).toBe(1);
    expect(badAs.stderr).toContain("argument 'settled' is invalid. Allowed choices are authorized, captured, failed, voided.");
    const missing = await cli(['payments', 'show', 'pay_nope']);
    expect([missing.code, missing.stderr.trim()]).toEqual([1, 'no payment pay_nope']);
    const unknown = await cli(['payments', 'resolve', 'pay_nope', '--as', 'failed', '--note', 'x', '--queue-prefix', `${gw.prefix}_cli`]);
    expect([unknown.code, unknown.stderr.trim()]).toEqual([1, 'no payment pay_nope']);
    const badAge = await cli(['payments', 'stuck', '--older-than', 'soon']);
    expect(badAge.code).toBe(1);
    expect(badAge.stderr).toContain('--older-than "soon" is not a duration such as 90s, 30m, 1h or 2d');
    const nothing = await cli(['webhooks', 'redeliver']);
    expect([nothing.code, nothing.stderr.trim()]).toEqual([1, 'give an event id (evt_...) or --dead to redeliver every delivery that gave up']);
  });
});

describe('switchyard webhooks redeliver', () => {
  it('queues one event again, or every dead delivery in the window, each with an outbox row for the relay', async () => {
    const db = gw.db.db;
    await db.execute(sql`INSERT INTO webhook_endpoints (id, merchant_id, url, enabled_events) VALUES ('we_obs_1', ${gw.merchantId}, 'http://127.0.0.1:1/hook', ARRAY['*'])`);
    for (const n of [1, 2, 3]) {
      await db.execute(sql`INSERT INTO merchant_events (id, merchant_id, payment_id, type, payload) VALUES (${`evt_obs_${n}`}, ${gw.merchantId}, null, 'payment.authorized', '{}'::jsonb)`);
      await db.execute(sql`INSERT INTO event_deliveries (id, merchant_id, event_id, endpoint_id, status, attempts) VALUES (${`del_obs_${n}`}, ${gw.merchantId}, ${`evt_obs_${n}`}, 'we_obs_1', ${n === 3 ? 'succeeded' : 'dead'}, 12)`);
    }
    const bulk = await cli(['webhooks', 'redeliver', '--dead', '--since', '1h', '--json']);
    expect(bulk.code).toBe(0);
    expect((JSON.parse(bulk.stdout) as { deliveries: string[] }).deliveries.sort()).toEqual(['del_obs_1', 'del_obs_2']);
    expect(bulk.stderr).toContain('redeliver [##############################] 2/2');
    const states = await db.execute<{ id: string; status: string }>(sql`SELECT id, status FROM event_deliveries ORDER BY id`);
    expect(states.rows).toEqual([{ id: 'del_obs_1', status: 'pending' }, { id: 'del_obs_2', status: 'pending' }, { id: 'del_obs_3', status: 'succeeded' }]);
    const queued = await db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM outbox WHERE kind = 'event_delivery' AND status = 'pending'`);
    expect(queued.rows[0]!.n).toBe(2);

    const one = await cli(['webhooks', 'redeliver', 'evt_obs_3']);
    expect([one.code, one.stdout.trim()]).toEqual([0, 'event evt_obs_3: 1 delivery(ies) queued again (del_obs_3); a running gateway sends them']);
    const none = await cli(['webhooks', 'redeliver', 'evt_nope']);
    expect([none.code, none.stderr.trim()]).toEqual([1, 'no event evt_nope']);
    // One audit row per event queued again, under the operator's name.
    const audit = await db.execute<{ operator: string; target: string; after: { deliveries: string[] } }>(sql`SELECT operator, target, after FROM operator_audit WHERE action = 'webhook.redeliver' ORDER BY target`);
    expect(audit.rows.map((a) => [a.operator, a.target, a.after.deliveries])).toEqual([['alice', 'evt_obs_1', ['del_obs_1']], ['alice', 'evt_obs_2', ['del_obs_2']], ['alice', 'evt_obs_3', ['del_obs_3']]]);
  });
});

describe('switchyard dlq replay', () => {
  it('frees the job id in the queue of the row\'s kind (a webhook delivery is not a provider call), so the relay can publish it again', async () => {
    const prefix = `${gw.prefix}_dlq`;
    const dead = await gw.db.db.execute<{ id: string }>(sql`
      INSERT INTO outbox (kind, payload, run_at, status, attempts, last_error) VALUES ('event_delivery', '{"deliveryId":"del_x","seq":0}'::jsonb, now(), 'dead', 8, 'boom') RETURNING id`);
    const id = Number(dead.rows[0]!.id);
    // The job that exhausted its retries is still in its queue under the same id.
    const { Queue } = await import('bullmq');
    const deliveries = new Queue('webhooks.deliveries', { connection: { url: REDIS_URL }, prefix });
    try {
      await deliveries.add('outbox', { outboxId: id }, { jobId: `ob_${id}` });
      const replayed = await cli(['dlq', 'replay', String(id), '--queue-prefix', prefix]);
      expect(replayed.code).toBe(0);
      expect(await deliveries.getJob(`ob_${id}`)).toBeUndefined();
      const row = await gw.db.db.execute<{ status: string }>(sql`SELECT status FROM outbox WHERE id = ${id}`);
      expect(row.rows[0]!.status).toBe('pending');
    } finally {
      await deliveries.obliterate({ force: true });
      await deliveries.close();
    }
  });
});

describe('switchyard start', () => {
  it('refuses a weak admin token in one line', async () => {
    const weak = await runCli(['start', '--role', 'api'], { DATABASE_URL: gw.db.url, REDIS_URL, SWITCHYARD_CONFIG: gw.rt.config.file, SWITCHYARD_ADMIN_TOKEN: 'short' });
    expect([weak.code, weak.stderr.trim()]).toEqual([1, 'SWITCHYARD_ADMIN_TOKEN must be at least 24 characters without spaces, commas or colons (try: openssl rand -hex 24)']);
  });

  it('a worker started with --port serves /metrics beside its health routes, and logs JSON lines; SWITCHYARD_METRICS_PORT moves it to its own listener behind SWITCHYARD_METRICS_TOKEN', async () => {
    const port = await freePort();
    const metricsPort = await freePort();
    const token = 'metrics-token-0123456789abcdef';
    // Its own Redis: a worker on the default queue prefix must not take other processes' jobs.
    const redis = await startPrivateRedis();
    const child = spawn('node', ['bin/switchyard.js', 'start', '--role', 'worker', '--port', String(port)], {
      env: { ...process.env, DATABASE_URL: gw.db.url, REDIS_URL: redis.url, SWITCHYARD_CONFIG: gw.rt.config.file, SWITCHYARD_METRICS_PORT: String(metricsPort), SWITCHYARD_METRICS_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    try {
      let text = '';
      const deadline = Date.now() + 30_000;
      while (!text.includes('switchyard_breaker_state') && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { authorization: `Bearer ${token}` } }).then((r) => (r.ok ? r.text() : ''), () => '');
      }
      expect(text).toContain('switchyard_breaker_state{connector="stripe_a",state="closed"} 1');
      expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      expect(text).toContain('switchyard_payments_needs_review');
      expect((await fetch(`http://127.0.0.1:${port}/v1/payments`)).status).toBe(404);
      const first = JSON.parse(err.split('\n')[0]!) as Record<string, unknown>;
      expect(first).toMatchObject({ level: 'info', service: 'switchyard' });
      expect(String(first['msg'])).toMatch(/^database postgres:\/\/.*: up to date$/);
    } finally {
      const exited = new Promise<number | null>((r) => child.once('exit', r));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      await redis.stop();
    }
  });
});
