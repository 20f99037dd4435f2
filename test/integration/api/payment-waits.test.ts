// PaymentWaits: a commit wakes a waiter in the same process with the version it wrote, and one in
// another process (here: another pool and another PaymentWaits) over Redis pub/sub, so split
// api/worker roles do not wait for the fallback re-read. The fallback here is ten minutes: only a
// wake can settle these waits before the test's own timeout.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentWaits } from '../../../src/app/payment-waits.ts';
import { createDatabase } from '../../../src/store/db.ts';
import type { Database } from '../../../src/store/db.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { createPayment, transition } from '../../../src/store/transition.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { REDIS_URL } from '../helpers/runtime.ts';
import { authorizeAnswer, env, paymentRequest, succeeded } from '../store/env.ts';

const TEN_MINUTES = 600_000;

describe('PaymentWaits', () => {
  let t: TestDatabase;
  let other: Database;
  let merchantId: string;
  const redis: Redis[] = [];

  beforeAll(async () => {
    t = await createTestDatabase('payment_waits');
    other = createDatabase(t.url, { max: 2 });
    merchantId = (await createMerchant(t.db, { name: 'Shop' })).merchant.id;
  });
  afterAll(async () => {
    for (const r of redis) r.disconnect();
    await other.close();
    await t.drop();
  });

  it('hands a waiter in this process the version the commit wrote', async () => {
    const waits = new PaymentWaits(t.db, { fallbackMs: TEN_MINUTES });
    const created = await createPayment(t.db, paymentRequest(merchantId), env);
    const watch = waits.watch(created.payment.id);
    const r = await transition(t.db, created.payment.id, authorizeAnswer(created.payment.attempts[0]!.id, succeeded(1000)), 'worker', env);
    const seen = await watch.next(TEN_MINUTES);
    expect(seen?.version).toBe(r.payment.version);
    expect(seen?.state).toBe('authorized');
    watch.close();
    await waits.close();
  }, 30_000);

  it('wakes a waiter in another process over Redis pub/sub (without a version: it re-reads)', async () => {
    const channel = `test:${randomBytes(4).toString('hex')}:payment-changed`;
    const publisher = new Redis(REDIS_URL);
    const subscriber = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    redis.push(publisher, subscriber);
    const writer = new PaymentWaits(t.db, { publisher, channel, fallbackMs: TEN_MINUTES });
    const reader = new PaymentWaits(other.db, { subscriber, channel, fallbackMs: TEN_MINUTES });
    await reader.ready();
    const created = await createPayment(t.db, paymentRequest(merchantId), env);
    const watch = reader.watch(created.payment.id);
    await transition(t.db, created.payment.id, authorizeAnswer(created.payment.attempts[0]!.id, succeeded(1000)), 'worker', env);
    expect(await watch.next(TEN_MINUTES)).toBeNull();
    watch.close();
    await writer.close();
    await reader.close();
  }, 30_000);
});
