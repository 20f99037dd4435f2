// A capture or refund that meets an open breaker for longer than its three resend intervals is not
// parked for review or reconciliation: a breaker refusal is not a call, so it waits (same key) until
// the breaker lets it through, then completes. Real PostgreSQL, Redis, worker and Stripe sandbox.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCapture, requestRefund } from '../../../src/app/payment-service.ts';
import { DEFAULT_CORE_POLICY } from '../../../src/core/policy.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { settled, startTestGateway } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

const RESET_MS = 2_500;

// Two provider failures in a row open the breaker; it stays open for RESET_MS.
const CONFIG = `
connectors:
  stripe_a:
    type: stripe
    secret_key: sk_test_a
    webhook_secrets: [whsec_a]
    timeout_ms: 1500
    breaker: { volume_threshold: 2, error_threshold_pct: 50, reset_ms: ${RESET_MS}, rolling_window_ms: 1000 }
routing:
  default: { priority: [stripe_a] }
  max_attempts: 3
`;

let gw: TestGateway;
let sandbox: SandboxControl;
const breakerLog: { line: string; at: number }[] = [];

beforeAll(async () => {
  gw = await startTestGateway('jobs_breaker_refusal', CONFIG, {
    // Resends after 50-100, 100-200 and 200-400 ms: all three fall inside one open period of the breaker.
    core: { ...DEFAULT_CORE_POLICY, backoffBaseMs: 100, backoffCapMs: 400 },
    log: (line) => {
      if (line.startsWith('breaker ')) breakerLog.push({ line, at: Date.now() });
    },
  });
  sandbox = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
});
afterAll(async () => gw?.close());

async function calls(paymentId: string, op: string): Promise<{ reason: string | null; kind: string }[]> {
  const r = await gw.rt.database.db.execute<{ kind: string; reason: string | null }>(sql`
    SELECT raw_provider->>'kind' AS kind, raw_provider->>'reason' AS reason FROM payment_transitions
     WHERE payment_id = ${paymentId} AND input->>'type' = 'call_result' AND input->'ref'->>'op' = ${op} ORDER BY id`);
  return r.rows;
}

async function openDiscrepancies(paymentId: string): Promise<number> {
  const r = await gw.rt.database.db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM discrepancies WHERE payment_id = ${paymentId}`);
  return Number(r.rows[0]!.n);
}

/** Waits until the breaker lets calls through (half-open: the next call is its trial). */
async function breakerNotOpen(): Promise<void> {
  const until = Date.now() + 3 * RESET_MS;
  while (gw.rt.breakers.state('stripe_a') === 'open' && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  expect(gw.rt.breakers.state('stripe_a')).not.toBe('open');
}

/** Waits until the breaker is closed, then for a fresh rolling window: the next two failures open it. */
async function breakerClosed(): Promise<void> {
  const until = Date.now() + 3 * RESET_MS;
  while (gw.rt.breakers.state('stripe_a') !== 'closed' && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  expect(gw.rt.breakers.state('stripe_a')).toBe('closed');
  await new Promise((r) => setTimeout(r, 1_100)); // a fresh rolling window
}

/** How long the breaker stayed open, from its first `open` at or after `since` to the next `half-open`. */
function openFor(since: number): number {
  const opened = breakerLog.find((l) => l.at >= since && l.line.endsWith(': open'));
  const half = breakerLog.find((l) => opened !== undefined && l.at >= opened.at && l.line.endsWith(': half-open'));
  return opened === undefined || half === undefined ? 0 : half.at - opened.at;
}

describe('an open breaker does not spend the resend budget', () => {
  it('a capture answered 503 twice meets the open breaker, waits with the same key, and is captured once the breaker lets it through', async () => {
    await breakerNotOpen();
    const p = await gw.waitFor((await gw.pay()).id, settled);
    expect(p.state).toBe('authorized');
    await breakerClosed();
    const since = Date.now();
    await sandbox.scheduleFault({ op: 'capture', mode: 'error_503', count: 2 });
    await requestCapture(gw.rt, gw.merchantId, p, 1000, true);

    const done = await gw.waitFor(p.id, (x) => x.state !== 'capturing', 20_000);
    expect(done.state).toBe('captured');
    expect(done.amountCaptured).toBe(1000);
    const answers = await calls(p.id, 'capture');
    // two unknowns (the 503s), at least one refusal by the open breaker, then the capture
    expect(answers.slice(0, 2).map((a) => a.reason)).toEqual(['server_error', 'server_error']);
    expect(answers.filter((a) => a.reason === 'breaker_open').length).toBeGreaterThanOrEqual(1);
    expect(answers[answers.length - 1]!.kind).toBe('succeeded');
    // the refusals were not counted: one first call plus the two resends that went out
    expect(done.captures[0]!.calls).toBe(3);
    expect(openFor(since)).toBeGreaterThanOrEqual(RESET_MS - 100); // longer than the three resend intervals
    expect(await openDiscrepancies(p.id)).toBe(0);
    expect((await sandbox.ledger()).find((e) => e.reference === p.attempts[0]!.id)!.captured).toBe(1000);
  });

  it('a refund answered 503 twice meets the open breaker and is refunded instead of being handed to reconciliation', async () => {
    await breakerNotOpen();
    const p = await gw.waitFor((await gw.pay()).id, settled);
    await requestCapture(gw.rt, gw.merchantId, p, 1000, true);
    const captured = await gw.waitFor(p.id, (x) => x.state === 'captured');
    await breakerClosed();
    const since = Date.now();
    await sandbox.scheduleFault({ op: 'refund', mode: 'error_503', count: 2 });
    await requestRefund(gw.rt, gw.merchantId, captured, 400, null);

    const done = await gw.waitFor(p.id, (x) => x.refunds[0]?.status === 'succeeded' || x.refunds[0]?.status === 'failed', 20_000);
    expect(done.refunds[0]!.status).toBe('succeeded');
    expect(done.amountRefunded).toBe(400);
    const answers = await calls(p.id, 'refund');
    expect(answers.filter((a) => a.reason === 'breaker_open').length).toBeGreaterThanOrEqual(1);
    expect(done.refunds[0]!.calls).toBe(3);
    expect(openFor(since)).toBeGreaterThanOrEqual(RESET_MS - 100);
    expect(await openDiscrepancies(p.id)).toBe(0);
    expect((await sandbox.ledger()).find((e) => e.reference === p.attempts[0]!.id)!.refunded).toBe(400);
  });
});
