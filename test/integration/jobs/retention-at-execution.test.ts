// Retention is checked when a call runs, not only when the core decides it. A refund whose answer
// was lost (the provider refunded) is resent with its key; the resend dead-letters, and an operator
// replays it 30 h later, after Stripe (24 h) has forgotten the key. Sent, it would be a second
// refund. The worker does not send it: the core hears unknown{key_expired} and hands the refund to
// reconciliation with the amount reserved. Real PostgreSQL, Redis, worker and Stripe sandbox.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCapture, requestRefund } from '../../../src/app/payment-service.ts';
import { DEFAULT_CORE_POLICY } from '../../../src/core/policy.ts';
import { replayDeadLetter, replayPlan } from '../../../src/jobs/dlq.ts';
import { markOutboxDead } from '../../../src/jobs/outbox-claims.ts';
import { callQueueName } from '../../../src/jobs/queues.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

const HOUR = 3_600_000;
let gw: TestGateway;
let offset = 0;
let a: SandboxControl;

beforeAll(async () => {
  // Resends wait 30-60 s: long enough to dead-letter the resend row before it runs.
  gw = await startTestGateway('jobs_retention_exec', twoStripeConfig(), {
    now: () => new Date(Date.now() + offset),
    core: { ...DEFAULT_CORE_POLICY, backoffBaseMs: 60_000 },
  });
  a = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
});
afterAll(async () => gw?.close());

async function rows(paymentId: string, op: string): Promise<{ id: number; status: string; last_error: string | null }[]> {
  const r = await gw.rt.database.db.execute<{ id: string; status: string; last_error: string | null }>(sql`
    SELECT id, status, last_error FROM outbox WHERE payment_id = ${paymentId} AND kind = 'provider_call' AND payload->>'op' = ${op} ORDER BY id`);
  return r.rows.map((x) => ({ ...x, id: Number(x.id) }));
}

async function until<T>(f: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('retention checked at execution', () => {
  it('a dead-lettered refund resend replayed after the provider forgot its key is not sent: refunded once, and the lookup of the refund settles it', async () => {
    const p = await gw.waitFor((await gw.pay()).id, settled);
    await requestCapture(gw.rt, gw.merchantId, p, 1000, true);
    const captured = await gw.waitFor(p.id, (x) => x.state === 'captured');
    // The provider refunds, then answers after the client gave up (1.5 s): unknown, so the core resends with the same key later.
    await a.scheduleFault({ op: 'refund', mode: 'latency', latencyMs: 3_000, process: 'before', count: 1 });
    await requestRefund(gw.rt, gw.merchantId, captured, 400, null);
    const resend = await until(async () => (await rows(p.id, 'refund')).find((r, n) => n === 1 && r.status === 'pending'));
    expect((await a.ledger()).find((e) => e.reference === p.attempts[0]!.id)!.refunded).toBe(400);

    // Its jobs exhaust their infrastructure retries (what WorkerPool does then), and 30 h pass, for us and for Stripe.
    await markOutboxDead(gw.rt.database.db, resend.id, 'test: database unavailable');
    offset += 30 * HOUR;
    await a.advanceClock(30 * 3600);
    // `dlq replay` says what it will do instead of sending.
    const plan = await replayPlan(gw.rt.database.db, resend.id, new Date(Date.now() + offset), () => 24 * HOUR, DEFAULT_CORE_POLICY.retentionMarginMs);
    expect(plan.sends).toBe(false);
    expect(plan.text).toMatch(/refund call will NOT be sent again/);
    expect((await replayPlan(gw.rt.database.db, resend.id, new Date(Date.now() + offset), () => 48 * HOUR, DEFAULT_CORE_POLICY.retentionMarginMs)).sends).toBe(true);
    expect(await replayDeadLetter(gw.rt.database.db, gw.rt.queues, callQueueName('stripe_a'), resend.id)).toBe(true);

    const done = await until(async () => ((await rows(p.id, 'refund')).find((r) => r.id === resend.id)?.status === 'done' ? true : undefined));
    expect(done).toBe(true);
    await gw.waitFor(p.id, (x) => x.refunds[0]?.status !== 'requested', 5_000);
    expect((await a.ledger()).find((e) => e.reference === p.attempts[0]!.id)!.refunded).toBe(400); // not a second refund
    const answers = await gw.rt.database.db.execute<{ reason: string | null }>(sql`
      SELECT raw_provider->>'reason' AS reason FROM payment_transitions WHERE payment_id = ${p.id} AND input->'ref'->>'op' = 'refund' ORDER BY id`);
    expect(answers.rows.map((r) => r.reason)).toContain('key_expired');
    // Not resent, looked up (issue 41 §6): the refund carrying our refund id says it succeeded.
    const resolved = await gw.waitFor(p.id, (x) => x.refunds[0]?.status === 'succeeded', 10_000);
    expect(resolved.amountRefunded).toBe(400);
    const disc = await gw.rt.database.db.execute<{ kind: string }>(sql`SELECT kind FROM discrepancies WHERE payment_id = ${p.id}`);
    expect(disc.rows.map((r) => r.kind)).not.toContain('refund_unresolved');
    // Nothing else goes out with that key.
    expect((await rows(p.id, 'refund')).filter((r) => r.status === 'pending')).toHaveLength(0);
  });
});
