// Reconciliation windows select provider activity, not payment creation, and a finding follows the
// provider's side as it changes (issue 30). The shipped config (in-process sandboxes over real
// sockets, the official SDKs); days pass on the sandboxes' clocks, never by waiting. Scenarios:
// an Adyen refund issued 10 days after its payment with its notification lost; a Stripe refund
// made on day 1 that fails on day 9; after that finding is resolved, a second, larger refund
// returned; a re-run of an unchanged window adds nothing.
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCapture, requestRefund } from '../../../src/app/payment-service.ts';
import type { Payment } from '../../../src/core/payment.ts';
import { resolveDiscrepancy } from '../../../src/reconcile/discrepancies.ts';
import { reconcile, storeFinding } from '../../../src/reconcile/run.ts';
import type { ReconcileSummary } from '../../../src/reconcile/run.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { transition } from '../../../src/store/transition.ts';
import { settled } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';
import { startShippedGateway } from '../helpers/shipped-gateway.ts';
import type { ShippedGateway } from '../helpers/shipped-gateway.ts';
import { publishAdyenReports } from '../helpers/adyen-reports.ts';

let shipped: ShippedGateway;
let gw: TestGateway;
let stripe: StripeSandbox;
let adyen: AdyenSandbox;
const DAY_S = 86_400;

beforeAll(async () => {
  shipped = await startShippedGateway('late_activity');
  ({ gw, stripe, adyen } = shipped);
}, 60_000);
afterAll(async () => {
  await shipped?.close();
});

const authorized = async (amount: number): Promise<Payment> => gw.waitFor((await gw.pay({ amount })).id, settled);
async function captured(amount: number): Promise<Payment> {
  const p = await authorized(amount);
  await requestCapture(gw.rt, gw.merchantId, p, undefined, true);
  return gw.waitFor(p.id, (x) => x.state === 'captured');
}
async function refund(p: Payment, amount: number, wait: boolean): Promise<Payment> {
  const before = await gw.waitFor(p.id, () => true);
  await requestRefund(gw.rt, gw.merchantId, before, amount, null);
  const n = before.refunds.length + 1;
  return gw.waitFor(p.id, (x) => x.refunds.length === n && (wait ? x.amountRefunded === before.amountRefunded + amount : x.refunds.every((r) => r.status !== 'requested')));
}

/** The daily run as the schedule makes it: the 24 h before the provider's now (its clock is days ahead of ours). */
function daily(account: 'stripe_eu' | 'adyen_eu'): Promise<ReconcileSummary> {
  const sandbox = account === 'stripe_eu' ? stripe : adyen;
  const now = () => new Date(sandbox.clock.nowMs() + 1_000);
  const to = now();
  return reconcile({ db: gw.rt.database.db, connectors: gw.rt.connectors, envs: gw.rt.envs, now }, { window: { from: new Date(to.getTime() - DAY_S * 1000), to }, connector: account });
}

interface Row {
  id: string;
  category: string;
  status: string;
  detail: string;
  amounts: { provider: Record<string, unknown>; ours: Record<string, unknown> } | null;
  history: unknown[];
  reopens: string | null;
}
const rowsOf = async (paymentId: string): Promise<Row[]> =>
  (await gw.db.pool.query<Row>(`SELECT id, category, status, detail, amounts, history, reopens FROM discrepancies WHERE payment_id = $1 AND category IS NOT NULL ORDER BY created_at, id`, [paymentId])).rows;

describe('late activity on old payments', () => {
  it('Adyen: a refund issued 10 days after its payment, its notification lost, is found by the daily run and applied', async () => {
    const p = await captured(150_000);
    expect(p.attempts.find((a) => a.status === 'authorized')!.connector).toBe('adyen_eu');
    await adyen.configureWebhooks({ enabled: false });
    await adyen.advanceClock(10 * DAY_S);
    const pending = await refund(p, 50_000, false);
    expect(pending.refunds[0]!.status).toBe('pending');
    await publishAdyenReports(gw, adyen); // its day closes; Adyen announces the day's reports

    const first = await daily('adyen_eu');
    expect([first.auto_resolved, first.by_category.missed_notification]).toEqual([1, 1]);
    const refunded = await gw.waitFor(p.id, (x) => x.refunds[0]?.status === 'succeeded');
    expect(refunded.amountRefunded).toBe(50_000);
    expect((await rowsOf(p.id)).map((r) => `${r.category}/${r.status}`)).toEqual(['missed_notification/resolved']);

    const again = await daily('adyen_eu');
    expect([again.new, again.updated, again.auto_resolved, again.discrepancies]).toEqual([0, 0, 0, 0]);
  }, 60_000);

  let returned: Payment;
  let firstFinding: Row;

  it('Stripe: a refund made on day 1 that fails on day 9 is found by the daily run of day 9', async () => {
    returned = await refund(await captured(3_000), 400, true);
    await stripe.configureWebhooks({ enabled: false });
    await stripe.advanceClock(8 * DAY_S);
    await stripe.failRefund(String(returned.refunds[0]!.providerRef));

    const first = await daily('stripe_eu');
    expect(first.by_category.provider_side_change).toBe(1);
    const rows = await rowsOf(returned.id);
    expect(rows.map((r) => [r.category, r.status])).toEqual([['provider_side_change', 'open']]);
    firstFinding = rows[0]!;
    expect(firstFinding.amounts).toEqual({ provider: { status: 'succeeded', returned: 400 }, ours: { refunded: 400 } });

    // A re-run of the unchanged window adds nothing and changes nothing.
    const again = await daily('stripe_eu');
    expect([again.new, again.updated, again.reopened]).toEqual([0, 0, 0]);
    expect(await rowsOf(returned.id)).toEqual(rows);
  }, 60_000);

  it('Stripe: after that finding is resolved, a second, larger returned refund reopens it, linked to the resolved one', async () => {
    const resolved = await resolveDiscrepancy(gw.rt.database.db, firstFinding.id, { note: 'paid the customer by bank transfer', operator: 'alice', now: new Date() });
    expect(resolved.ok).toBe(true);
    await stripe.configureWebhooks({ enabled: true });
    const second = await refund(returned, 1_000, true);
    expect(second.amountRefunded).toBe(1_400);
    // The second refund succeeding changes nothing the resolved finding rests on: it stays resolved.
    const between = await daily('stripe_eu');
    expect([between.new, between.reopened]).toEqual([0, 0]);
    await stripe.configureWebhooks({ enabled: false });
    await stripe.advanceClock(DAY_S);
    await stripe.failRefund(String(second.refunds[1]!.providerRef));

    const run = await daily('stripe_eu');
    expect([run.new, run.reopened]).toEqual([1, 1]);
    const rows = await rowsOf(returned.id);
    expect(rows.map((r) => [r.status, r.reopens])).toEqual([['resolved', null], ['open', firstFinding.id]]);
    expect(rows[1]!.amounts).toEqual({ provider: { status: 'succeeded', returned: 1_400 }, ours: { refunded: 1_400 } });
    expect(rows[0]!.amounts).toEqual(firstFinding.amounts); // what was recorded when it was resolved

    const again = await daily('stripe_eu');
    expect([again.new, again.updated, again.reopened]).toEqual([0, 0, 0]);
    expect(await rowsOf(returned.id)).toEqual(rows);
    await stripe.configureWebhooks({ enabled: true });
  }, 60_000);

  it('an open finding seen again with other amounts is updated, the state it replaces kept in its history', async () => {
    const [open] = (await rowsOf(returned.id)).filter((r) => r.status === 'open');
    const finding = {
      category: 'provider_side_change' as const, paymentId: returned.id, attemptId: null, providerRef: String(returned.attempts.find((a) => a.status === 'authorized')!.providerRef),
      aspect: 'refund_returned', detail: 'we refunded 1400, the provider shows 100: 1300 of refunds returned or failed there',
      provider: { status: 'succeeded', returned: 1_300 }, ours: { refunded: 1_400 },
    };
    expect(await storeFinding(gw.rt.database.db, 'stripe_eu', finding, null, new Date())).toBe('updated');
    expect(await storeFinding(gw.rt.database.db, 'stripe_eu', finding, null, new Date())).toBe('unchanged');
    const rows = (await rowsOf(returned.id)).filter((r) => r.status === 'open');
    expect(rows.map((r) => [r.id, r.detail])).toEqual([[open!.id, finding.detail]]);
    expect(rows[0]!.history).toEqual([{ at: expect.any(String) as unknown, detail: open!.detail, amounts: open!.amounts }]);
  });

  it('the Stripe sandbox lists balance transactions and events by created, paginated, for the official SDK; events only for 30 days', async () => {
    const sdk = new Stripe('sk_test_sandbox', { host: stripe.host, port: stripe.port, protocol: 'http', maxNetworkRetries: 0, telemetry: false });
    const since = { gte: stripe.clock.nowSeconds() - 2 * DAY_S };
    const txns: Stripe.BalanceTransaction[] = [];
    for await (const t of sdk.balanceTransactions.list({ created: since, limit: 1 })) txns.push(t);
    expect(txns.map((t) => [t.type, t.amount])).toEqual([['refund_failure', 1_000], ['refund', -1_000], ['refund_failure', 400]]);
    expect(txns[0]!.created).toBeGreaterThanOrEqual(txns[1]!.created);
    const events: Stripe.Event[] = [];
    for await (const e of sdk.events.list({ created: since, limit: 2 })) events.push(e);
    expect(events.map((e) => e.type)).toContain('refund.failed');
    await stripe.advanceClock(31 * DAY_S);
    expect((await sdk.events.list({ created: since })).data).toEqual([]);
    expect((await sdk.balanceTransactions.list({ created: since })).data).toHaveLength(3);
    // Past 30 days the balance transactions alone still show the refund that failed in that window.
    const failedAt = txns[0]!.created * 1000;
    const old = await reconcile(
      { db: gw.rt.database.db, connectors: gw.rt.connectors, envs: gw.rt.envs, now: () => stripe.clock.now() },
      { window: { from: new Date(failedAt - 3_600_000), to: new Date(failedAt + 3_600_000) }, connector: 'stripe_eu' },
    );
    expect([old.by_category.provider_side_change, old.new]).toEqual([1, 0]);
  });

  it('a parked pending refund swept again keeps one open refund_unresolved row', async () => {
    const p = await captured(140_000);
    await adyen.configureWebhooks({ enabled: false });
    const pending = await refund(p, 10_000, false);
    const r = pending.refunds[0]!;
    // Its resends are used up (as after a long outage): each sweep now finds it unresolved again.
    await gw.db.pool.query(`UPDATE refunds SET calls = 99 WHERE id = $1`, [r.id]);
    const stalled = { type: 'call_result', ref: { op: 'refund', refundId: r.id }, outcome: { kind: 'unknown', reason: 'stalled', detail: 'recovery: no answer' } } as const;
    for (let sweep = 0; sweep < 3; sweep++) {
      const now = await gw.waitFor(p.id, () => true);
      await transition(gw.rt.database.db, p.id, stalled, 'poll', await gw.rt.envs.forSnapshot(gw.rt.database.db, now.routing.snapshot), { attemptId: now.attempts[0]!.id });
    }
    const rows = await gw.db.pool.query<{ kind: string; status: string }>(`SELECT kind, status FROM discrepancies WHERE payment_id = $1`, [p.id]);
    expect(rows.rows).toEqual([{ kind: 'refund_unresolved', status: 'open' }]);
    // The provider answers after all (its REFUND notification): the question the row asked is
    // answered, so the row is resolved with that answer, not left for a person (issue 41 §6).
    const now = await gw.waitFor(p.id, () => true);
    const told = { type: 'provider_fact', fact: { fact: 'refund_succeeded', refundId: r.id, providerRef: 'psp_refund_late' } } as const;
    await transition(gw.rt.database.db, p.id, told, 'webhook', await gw.rt.envs.forSnapshot(gw.rt.database.db, now.routing.snapshot), { attemptId: now.attempts[0]!.id });
    const after = await gw.db.pool.query<{ kind: string; status: string; resolution: string | null; resolved_at: Date | null }>(`SELECT kind, status, resolution, resolved_at FROM discrepancies WHERE payment_id = $1`, [p.id]);
    expect(after.rows.map((x) => [x.kind, x.status, x.resolution, x.resolved_at instanceof Date])).toEqual([['refund_unresolved', 'resolved', 'settled by the provider: refund 1 succeeded', true]]);
    expect((await gw.waitFor(p.id, () => true)).refunds[0]!.status).toBe('succeeded');
    await adyen.configureWebhooks({ enabled: true });
  });
});
