// kill -9 of the worker process while it delivers merchant webhooks (before the POST, during it,
// after it and before the commit): after a restart every event reaches the endpoint at least
// once, and every delivery ends succeeded. Nothing is lost.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../src/app/runtime.ts';
import { startPayment } from '../../../src/app/payment-service.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { createEndpoint } from '../../../src/webhooks/outbound/endpoint-store.ts';
import { startCrashRig } from '../helpers/crash-rig.ts';
import type { CrashRig } from '../helpers/crash-rig.ts';
import type { KillableWorker } from '../helpers/killable-worker.ts';
import { startReceiver, until } from './helpers.ts';
import type { Receiver } from './helpers.ts';

const PAYMENTS = 40;
let rig: CrashRig;
let rt: Runtime;
let rx: Receiver;
let worker: KillableWorker;

beforeAll(async () => {
  rx = await startReceiver();
  // A slow answer widens the window between the POST and the commit that records it.
  rx.behave('/hook', { delayMs: 150 });
  rig = await startCrashRig('wh_crash');
  ({ rt, worker } = rig);
}, 60_000);

afterAll(async () => {
  await rig?.close();
  await rx?.close();
});

describe('kill -9 during delivery', () => {
  it(`${PAYMENTS} payments' events all reach the endpoint despite random worker kills`, async () => {
    const { merchant } = await createMerchant(rt.database.db, { name: 'whcrash' });
    await createEndpoint(rt.database.db, merchant.id, `${rx.url}/hook`, ['payment.authorized'], new Date());
    await worker.start();
    let killing = true;
    const killer = (async () => {
      while (killing) {
        await new Promise((r) => setTimeout(r, 300 + Math.floor(Math.random() * 700)));
        if (!killing) break;
        await worker.kill();
        await worker.start();
      }
    })();
    for (let i = 0; i < PAYMENTS; i++) {
      const r = await startPayment(rt, merchant.id, {
        amount: 1000 + i, currency: 'EUR', reference: `whcrash-${i}`, captureMethod: 'manual', allowPartialAuthorization: false,
        paymentMethod: { test_card: '4242424242424242' }, metadata: {},
      });
      if (!r.ok) throw new Error(r.message);
      if (i % 10 === 0) await new Promise((res) => setTimeout(res, 200));
    }
    while (worker.kills < 4) await new Promise((r) => setTimeout(r, 200));
    killing = false;
    await killer;
    if (!worker.running) await worker.start();

    const deliveries = await until(
      () => rt.database.db.execute<{ status: string; n: string }>(sql`SELECT status, count(*) AS n FROM event_deliveries GROUP BY status`).then((r) => r.rows),
      (rows) => rows.length === 1 && rows[0]!.status === 'succeeded' && Number(rows[0]!.n) === PAYMENTS,
      120_000,
    );
    expect(deliveries).toEqual([{ status: 'succeeded', n: String(PAYMENTS) }]);
    expect(worker.kills).toBeGreaterThanOrEqual(4);
    const events = await rt.database.db.execute<{ id: string }>(sql`SELECT id FROM merchant_events WHERE type = 'payment.authorized'`);
    expect(events.rows).toHaveLength(PAYMENTS);
    const got = new Set(rx.received.map((r) => String(r.headers['switchyard-event-id'])));
    for (const e of events.rows) expect(got.has(e.id), e.id).toBe(true);
    const open = await rt.database.db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM outbox WHERE status <> 'done' AND kind IN ('merchant_event', 'event_delivery')`);
    expect(open.rows[0]!.n).toBe('0');
  }, 180_000);
});
