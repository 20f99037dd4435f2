// Unknown outcomes on an injected clock: a lookup that finds nothing past the key-retention window
// is never answered with a resend. Stripe's one-call attempt has no PaymentIntent id to fence with
// then: it is parked for a person, never failed over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';
import { until } from '../helpers/until.ts';

const HOUR = 3_600_000;
let gw: TestGateway;
let offset = 0;
let a: SandboxControl;
let b: SandboxControl;

beforeAll(async () => {
  gw = await startTestGateway('jobs_retention', twoStripeConfig(), { now: () => new Date(Date.now() + offset) });
  a = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
  b = gw.rt.sandboxes.find((s) => s.account === 'stripe_b')!;
});
afterAll(async () => gw?.close());

describe('retention window', () => {
  it('past retention, nothing found by the lookup: needs_review, no resend, never failover', async () => {
    // The create (confirm=true) runs only after 6 s; the client gives up after 1.5 s: a true unknown,
    // and no PaymentIntent id to fence with (Stripe has no cancel by reference).
    await a.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 6_000, process: 'after', count: 1 });
    const created = await gw.pay();
    const unknown = await gw.waitFor(created.id, (p) => p.state === 'auth_unknown');
    expect(unknown.attempts[0]!.status).toBe('unknown');
    // A day passes on the gateway's clock before the lookup runs.
    offset += 25 * HOUR;
    const parked = await gw.waitFor(created.id, (p) => p.state === 'needs_review', 30_000);
    expect(parked.state).toBe('needs_review');
    expect(parked.attempts.map((x) => [x.connector, x.status, x.sends, x.proof])).toEqual([['stripe_a', 'review', 1, null]]);
    // The held request runs after all: the money is held at stripe_a alone, for a person to settle
    // (Stripe's event would settle it too; here the gateway's clock, a day ahead, refuses its signature's age).
    const held = await until(async () => (await a.ledger()).filter((e) => e.reference === parked.attempts[0]!.id && e.authorized > 0), (l) => l.length > 0, 'the held create to run at stripe_a', 20_000);
    expect(held).toHaveLength(1);
    expect((await b.ledger()).filter((e) => e.reference === parked.attempts[0]!.id)).toHaveLength(0);
    const after = await gw.waitFor(created.id, () => true);
    expect([after.state, after.attempts.length]).toEqual(['needs_review', 1]);
  });

  it('inside retention: a query that finds nothing is followed by a resend with the same key', async () => {
    await a.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 2_500, process: 'after', count: 1 });
    const created = await gw.pay();
    const p = await gw.waitFor(created.id, settled, 30_000);
    expect(p.state).toBe('authorized');
    expect(p.attempts).toHaveLength(1);
    expect(p.attempts[0]!.connector).toBe('stripe_a');
    expect((await a.ledger()).filter((e) => e.reference === p.attempts[0]!.id && e.authorized > 0)).toHaveLength(1);
  });
});
