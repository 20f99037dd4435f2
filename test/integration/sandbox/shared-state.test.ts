// Two sandboxes for one account on one sandbox database are one provider, as two gateway
// processes' in-process sandboxes are: a key executes once across both listeners, a fault or a
// clock step made through one is seen by the other, and the state outlives a sandbox.

import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { createSandboxTestDatabase } from '../helpers/sandbox-db.ts';
import type { TestSandboxDatabase } from '../helpers/sandbox-db.ts';
import { rejectionOf, SECRET_KEY, stripeFor } from './helpers.ts';

let database: TestSandboxDatabase;
let a: StripeSandbox;
let b: StripeSandbox;
let viaA: Stripe;
let viaB: Stripe;

const start = (): Promise<StripeSandbox> => startStripeSandbox({ database, account: 'stripe_shared', secretKey: SECRET_KEY });

beforeAll(async () => {
  database = await createSandboxTestDatabase('shared_state');
  [a, b] = await Promise.all([start(), start()]);
  viaA = stripeFor(a);
  viaB = stripeFor(b);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await database?.drop();
});

const confirmed = { amount: 1000, currency: 'eur', capture_method: 'manual', confirm: true, payment_method: 'pm_card_visa' } as const;

describe('one provider behind two listeners', () => {
  it('executes a key once when the same request races through both (the others: the same object, or 409 while it runs)', async () => {
    const metadata = { attempt_id: 'att_race' };
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? viaA : viaB).paymentIntents.create({ ...confirmed, metadata }, { idempotencyKey: 'race-key' }).then(
        (pi) => pi.id,
        (err: unknown) => {
          // As live Stripe: a request whose key is held by one still running is refused, not queued.
          expect(err).toMatchObject({ statusCode: 409, code: 'idempotency_key_in_use' });
          return '409';
        },
      )),
    );
    expect(new Set(replies.filter((r) => r !== '409')).size).toBe(1);
    expect((await a.ledger()).filter((e) => e.reference === 'att_race')).toHaveLength(1);
    const again = await viaB.paymentIntents.create({ ...confirmed, metadata }, { idempotencyKey: 'race-key' });
    expect(replies).toContain(again.id);
  });

  it('answers 409 through one listener while the other holds the key in a delayed execution', async () => {
    await a.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 600, process: 'after', count: 1 });
    const first = viaA.paymentIntents.create({ ...confirmed, metadata: { attempt_id: 'att_held' } }, { idempotencyKey: 'held-key' });
    await new Promise((r) => setTimeout(r, 200));
    expect(await rejectionOf(viaB.paymentIntents.create({ ...confirmed, metadata: { attempt_id: 'att_held' } }, { idempotencyKey: 'held-key' }))).toMatchObject({ statusCode: 409 });
    const pi = await first;
    const replay = await viaB.paymentIntents.create({ ...confirmed, metadata: { attempt_id: 'att_held' } }, { idempotencyKey: 'held-key' });
    expect(replay.id).toBe(pi.id);
  });

  it('captures through one what the other authorized; a fault queued through one hits a request to the other', async () => {
    const pi = await viaA.paymentIntents.create({ ...confirmed, metadata: { attempt_id: 'att_cross' } });
    await a.scheduleFault({ op: 'capture', mode: 'error_503', count: 1 });
    expect(await rejectionOf(viaB.paymentIntents.capture(pi.id))).toMatchObject({ statusCode: 503 });
    expect((await viaB.paymentIntents.capture(pi.id)).status).toBe('succeeded');
    expect((await a.ledger()).find((e) => e.id === pi.id)).toMatchObject({ authorized: 1000, captured: 1000 });
  });

  it('shares the clock: keys aged through one are forgotten by the other', async () => {
    const first = await viaA.paymentIntents.create({ amount: 100, currency: 'eur' }, { idempotencyKey: 'aging-key' });
    await a.advanceClock(24 * 3600);
    const second = await viaB.paymentIntents.create({ amount: 100, currency: 'eur' }, { idempotencyKey: 'aging-key' });
    expect(second.id).not.toBe(first.id);
  });

  it('keeps the state when a sandbox closes and another starts', async () => {
    const pi = await viaA.paymentIntents.create({ ...confirmed, metadata: { attempt_id: 'att_restart' } });
    await a.close();
    a = await start();
    viaA = stripeFor(a);
    expect((await viaA.paymentIntents.retrieve(pi.id)).status).toBe('requires_capture');
  });
});
