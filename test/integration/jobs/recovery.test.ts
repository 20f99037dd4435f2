// Dead letters are visible and replayable; the recovery sweeper nudges payments that sit with
// nothing pending, through the same transition() checks.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countDeadLetters, listDeadLetters, replayDeadLetter } from '../../../src/jobs/dlq.ts';
import { sweepStuckPayments } from '../../../src/jobs/recovery.ts';
import { requestCapture } from '../../../src/app/payment-service.ts';
import { DEFAULT_CORE_POLICY } from '../../../src/core/policy.ts';
import type { CallOutcome } from '../../../src/core/outcome.ts';
import { settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

let gw: TestGateway;
let offset = 0;
let failAuthorize = false;
/** Captures whose every answer, and every lookup's, the test loses (issue 41 §6: parked, then asked again). */
const lostCapture = new Set<string>();

beforeAll(async () => {
  gw = await startTestGateway('jobs_recovery', twoStripeConfig(), {
    now: () => new Date(Date.now() + offset),
    jobAttempts: 2,
    jobBackoffMs: 50,
    recoveryIntervalMs: 3_600_000,
    core: { ...DEFAULT_CORE_POLICY, backoffBaseMs: 20, backoffCapMs: 100 },
    // Test seam: an infrastructure failure inside the worker, before any provider call.
    aroundCall: async (effect, call) => {
      if (failAuthorize && effect.op === 'authorize') throw new Error('simulated worker failure');
      const outcome = await call();
      if ((effect.op === 'capture' || effect.op === 'lookup') && effect.captureId !== undefined && lostCapture.has(effect.captureId)) return { kind: 'unknown', reason: 'timeout', detail: 'lost by the test' } satisfies CallOutcome;
      return outcome;
    },
  });
});
afterAll(async () => gw?.close());

describe('dead letters and recovery', () => {
  it('a job that exhausts its retries is dead-lettered, listed, and replayed to completion', async () => {
    failAuthorize = true;
    const created = await gw.pay();
    const deadline = Date.now() + 15_000;
    while ((await countDeadLetters(gw.rt.database.db)).count === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const dead = await listDeadLetters(gw.rt.database.db);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ paymentId: created.id, kind: 'provider_call', connector: 'stripe_a', lastError: 'simulated worker failure' });
    const stuck = await gw.waitFor(created.id, () => true);
    expect(stuck.state).toBe('authorizing');

    failAuthorize = false;
    expect(await replayDeadLetter(gw.rt.database.db, gw.rt.queues, gw.rt.queueFor('provider_call', 'stripe_a')!, dead[0]!.id)).toBe(true);
    gw.rt.relay.kick();
    const done = await gw.waitFor(created.id, settled);
    expect(done.state).toBe('authorized');
    expect((await countDeadLetters(gw.rt.database.db)).count).toBe(0);
  });

  it('the sweeper treats a payment stuck with nothing pending as unknown and resolves it', async () => {
    failAuthorize = true;
    const created = await gw.pay();
    const deadline = Date.now() + 15_000;
    while ((await countDeadLetters(gw.rt.database.db)).count === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    failAuthorize = false;
    const opts = { staleMs: 5 * 60_000, perConnectorPerSweep: 10, now: () => new Date(Date.now() + offset) };
    expect(await sweepStuckPayments({ db: gw.rt.database.db, envs: gw.rt.envs, kick: () => gw.rt.relay.kick() }, opts)).toBe(0);
    offset += 10 * 60_000;
    expect(await sweepStuckPayments({ db: gw.rt.database.db, envs: gw.rt.envs, kick: () => gw.rt.relay.kick() }, opts)).toBe(1);
    const done = await gw.waitFor(created.id, settled);
    // The query finds the PaymentIntent never confirmed; inside retention the same key is resent.
    expect(done.state).toBe('authorized');
    expect(done.attempts).toHaveLength(1);
    const rows = await gw.rt.database.db.execute<{ origin: string }>(sql`SELECT origin FROM payment_transitions WHERE payment_id = ${created.id} AND origin = 'poll'`);
    expect(rows.rows.length).toBe(1);
  });

  it('a payment parked for review is asked about again: the capture its lookups could not find is found, and the payment un-parked (issue 41 §6)', async () => {
    const stripe = gw.rt.sandboxes.find((x) => x.account === 'stripe_a')!;
    await stripe.configureWebhooks({ enabled: false });
    try {
      const p = await gw.waitFor((await gw.pay()).id, settled);
      const captureId = `cap_parked_${p.id.slice(-8)}`;
      lostCapture.add(captureId);
      await requestCapture(gw.rt, gw.merchantId, p, p.amount, true, captureId);
      const parked = await gw.waitFor(p.id, (x) => x.state === 'needs_review', 20_000);
      expect(parked.captures[0]).toMatchObject({ id: captureId, status: 'pending' });
      // The provider can be asked again (the answers stop getting lost); the sweeper's interval grows with the payment's age.
      lostCapture.delete(captureId);
      const deps = { db: gw.rt.database.db, envs: gw.rt.envs, kick: () => gw.rt.relay.kick() };
      const opts = { staleMs: 5 * 60_000, perConnectorPerSweep: 10, now: () => new Date(Date.now() + offset) };
      expect(await sweepStuckPayments(deps, opts)).toBe(0);
      offset += 6 * 60_000;
      expect(await sweepStuckPayments(deps, opts)).toBe(1);
      const done = await gw.waitFor(p.id, (x) => x.state === 'captured', 10_000);
      expect(done.amountCaptured).toBe(p.amount);
      const entry = (await stripe.ledger()).find((e) => e.reference === p.attempts[0]!.id)!;
      expect(entry.captured).toBe(p.amount);
    } finally {
      await stripe.configureWebhooks({ enabled: true });
    }
  });
});
