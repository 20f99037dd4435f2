// An inbound-event or merchant-event job claims its outbox row with a lease, renewed while it runs
// (as a provider call's is): a job slower than its lease — here, one waiting on a lock the test
// holds while the clock moves past the lease — keeps its row, and a second worker's execution of
// the same row is refused ('claimed') instead of running it twice. The old fixed 60 s lease let the
// second one in.
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processInboundEvent } from '../../../src/webhooks/inbound/inbound-processor.ts';
import { fanOutMerchantEvent } from '../../../src/webhooks/outbound/event-fanout.ts';
import type { WebhookServices } from '../../../src/webhooks/webhook-services.ts';
import { loadAggregate } from '../../../src/store/payment-load.ts';
import { settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';
import { until } from '../helpers/until.ts';

let gw: TestGateway;
let offset = 0;
const LEASE_MS = 600;

beforeAll(async () => {
  gw = await startTestGateway('webhooks_claim_renewal', twoStripeConfig(), { now: () => new Date(Date.now() + offset), webhooks: { claimLeaseMs: LEASE_MS } });
});
afterAll(async () => gw?.close());

const services = (): WebhookServices => gw.rt.webhooks;

/** A connection of the test's own, holding a transaction open (the lock a slow job waits on). */
async function holding(statements: (c: pg.Client) => Promise<void>): Promise<{ release: () => Promise<void> }> {
  const c = new pg.Client({ connectionString: gw.db.url });
  await c.connect();
  await c.query('BEGIN');
  await statements(c);
  return {
    async release() {
      await c.query('ROLLBACK');
      await c.end();
    },
  };
}

async function claim(id: number): Promise<{ claimed_by: string | null; claimed_until: Date | null }> {
  const r = await gw.rt.database.db.execute<{ claimed_by: string | null; claimed_until: Date | null }>(sql`SELECT claimed_by, claimed_until FROM outbox WHERE id = ${id}`);
  return r.rows[0]!;
}

/**
 * Runs `first` until it holds the row, moves the clock past the old 60 s lease (and far past this
 * one), waits for the running job to renew its lease on the new clock, then runs a second
 * execution of the same row: it must find the row claimed.
 */
async function secondExecutionWhileFirstRuns(id: number, first: () => Promise<unknown>, second: () => Promise<unknown>, lock: { release: () => Promise<void> }): Promise<{ first: unknown; second: unknown }> {
  const running = first();
  try {
    await until(() => claim(id), (c) => c.claimed_by === 'first~token', 'the first execution holds the row');
    offset += 61_000;
    await until(() => claim(id), (c) => c.claimed_until !== null && new Date(c.claimed_until).getTime() > services().now().getTime(), 'the lease renewed on the moved clock', 5_000);
    const secondResult = await second();
    await lock.release();
    return { first: await running, second: secondResult };
  } catch (err) {
    await lock.release();
    await running.catch(() => undefined);
    throw err;
  }
}

describe('webhook job claims are renewed while the job runs', () => {
  it('inbound event: a second worker cannot take the row of an apply slower than its lease', async () => {
    const event = { providerEventId: 'evt_claim_renewal', connectorType: 'stripe', attemptId: null, providerRef: null, occurredAt: new Date().toISOString(), rawType: 'charge.succeeded', kind: 'ignored' };
    const inbound = await gw.rt.database.db.execute<{ id: string }>(sql`
      INSERT INTO inbound_events (connector, provider_event_id, raw_body, verified, outcome, event)
      VALUES ('stripe_a', 'evt_claim_renewal', '\\x7b7d'::bytea, true, 'pending', ${JSON.stringify(event)}::jsonb) RETURNING id`);
    const inboundId = Number(inbound.rows[0]!.id);
    // Due far away: the gateway's own relay leaves it to the test.
    const row = await gw.rt.database.db.execute<{ id: string }>(sql`
      INSERT INTO outbox (kind, payload, run_at) VALUES ('inbound_event', ${JSON.stringify({ inboundEventId: inboundId })}::jsonb, now() + interval '1 day') RETURNING id`);
    const id = Number(row.rows[0]!.id);
    // The event names no payment we know: the apply writes its inbox row to retry later, and waits on this lock.
    const lock = await holding((c) => c.query('SELECT id FROM inbound_events WHERE id = $1 FOR UPDATE', [inboundId]).then(() => undefined));

    const r = await secondExecutionWhileFirstRuns(id, () => processInboundEvent(services(), id, 'first~token'), () => processInboundEvent(services(), id, 'second~token'), lock);
    expect(r.second).toEqual({ kind: 'skipped', reason: 'claimed' });
    expect(r.first).toMatchObject({ kind: 'retry' });
    expect((await claim(id)).claimed_by).toBe('first~token');
  });

  it('merchant event: a second worker cannot take the row of a fan-out slower than its lease', async () => {
    const p = await gw.waitFor((await gw.pay()).id, settled);
    const payment = (await loadAggregate(gw.rt.database.db, p.id))!;
    const row = await gw.rt.database.db.execute<{ id: string }>(sql`
      INSERT INTO outbox (payment_id, kind, payload, run_at)
      VALUES (${p.id}, 'merchant_event', ${JSON.stringify({ type: 'merchant_event', event: 'payment.authorized', payment })}::jsonb, now() + interval '1 day') RETURNING id`);
    const id = Number(row.rows[0]!.id);
    // The fan-out's insert of its event waits on this uncommitted one for the same source row.
    const lock = await holding((c) => c.query(
      `INSERT INTO merchant_events (id, merchant_id, payment_id, type, payload, created_at, source_outbox_id) VALUES ('evt_claim_renewal_lock', $1, $2, 'payment.authorized', '{}'::jsonb, now(), $3)`,
      [gw.merchantId, p.id, id],
    ).then(() => undefined));

    const r = await secondExecutionWhileFirstRuns(id, () => fanOutMerchantEvent(services(), id, 'first~token'), () => fanOutMerchantEvent(services(), id, 'second~token'), lock);
    expect(r.second).toEqual({ kind: 'skipped', reason: 'claimed' });
    expect(r.first).toMatchObject({ kind: 'created' });
    const events = await gw.rt.database.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM merchant_events WHERE source_outbox_id = ${id}`);
    expect(events.rows[0]!.n).toBe(1);
  });
});
