// The ledger after a mixed workload against both in-process sandboxes (the shipped config), with
// notifications on: captures, partial refunds, a refund that comes back, a capture the scheme
// rejects after success (Adyen CAPTURE_FAILED), disputes withdrawn / reinstated / won / lost. `ledger check`
// passes; per payment our books equal the sandboxes' own ledgers; the merchant's balances carry the
// disputes; then the Adyen settlement report is imported: receivable moves to the bank net of the
// commission, once per row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchantBalances } from '../../../src/api/balance-routes.ts';
import { requestCapture, requestRefund } from '../../../src/app/payment-service.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { newId } from '../../../src/core/ids.ts';
import type { Payment } from '../../../src/core/payment.ts';
import { checkLedger } from '../../../src/ledger/check.ts';
import { writePosting } from '../../../src/ledger/postings.ts';
import { importSettlement } from '../../../src/ledger/settlement.ts';
import { syncProviderReports } from '../../../src/reconcile/provider-reports.ts';
import { publishAdyenReports } from '../helpers/adyen-reports.ts';
import { runCli } from '../helpers/cli.ts';
import { REDIS_URL, settled } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';
import { startShippedGateway } from '../helpers/shipped-gateway.ts';
import type { ShippedGateway } from '../helpers/shipped-gateway.ts';
import { until } from '../helpers/until.ts';

let shipped: ShippedGateway;
let gw: TestGateway;
let stripe: StripeSandbox;
let adyen: AdyenSandbox;
const started = new Date(Date.now() - 60_000);
const LATER_MS = 20 * 60_000;

beforeAll(async () => {
  shipped = await startShippedGateway('ledger');
  ({ gw, stripe, adyen } = shipped);
}, 60_000);
afterAll(async () => {
  await shipped?.close();
});

const q = async <T extends object>(text: string, params: unknown[] = []): Promise<T[]> => (await gw.db.pool.query<T>(text, params)).rows;

const authorized = async (amount: number): Promise<Payment> => gw.waitFor((await gw.pay({ amount })).id, settled);
async function captured(amount: number): Promise<Payment> {
  const p = await authorized(amount);
  await requestCapture(gw.rt, gw.merchantId, p, undefined, true);
  return gw.waitFor(p.id, (x) => x.state === 'captured');
}
async function refund(p: Payment, amount: number): Promise<Payment> {
  await requestRefund(gw.rt, gw.merchantId, p, amount, null);
  return gw.waitFor(p.id, (x) => x.amountRefunded === p.amountRefunded + amount);
}
const providerRef = (p: Payment): string => p.attempts.find((a) => a.status === 'authorized')!.providerRef!;
const dispute = (p: Payment, status: string) =>
  until(() => q<{ id: string; status: string; amount: string }>(`SELECT id, status, amount FROM disputes WHERE payment_id = $1`, [p.id]), (r) => r[0]?.status === status, `dispute ${status} on ${p.id}`);
const account = async (name: string): Promise<number> =>
  Number((await q<{ n: string }>(`SELECT coalesce(sum(CASE direction WHEN 'debit' THEN amount ELSE -amount END), 0) AS n FROM ledger_entries WHERE account = $1`, [name]))[0]!.n);

describe('ledger', () => {
  const p: Record<string, Payment> = {};

  it('mixed workload: ledger check passes, books equal the sandbox ledgers, balances carry the disputes', async () => {
    await adyen.setSettlementCommission(25, 100); // 0.25 + 1 % on every Settled row from now on
    for (const s of [stripe, adyen]) await s.configureWebhooks({ duplicate: 1 }); // every notification twice
    // Stripe (EUR below 1000.00)
    p['s_refunded'] = await refund(await captured(10_000), 3_000);
    p['s_won'] = await captured(20_000);
    p['s_lost'] = await captured(30_000);
    p['s_open'] = await captured(40_000);
    p['s_returned'] = await refund(await captured(5_000), 2_000);
    // Adyen (EUR from 1000.00)
    p['a_refunded'] = await refund(await captured(100_000), 25_000);
    p['a_won'] = await captured(110_000);
    p['a_failed'] = await captured(120_000);
    p['a_open'] = await captured(130_000);
    p['a_returned'] = await refund(await captured(150_000), 50_000);
    expect(p['a_won'].attempts[0]!.connector).toBe('adyen_eu');
    expect(p['s_won'].attempts[0]!.connector).toBe('stripe_eu');

    const won = await stripe.createDispute(providerRef(p['s_won'])) as { id: string };
    await dispute(p['s_won'], 'funds_withdrawn');
    await stripe.closeDispute(won.id, 'won');
    const lost = await stripe.createDispute(providerRef(p['s_lost']), { amount: 12_000 }) as { id: string };
    await dispute(p['s_lost'], 'funds_withdrawn');
    await stripe.closeDispute(lost.id, 'lost');
    await stripe.createDispute(providerRef(p['s_open']));
    await stripe.failRefund(String(p['s_returned'].refunds[0]!.providerRef));
    await adyen.chargeback(providerRef(p['a_won']));
    await dispute(p['a_won'], 'funds_withdrawn');
    await adyen.chargeback(providerRef(p['a_won']), { reversed: true });
    await adyen.failCapture(String(p['a_failed'].captures[0]!.providerRef));
    await adyen.chargeback(providerRef(p['a_open']));
    await adyen.reverseRefund(String(p['a_returned'].refunds[0]!.providerRef));

    await dispute(p['s_won'], 'won');
    await dispute(p['s_lost'], 'lost');
    await dispute(p['s_open'], 'funds_withdrawn');
    // CHARGEBACK_REVERSED is not final at Adyen (a second chargeback may follow): reinstated, not won.
    await dispute(p['a_won'], 'funds_reinstated');
    await dispute(p['a_open'], 'funds_withdrawn');
    for (const k of ['s_returned', 'a_returned']) p[k] = await gw.waitFor(p[k]!.id, (x) => x.refunds[0]?.status === 'reversed');
    p['a_failed'] = await gw.waitFor(p['a_failed'].id, (x) => x.amountCaptured === 0);
    expect(p['a_failed'].state).toBe('failed');

    const check = await checkLedger(gw.rt.database.db);
    expect(check.problems).toEqual([]);
    expect(check.disputes).toBe(5);

    // Per payment: what the transitions booked against the connector = the sandbox's captured - refunded.
    const booked = await q<{ payment_id: string; n: string }>(
      `SELECT t.payment_id, sum(CASE e.direction WHEN 'debit' THEN e.amount ELSE -e.amount END) AS n FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
        WHERE e.account LIKE 'connector:%:receivable' AND t.kind IN ('capture', 'capture_reversed', 'refund', 'refund_reversed') GROUP BY t.payment_id`,
    );
    const bookedOf = new Map(booked.map((r) => [r.payment_id, Number(r.n)]));
    for (const [name, x] of Object.entries(p)) {
      const a = x.attempts.find((t) => t.providerRef !== null)!;
      const entry = (await (a.connector === 'stripe_eu' ? stripe : adyen).ledger()).find((e) => e.reference === a.id)!;
      expect(bookedOf.get(x.id) ?? 0, name).toBe(entry.captured - entry.refunded);
    }
    // Disputes: withdrawn while open or lost, reinstated when won, written off the payable when lost;
    // Stripe's dispute fee (1500) withdrawn with each chargeback, returned with the win.
    expect(await account(`connector:stripe_eu:receivable`)).toBe(10_000 - 3_000 + 20_000 + 30_000 - 12_000 + 40_000 - 40_000 + 5_000 - 1_500 - 1_500);
    expect(await account(`connector:stripe_eu:fees`)).toBe(3_000);
    expect(await merchantBalances(gw.rt.database.db, gw.merchantId)).toEqual([
      { object: 'balance', currency: 'EUR', payable: 7_000 + 20_000 + 18_000 + 40_000 + 5_000 + 75_000 + 110_000 + 0 + 130_000 + 150_000, disputed: 40_000 + 130_000 },
    ]);
    const kinds = await q<{ kind: string; n: string }>(`SELECT kind, count(*) AS n FROM ledger_transactions WHERE kind LIKE 'dispute_%' GROUP BY kind ORDER BY kind`);
    expect(kinds.map((k) => [k.kind, Number(k.n)])).toEqual([['dispute_fee', 4], ['dispute_lost', 1], ['dispute_reinstated', 2], ['dispute_withdrawn', 5]]);
  }, 120_000);

  it('a dispute movement is posted once: its source again writes nothing', async () => {
    const [d] = await dispute(p['a_open']!, 'funds_withdrawn');
    const before = await q<{ id: string; source: string; kind: string }>(`SELECT id, source, kind FROM ledger_transactions WHERE source LIKE $1`, [`dispute:${d!.id}:%`]);
    expect(before.map((t) => [t.source, t.kind])).toEqual([[`dispute:${d!.id}:CHARGEBACK`, 'dispute_withdrawn']]);
    const posting = { kind: 'dispute_withdrawn', lines: [{ account: 'merchant:x:disputes', direction: 'debit', amount: 1, currency: 'EUR' }, { account: 'connector:adyen_eu:receivable', direction: 'credit', amount: 1, currency: 'EUR' }] } as const;
    const again = await gw.rt.database.db.transaction((tx) =>
      writePosting(tx, posting, { id: newId('ledger'), paymentId: p['a_open']!.id, source: before[0]!.source, description: null, createdAt: new Date() }),
    );
    expect(again).toBe(false);
    expect(await q(`SELECT id FROM ledger_transactions WHERE source LIKE $1`, [`dispute:${d!.id}:%`])).toHaveLength(1);
  });

  it('settlement import: receivable to the bank net of commission, once per report row; the books still check', async () => {
    // Adyen's settlement rows come from the batch it announces once the day has closed.
    await publishAdyenReports(gw, adyen);
    const window = { from: started, to: new Date(Date.now() + LATER_MS) };
    const now = new Date();
    const first = await syncProviderReports(gw.rt.database.db, 'adyen_eu', gw.rt.connectors.get('adyen_eu')!, now);
    // Settled ×5, Refunded ×2, RefundedReversed, CaptureFailed, Chargeback ×2, ChargebackReversed.
    expect(first).toMatchObject({ lines: 12, posted: 12, unmatched: 0, accessRefused: null });
    const fees = (1025 + 1125 + 1225 + 1325 + 1525);
    expect(await account('connector:adyen_eu:fees')).toBe(fees);
    const gross = 610_000 - 120_000 - 25_000 - 50_000 + 50_000 - 110_000 + 110_000 - 130_000;
    expect(await account('connector:adyen_eu:settlement')).toBe(gross - fees);
    // Everything the connector owed us on these payments has settled.
    expect(await account('connector:adyen_eu:receivable')).toBe(0);

    // Each report is imported once, and each row is posted once besides (its UNIQUE source).
    const again = await syncProviderReports(gw.rt.database.db, 'adyen_eu', gw.rt.connectors.get('adyen_eu')!, now);
    expect(again).toMatchObject({ lines: 0, posted: 0, unmatched: 0 });
    await gw.db.pool.query(`UPDATE provider_reports SET imported_at = NULL WHERE connector = 'adyen_eu'`);
    expect(await syncProviderReports(gw.rt.database.db, 'adyen_eu', gw.rt.connectors.get('adyen_eu')!, now)).toMatchObject({ lines: 12, posted: 0, unmatched: 0 });
    expect((await checkLedger(gw.rt.database.db)).problems).toEqual([]);
    // Stripe's sandbox reports no settlement rows (no balance transactions or payouts): nothing to import.
    expect(await importSettlement(gw.rt.database.db, 'stripe_eu', gw.rt.connectors.get('stripe_eu')!, window, now)).toEqual({ lines: 0, posted: 0, unmatched: 0 });
  });

  it('`switchyard ledger check` passes on these books and fails on a dispute without its postings', async () => {
    const ok = await runCli(['ledger', 'check'], { DATABASE_URL: gw.db.url, REDIS_URL });
    expect([ok.code, ok.stdout.trim()], ok.stderr).toEqual([0, expect.stringMatching(/^ledger ok: \d+ transactions balance/) as unknown]);
    await gw.db.pool.query(`INSERT INTO disputes (id, payment_id, merchant_id, connector, provider_ref, amount, currency, status, withdrawn) VALUES ('dsp_unposted', $1, (SELECT merchant_id FROM payments WHERE id = $1), 'stripe_eu', 'dp_unposted', 500, 'EUR', 'funds_withdrawn', 500)`, [p['s_refunded']!.id]);
    const bad = await checkLedger(gw.rt.database.db);
    expect(bad.problems).toEqual([{ kind: 'dispute_mismatch', id: 'dsp_unposted', detail: 'funds_withdrawn EUR: expected withdrawn 500 / held 500 / written off 0 / fees 0, booked 0 / 0 / 0 / 0' }]);
  }, 60_000);
});

