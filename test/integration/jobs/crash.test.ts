// kill -9 of worker processes at random moments while 200 payments run (before the call, after
// the call but before the commit, after the commit): after a restart every payment reaches the
// right state, the sandbox shows one authorization per payment, and no outbox row is left undone.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../src/app/runtime.ts';
import { startPayment, waitForPayment } from '../../../src/app/payment-service.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { startCrashRig } from '../helpers/crash-rig.ts';
import type { CrashRig } from '../helpers/crash-rig.ts';
import type { KillableWorker } from '../helpers/killable-worker.ts';
import { settled } from '../helpers/runtime.ts';

const PAYMENTS = 200;
let rig: CrashRig;
let sandbox: StripeSandbox;
let rt: Runtime;
let worker: KillableWorker;

beforeAll(async () => {
  rig = await startCrashRig('jobs_crash');
  ({ rt, sandbox, worker } = rig);
}, 60_000);

afterAll(async () => rig?.close());

describe('kill -9 of workers', () => {
  it(`${PAYMENTS} payments survive random worker kills`, async () => {
    const { merchant } = await createMerchant(rt.database.db, { name: 'crash' });
    // Latency widens the window between the provider's answer and our commit.
    await sandbox.scheduleFault({ op: 'any', mode: 'latency', latencyMs: 40, count: 100_000 });
    await worker.start();
    const ids: string[] = [];
    let killing = true;
    const killer = (async () => {
      while (killing) {
        await new Promise((r) => setTimeout(r, 200 + Math.floor(Math.random() * 600)));
        if (!killing) break;
        await worker.kill();
        await worker.start();
      }
    })();
    for (let i = 0; i < PAYMENTS; i++) {
      const r = await startPayment(rt, merchant.id, {
        amount: 1000 + i, currency: 'EUR', reference: `crash-${i}`, captureMethod: 'manual', allowPartialAuthorization: false,
        paymentMethod: { test_card: '4242424242424242' }, metadata: {},
      });
      if (!r.ok) throw new Error(r.message);
      ids.push(r.payment.id);
      if (i % 20 === 0) await new Promise((res) => setTimeout(res, 150));
    }
    // Keep killing while the work is still in flight, at least a handful of times.
    while (worker.kills < 6) await new Promise((r) => setTimeout(r, 200));
    killing = false;
    await killer;
    if (!worker.running) await worker.start();

    const final = await Promise.all(ids.map((id) => waitForPayment(rt, merchant.id, id, settled, 90_000)));
    expect(worker.kills).toBeGreaterThanOrEqual(6);
    expect(final.map((p) => p?.state)).toEqual(ids.map(() => 'authorized'));
    const ledger = (await sandbox.ledger());
    for (const p of final) {
      const live = ledger.filter((e) => e.payment_id === p!.id && e.authorized > 0 && !e.cancelled);
      expect(live, `payment ${p!.id}`).toHaveLength(1);
    }
    const pending = await rt.database.db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM outbox WHERE status <> 'done' AND kind = 'provider_call'`);
    expect(Number(pending.rows[0]!.n)).toBe(0);
  }, 180_000);
});
