// Unknown outcomes on an injected clock: a query that finds nothing past the key-retention window
// is never answered with a resend; the attempt is fenced, and only the confirmed fence allows failover.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

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
  it('past retention: no resend, fence confirmed, then failover', async () => {
    // The confirm is performed only after 4 s; the client gives up after 1.5 s: a true unknown.
    await a.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 4_000, process: 'after', count: 1 });
    const created = await gw.pay();
    const unknown = await gw.waitFor(created.id, (p) => p.state === 'auth_unknown');
    expect(unknown.attempts[0]!.status).toBe('unknown');
    // A day passes on the gateway's clock before the query runs.
    offset += 25 * HOUR;
    const p = await gw.waitFor(created.id, settled, 30_000);
    expect(p.state).toBe('authorized');
    expect(p.attempts.map((x) => [x.connector, x.proof])).toEqual([['stripe_a', 'fenced'], ['stripe_b', null]]);
    expect(p.attempts[0]!.sends).toBe(1);
    await new Promise((r) => setTimeout(r, 3_000)); // let the delayed confirm reach the sandbox
    const first = (await a.ledger()).find((e) => e.reference === p.attempts[0]!.id)!;
    expect(first.authorized === 0 || first.cancelled).toBe(true);
    expect((await b.ledger()).filter((e) => e.reference === p.attempts[1]!.id && e.authorized > 0 && !e.cancelled)).toHaveLength(1);
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
