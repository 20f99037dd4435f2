// The recovery sweeper covers every kind of work in flight by state, not only authorizations: a
// capture whose call dead-lettered (nothing pending) sits in `capturing` until the sweeper, at the
// capture cadence, treats the silence as unknown and the capture is resent with its key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCapture } from '../../../src/app/payment-service.ts';
import { countDeadLetters } from '../../../src/jobs/dlq.ts';
import { dueAfterMs, sweeperCadences } from '../../../src/jobs/recovery-cadences.ts';
import { sweepStuckPayments } from '../../../src/jobs/recovery.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

const MIN = 60_000;
let gw: TestGateway;
let offset = 0;
let failCapture = false;
let a: SandboxControl;

beforeAll(async () => {
  gw = await startTestGateway('jobs_recovery_mods', twoStripeConfig(), {
    now: () => new Date(Date.now() + offset),
    jobAttempts: 1,
    recoveryIntervalMs: 3_600_000, // the test sweeps by hand
    // Test seam: an infrastructure failure inside the worker before the capture call.
    aroundCall: async (effect, call) => {
      if (failCapture && effect.op === 'capture') throw new Error('simulated worker failure');
      return call();
    },
  });
  a = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
});
afterAll(async () => gw?.close());

describe('recovery sweeper, by state', () => {
  it('a capture left in flight with nothing pending is swept at its cadence and captured once', async () => {
    const p = await gw.waitFor((await gw.pay()).id, settled);
    failCapture = true;
    await requestCapture(gw.rt, gw.merchantId, p, 1000, true);
    const deadline = Date.now() + 15_000;
    while ((await countDeadLetters(gw.rt.database.db)).count === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    failCapture = false;
    expect((await gw.waitFor(p.id, () => true)).state).toBe('capturing');

    const deps = { db: gw.rt.database.db, envs: gw.rt.envs, kick: () => gw.rt.relay.kick() };
    const opts = { staleMs: 5 * MIN, perConnectorPerSweep: 10, now: () => new Date(Date.now() + offset) };
    offset += 5 * MIN; // past the authorization cadence, not yet the capture's (10 min)
    expect(await sweepStuckPayments(deps, opts)).toBe(0);
    offset += 6 * MIN;
    expect(await sweepStuckPayments(deps, opts)).toBe(1);
    const done = await gw.waitFor(p.id, (x) => x.state !== 'capturing', 15_000);
    expect(done.state).toBe('captured');
    expect((await a.ledger()).find((e) => e.reference === p.attempts[0]!.id)!.captured).toBe(1000);
  });

  it('cadences grow with the age of the item, up to a cap, and a pending refund is looked at in hours', () => {
    const [auth, capture, , refundPending] = sweeperCadences(5 * MIN);
    expect(dueAfterMs(auth!, 1 * MIN)).toBe(5 * MIN);
    expect(dueAfterMs(auth!, 100 * MIN)).toBe(25 * MIN);
    expect(dueAfterMs(auth!, 1_000 * MIN)).toBe(60 * MIN);
    expect(dueAfterMs(capture!, 0)).toBe(10 * MIN);
    expect(refundPending!.states).toEqual(['pending']);
    expect(dueAfterMs(refundPending!, 0)).toBe(120 * MIN);
    expect(dueAfterMs(refundPending!, 1_000 * 60 * MIN)).toBe(24 * 60 * MIN);
  });
});
