// The outbox path end to end: createPayment -> relay -> BullMQ -> worker -> connector -> sandbox -> transition.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCapture, requestRefund, requestVoid } from '../../../src/app/payment-service.ts';
import { checkLedger } from '../../../src/ledger/check.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

let gw: TestGateway;
let a: SandboxControl;
let b: SandboxControl;

beforeAll(async () => {
  gw = await startTestGateway('jobs_flow', twoStripeConfig());
  a = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
  b = gw.rt.sandboxes.find((s) => s.account === 'stripe_b')!;
});
afterAll(async () => gw?.close());

const liveAuths = async (sb: SandboxControl, attemptIds: string[]) => (await sb.ledger()).filter((e) => attemptIds.includes(e.reference) && e.authorized > 0 && !e.cancelled);

describe('worker path against the Stripe sandbox', () => {
  it('authorizes, captures in two parts, refunds', async () => {
    const created = await gw.pay({ amount: 5000 });
    expect(created.state).toBe('authorizing');
    const authorized = await gw.waitFor(created.id, settled);
    expect(authorized.state).toBe('authorized');
    expect(authorized.attempts[0]!.providerRef).toMatch(/^pi_/);
    expect((await liveAuths(a, [authorized.attempts[0]!.id]))).toHaveLength(1);

    await requestCapture(gw.rt, gw.merchantId, authorized, 2000, false);
    const part = await gw.waitFor(created.id, (p) => p.state === 'captured');
    expect(part.amountCaptured).toBe(2000);
    expect(part.captureOpen).toBe(true);
    await requestCapture(gw.rt, gw.merchantId, part, undefined, true);
    const full = await gw.waitFor(created.id, (p) => p.state === 'captured' && p.amountCaptured === 5000);
    expect(full.captureOpen).toBe(false);

    await requestRefund(gw.rt, gw.merchantId, full, 1500, null);
    const refunded = await gw.waitFor(created.id, (p) => p.amountRefunded === 1500);
    expect(refunded.refunds[0]!.status).toBe('succeeded');
    const entry = (await a.ledger()).find((e) => e.reference === authorized.attempts[0]!.id)!;
    expect([entry.captured, entry.refunded]).toEqual([5000, 1500]);
    // Our own books, posted in the transitions' transactions: net captured minus refunded.
    const books = await gw.rt.database.db.execute<{ account: string; net: string }>(sql`
      SELECT e.account, sum(CASE e.direction WHEN 'debit' THEN e.amount ELSE -e.amount END) AS net
        FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
       WHERE t.payment_id = ${created.id} GROUP BY e.account ORDER BY e.account`);
    expect(await checkLedger(gw.rt.database.db)).toMatchObject({ problems: [] });
    expect(books.rows.map((r) => [r.account, Number(r.net)])).toEqual([
      ['connector:stripe_a:receivable', 3500],
      [`merchant:${gw.merchantId}:payable`, -3500],
    ]);
  });

  it('ledger check finds a payment whose books disagree with it', async () => {
    // Corrupt the payment's books on purpose (the database only refuses unbalanced transactions).
    const p = await gw.waitFor((await gw.pay()).id, settled);
    await requestCapture(gw.rt, gw.merchantId, p, 1000, true);
    await gw.waitFor(p.id, (x) => x.state === 'captured');
    expect((await checkLedger(gw.rt.database.db)).problems).toEqual([]);
    await gw.rt.database.db.execute(sql`UPDATE payments SET amount_refunded = 10 WHERE id = ${p.id}`);
    expect((await checkLedger(gw.rt.database.db)).problems).toEqual([
      { kind: 'payment_mismatch', id: p.id, detail: 'captured - refunded = 990 EUR, receivable booked 1000' },
    ]);
    await gw.rt.database.db.execute(sql`UPDATE payments SET amount_refunded = 0 WHERE id = ${p.id}`);
  });

  it('voids', async () => {
    const p = await gw.waitFor((await gw.pay()).id, settled);
    await requestVoid(gw.rt, gw.merchantId, p.id);
    const voided = await gw.waitFor(p.id, (x) => x.state === 'voided');
    expect((await a.ledger()).find((e) => e.reference === p.attempts[0]!.id)!.cancelled).toBe(true);
    expect(voided.attempts[0]!.status).toBe('released');
  });

  it('a hard decline is declined with no failover', async () => {
    const p = await gw.waitFor((await gw.pay({ paymentMethod: { test_card: '4000000000009979' } })).id, settled);
    expect(p.state).toBe('declined');
    expect(p.attempts).toHaveLength(1);
    expect(p.attempts[0]!.declineCode).toBe('stolen_card');
  });

  it('primary in outage: fails over to the secondary with proof not_sent', async () => {
    await a.outage(30);
    try {
      const p = await gw.waitFor((await gw.pay()).id, settled);
      expect(p.state).toBe('authorized');
      expect(p.attempts.map((x) => [x.connector, x.proof])).toEqual([['stripe_a', 'not_sent'], ['stripe_b', null]]);
      expect((await liveAuths(b, [p.attempts[1]!.id]))).toHaveLength(1);
    } finally {
      await a.outage(0);
    }
  });

  it('primary accept_then_drop on confirm: no failover; resolved on the primary by query; one live authorization', async () => {
    // Two requests: the SDK retries a reset once even with maxNetworkRetries 0.
    await a.scheduleFault({ op: 'authorize', mode: 'accept_then_drop', count: 2 });
    const p = await gw.waitFor((await gw.pay()).id, settled, 30_000);
    expect(p.state).toBe('authorized');
    expect(p.attempts).toHaveLength(1);
    expect(p.attempts[0]!.connector).toBe('stripe_a');
    const ids = p.attempts.map((x) => x.id);
    expect((await liveAuths(a, ids)).length + (await liveAuths(b, ids)).length).toBe(1);
  });
});
