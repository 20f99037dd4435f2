// Disputes as each provider runs them (issue 32), end to end: the shipped config with both
// in-process sandboxes behind a real API listener; each sandbox runs every dispute path in its real
// wire format (Stripe dispute objects with their balance transactions in charge.dispute.* events;
// Adyen notifications with the dispute's own pspReference, originalReference and disputeStatus),
// in order and delivered reversed. Per path: the dispute's final state, what the provider withdrew,
// the merchant events, and the dispute's postings by account; then `ledger check` and
// GET /v1/balances over all of them, and every dispute event delivered to a merchant endpoint. A
// dispute before its capture is known, and one while a refund is in flight, are held and decided
// when that state arrives. One gateway for the whole file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCapture, requestRefund } from '../../../src/app/payment-service.ts';
import type { Payment } from '../../../src/core/payment.ts';
import { checkLedger } from '../../../src/ledger/check.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import { basicAuthorization, notificationBody, signNotificationItem } from '../../../src/sandboxes/adyen/index.ts';
import type { AdyenDisputeStepSpec } from '../../../src/sandboxes/adyen/disputes.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { rotateMerchantKey } from '../../../src/store/merchants.ts';
import { settled } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';
import { startShippedGateway } from '../helpers/shipped-gateway.ts';
import { startReceiver } from '../webhooks/helpers.ts';
import type { Receiver } from '../webhooks/helpers.ts';
import type { ShippedGateway } from '../helpers/shipped-gateway.ts';
import { until } from '../helpers/until.ts';

let shipped: ShippedGateway;
let gw: TestGateway;
let stripe: StripeSandbox;
let adyen: AdyenSandbox;
let receiver: Receiver;
let apiKey: string;

const DISPUTE_EVENTS = ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.funds_reinstated', 'dispute.won', 'dispute.lost', 'dispute.closed'];

beforeAll(async () => {
  shipped = await startShippedGateway('disputes', { webhooks: { inboundRetryBaseMs: 100, inboundHoldRecheckMs: 300 } });
  ({ gw, stripe, adyen } = shipped);
  // A merchant endpoint for the dispute events: what is recorded is also delivered.
  receiver = await startReceiver();
  const key = await rotateMerchantKey(gw.rt.database.db, gw.merchantId);
  if (key === null) throw new Error('no merchant to key');
  apiKey = key;
  const res = await fetch(`http://127.0.0.1:${shipped.server.port}/v1/webhook_endpoints`, {
    method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': 'disputes-endpoint' },
    body: JSON.stringify({ url: `${receiver.url}/disputes`, events: DISPUTE_EVENTS }),
  });
  expect(res.status).toBe(201);
}, 60_000);
afterAll(async () => {
  await shipped?.close();
  await receiver?.close();
});

const q = async <T extends object>(text: string, params: unknown[] = []): Promise<T[]> => (await gw.db.pool.query<T>(text, params)).rows;

async function captured(amount: number): Promise<Payment> {
  const p = await gw.waitFor((await gw.pay({ amount })).id, settled);
  await requestCapture(gw.rt, gw.merchantId, p, undefined, true);
  return gw.waitFor(p.id, (x) => x.state === 'captured');
}
const providerRef = (p: Payment): string => p.attempts.find((a) => a.status === 'authorized')!.providerRef!;

interface DisputeRow { id: string; status: string; withdrawn: string; fees: string; provider_ref: string; provider_status: string | null }
const disputeOf = (p: Payment, status: string) =>
  until(() => q<DisputeRow>(`SELECT id, status, withdrawn, fees, provider_ref, provider_status FROM disputes WHERE payment_id = $1`, [p.id]), (r) => r[0]?.status === status, `dispute ${status} on ${p.id}`).then((r) => r[0]!);
/** Everything the sandboxes queued delivered, and every inbox event settled (none pending or held); then the dispute as it ends. */
async function settledDispute(p: Payment): Promise<DisputeRow> {
  await Promise.all([stripe.webhooksIdle(), adyen.webhooksIdle()]);
  await until(() => q<{ n: string }>(`SELECT count(*) AS n FROM inbound_events WHERE outcome = 'pending'`), (r) => r[0]!.n === '0', 'inbox settled');
  return (await q<DisputeRow>(`SELECT id, status, withdrawn, fees, provider_ref, provider_status FROM disputes WHERE payment_id = $1`, [p.id]))[0]!;
}
const disputeEvents = async (p: Payment) =>
  (await q<{ type: string; status: string }>(`SELECT type, payload->'data'->'dispute'->>'status' AS status FROM merchant_events WHERE payment_id = $1 AND type LIKE 'dispute.%' ORDER BY created_at, id`, [p.id])).map((e) => e.type);
/** Debits minus credits per account over the dispute's postings, zero balances dropped, accounts by role. */
async function books(disputeId: string): Promise<Record<string, number>> {
  const rows = await q<{ account: string; n: string }>(
    `SELECT e.account, sum(CASE e.direction WHEN 'debit' THEN e.amount ELSE -e.amount END) AS n FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
      WHERE starts_with(t.source, $1) GROUP BY e.account`, [`dispute:${disputeId}:`]);
  return Object.fromEntries(rows.filter((r) => Number(r.n) !== 0).map((r) => [r.account.replace(/^merchant:[^:]+:/, '').replace(/^connector:[^:]+:/, ''), Number(r.n)]));
}

/** What every path leaves, summed for the balances check at the end. */
const totals = { captured: 0, lost: 0, disputed: 0 };
function expectBooks(amount: number, status: string, withdrawn: number): void {
  totals.captured += amount;
  if (status === 'lost') totals.lost += withdrawn;
  else totals.disputed += withdrawn;
}

/**
 * The gateway's workers take a dispute's events in any order, even delivered in order (and a step
 * arriving after a later stage is stale and sends nothing): opened first and once, the outcome last
 * and once, every event one the path sends when taken in order.
 */
function expectEvents(sent: readonly string[], status: string, inOrder: readonly string[]): void {
  const final = ['won', 'lost', 'closed'].includes(status) ? [`dispute.${status}`] : [];
  expect([sent[0], ...final.map(() => sent.at(-1)), sent.filter((x) => x === 'dispute.opened' || final.includes(x)).length], sent.join(' ')).toEqual(['dispute.opened', ...final, 1 + final.length]);
  for (const x of sent) expect(inOrder).toContain(x);
}

const FEE = 1500;

describe('Stripe disputes', () => {
  // [name, statuses (the first opens it), final status, withdrawn, fees kept, merchant events in order]
  const paths: [string, string[], string, boolean, number, string[]][] = [
    ['inquiry closed', ['warning_needs_response', 'warning_under_review', 'warning_closed'], 'closed', false, 0, ['dispute.opened', 'dispute.closed']],
    ['inquiry prevented', ['warning_needs_response', 'prevented'], 'closed', false, 0, ['dispute.opened', 'dispute.closed']],
    ['inquiry escalated, won', ['warning_needs_response', 'needs_response', 'under_review', 'won'], 'won', false, 0, ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.funds_reinstated', 'dispute.won']],
    ['chargeback lost', ['needs_response', 'under_review', 'lost'], 'lost', true, FEE, ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.lost']],
    ['appeal lost', ['needs_response', 'under_review', 'appeal_needs_response', 'appeal_under_review', 'lost'], 'lost', true, FEE, ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.lost']],
    ['chargeback won', ['needs_response', 'won'], 'won', false, 0, ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.funds_reinstated', 'dispute.won']],
    ['chargeback open', ['needs_response', 'under_review'], 'funds_withdrawn', true, FEE, ['dispute.opened', 'dispute.funds_withdrawn']],
  ];

  it.each(paths)('%s: in order, then delivered reversed', async (_name, statuses, status, kept, fee, events) => {
    for (const reorder of [false, true]) {
      await stripe.configureWebhooks({ reorder });
      const amount = reorder ? 6_000 : 5_000;
      const p = await captured(amount);
      const dp = await stripe.disputePath(providerRef(p), statuses);
      await disputeOf(p, status);
      const d = await settledDispute(p);
      const withdrawn = kept ? amount : 0;
      expect([d.provider_ref, d.status, d.provider_status, Number(d.withdrawn), Number(d.fees)], `reorder=${reorder}`).toEqual([dp['id'], status, statuses.at(-1), withdrawn, fee]);
      // Lost: the payable carries the loss; open: the disputes account holds it; fees to the fees account.
      const expected: Record<string, number> = {};
      if (status === 'lost') expected['payable'] = withdrawn;
      if (status === 'funds_withdrawn') expected['disputes'] = withdrawn;
      if (withdrawn + fee > 0) expected['receivable'] = -(withdrawn + fee);
      if (fee > 0) expected['fees'] = fee;
      expect(await books(d.id), `reorder=${reorder}`).toEqual(expected);
      expectEvents(await disputeEvents(p), status, events);
      expectBooks(amount, status, withdrawn);
    }
    await stripe.configureWebhooks({ reorder: false });
  }, 30_000);
});

describe('Adyen disputes', () => {
  const s = (eventCode: string, disputeStatus?: string | null): AdyenDisputeStepSpec => (disputeStatus === undefined ? { eventCode } : { eventCode, disputeStatus });
  // [name, steps, final status, withdrawn at the end, merchant events in order]
  const paths: [string, AdyenDisputeStepSpec[], string, boolean, string[]][] = [
    ['chargeback defended, issuer accepts', [s('NOTIFICATION_OF_CHARGEBACK'), s('CHARGEBACK'), s('INFORMATION_SUPPLIED'), s('CHARGEBACK_REVERSED'), s('ISSUER_RESPONSE_TIMEFRAME_EXPIRED')], 'won', false,
      ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.funds_reinstated', 'dispute.won']],
    ['chargeback not defended', [s('NOTIFICATION_OF_CHARGEBACK'), s('CHARGEBACK'), s('DISPUTE_DEFENSE_PERIOD_ENDED')], 'lost', true, ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.lost']],
    ['second chargeback after a reversal', [s('CHARGEBACK'), s('CHARGEBACK_REVERSED'), s('SECOND_CHARGEBACK')], 'lost', true,
      ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.funds_reinstated', 'dispute.funds_withdrawn', 'dispute.lost']],
    ['pre-arbitration won', [s('CHARGEBACK'), s('CHARGEBACK_REVERSED'), s('SECOND_CHARGEBACK', 'Pending'), s('PREARBITRATION_WON')], 'won', false,
      ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.funds_reinstated', 'dispute.funds_withdrawn', 'dispute.funds_reinstated', 'dispute.won']],
    ['pre-arbitration lost', [s('CHARGEBACK'), s('CHARGEBACK_REVERSED'), s('SECOND_CHARGEBACK', 'Pending'), s('ISSUER_COMMENTS'), s('PREARBITRATION_LOST')], 'lost', true,
      ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.funds_reinstated', 'dispute.funds_withdrawn', 'dispute.lost']],
    ['request for information', [s('REQUEST_FOR_INFORMATION'), s('INFORMATION_SUPPLIED'), s('ISSUER_RESPONSE_TIMEFRAME_EXPIRED', 'Expired')], 'closed', false, ['dispute.opened', 'dispute.closed']],
    ['notification of fraud', [s('NOTIFICATION_OF_FRAUD')], 'opened', false, ['dispute.opened']],
    ['opened with chargeback, open', [s('DISPUTE_OPENED_WITH_CHARGEBACK'), s('CHARGEBACK')], 'funds_withdrawn', true, ['dispute.opened', 'dispute.funds_withdrawn']],
  ];
  const brazil = (steps: AdyenDisputeStepSpec[]) => steps.map((x) => ({ eventCode: x.eventCode, disputeStatus: null }));

  async function runPath(amount: number, steps: AdyenDisputeStepSpec[], status: string, kept: boolean, events: string[]): Promise<void> {
    const p = await captured(amount);
    const ref = await adyen.dispute(providerRef(p), steps);
    await disputeOf(p, status);
    const d = await settledDispute(p);
    expect(d.status).toBe(status);
    const withdrawn = kept ? amount : 0;
    expect([d.provider_ref, Number(d.withdrawn), steps.some((x) => d.provider_status?.split('/')[0] === x.eventCode)]).toEqual([ref, withdrawn, true]);
    const expected: Record<string, number> = {};
    if (status === 'lost') expected['payable'] = withdrawn;
    if (status === 'funds_withdrawn') expected['disputes'] = withdrawn;
    if (withdrawn > 0) expected['receivable'] = -withdrawn;
    expect(await books(d.id)).toEqual(expected);
    expectEvents(await disputeEvents(p), status, events);
    expectBooks(amount, status, withdrawn);
  }

  it.each(paths)('%s: in order, with disputeStatus', async (_name, steps, status, kept, events) => {
    await runPath(150_000, steps, status, kept, events);
  }, 30_000);

  it('without disputeStatus (payments processed in Brazil): the event codes alone decide', async () => {
    await runPath(151_000, brazil(paths[0]![1]), 'won', false, paths[0]![4]);
    await runPath(152_000, brazil(paths[1]![1]), 'lost', true, paths[1]![4]);
    await runPath(153_000, brazil(paths[2]![1]), 'lost', true, paths[2]![4]);
  }, 30_000);

  it('delivered reversed: the same end and the same money (a late CHARGEBACK after its reversal moves nothing)', async () => {
    await adyen.configureWebhooks({ reorder: true });
    try {
      for (const [i, [, steps, status, kept, events]] of paths.entries()) await runPath(160_000 + i * 1_000, steps, status, kept, events);
    } finally {
      await adyen.configureWebhooks({ reorder: false });
    }
  }, 60_000);

  const KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
  /** A dispute notification as Adyen signs it, posted straight to the intake (ahead of what the sandbox has queued). */
  async function postNotification(p: Payment, eventCode: string, disputePsp: string, amount: number): Promise<void> {
    const item = signNotificationItem({
      additionalData: { disputeStatus: 'Undefended' }, amount: { value: amount, currency: 'EUR' }, eventCode, eventDate: new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00'),
      merchantAccountCode: 'SwitchyardSandbox', merchantReference: p.attempts[0]!.id, originalReference: providerRef(p), pspReference: disputePsp, reason: 'Fraud', success: 'true',
    }, KEY);
    const res = await fetch(`http://127.0.0.1:${shipped.server.port}/webhooks/adyen_eu`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: basicAuthorization('switchyard', 'sandbox') }, body: notificationBody([item]),
    });
    expect(res.status).toBe(200);
  }
  const heldReason = (p: Payment) => until(() => q<{ reason: string | null }>(`SELECT reason FROM inbound_events WHERE payment_id = $1 AND provider_event_id LIKE 'CHARGEBACK:%'`, [p.id]), (r) => r[0]?.reason?.startsWith('held:') === true, `a held chargeback on ${p.id}`);

  it('a chargeback before its capture is known, and one while a refund is in flight, are held and decided once that state exists', async () => {
    // The sandbox's own notifications (CAPTURE, REFUND) wait 2 s; the chargeback is delivered at once.
    await adyen.configureWebhooks({ delayMs: 2_000 });
    try {
      const a = await gw.waitFor((await gw.pay({ amount: 170_000 })).id, settled);
      await requestCapture(gw.rt, gw.merchantId, a, undefined, true);
      await until(async () => (await adyen.ledger()).find((e) => e.reference === a.attempts[0]!.id)?.captured ?? 0, (n) => n === 170_000, 'the capture at Adyen');
      await postNotification(a, 'CHARGEBACK', 'DSPBEFORECAPTURE', 170_000);
      const [held] = await heldReason(a);
      expect(held!.reason).toMatch(/capture is not known yet/);
      expect((await gw.waitFor(a.id, () => true)).amountCaptured).toBe(0);
      await gw.waitFor(a.id, (x) => x.state === 'captured');
      const d = await disputeOf(a, 'funds_withdrawn');
      expect(await books(d.id)).toEqual({ disputes: 170_000, receivable: -170_000 });
      expectBooks(170_000, 'funds_withdrawn', 170_000);

      const b = await captured(171_000);
      await requestRefund(gw.rt, gw.merchantId, b, 171_000, null);
      await until(async () => (await adyen.ledger()).find((e) => e.reference === b.attempts[0]!.id)?.refunded ?? 0, (n) => n === 171_000, 'the refund at Adyen');
      await postNotification(b, 'CHARGEBACK', 'DSPWHILEREFUNDING', 171_000);
      const [heldRefund] = await heldReason(b);
      expect(heldRefund!.reason).toMatch(/refund .* is in flight/);
      // Refunded in full, then charged back: Adyen withdraws all the same; the books follow it.
      await gw.waitFor(b.id, (x) => x.amountRefunded === 171_000);
      const e = await disputeOf(b, 'funds_withdrawn');
      expect(await books(e.id)).toEqual({ disputes: 171_000, receivable: -171_000 });
      totals.captured += 171_000 - 171_000;
      totals.disputed += 171_000;
    } finally {
      await adyen.configureWebhooks({ delayMs: 0 });
    }
  }, 60_000);
});

describe('the books over every path', () => {
  it('`ledger check` passes and GET /v1/balances carries the losses and the open disputes', async () => {
    const check = await checkLedger(gw.rt.database.db);
    expect(check.problems).toEqual([]);
    const res = await fetch(`http://127.0.0.1:${shipped.server.port}/v1/balances`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ object: 'list', data: [{ object: 'balance', currency: 'EUR', payable: totals.captured - totals.lost, disputed: totals.disputed }], has_more: false, next_cursor: null });
  });

  it('every dispute event recorded was delivered to the merchant endpoint, with its dispute', async () => {
    const recorded = await q<{ id: string; type: string }>(`SELECT id, type FROM merchant_events WHERE type LIKE 'dispute.%' ORDER BY id`);
    expect(new Set(recorded.map((e) => e.type))).toEqual(new Set(DISPUTE_EVENTS));
    const got = await receiver.waitFor((r) => new Set(r.map((x) => (JSON.parse(x.body.toString('utf8')) as { id: string }).id)).size >= recorded.length, 30_000);
    const bodies = new Map(got.map((x) => { const b = JSON.parse(x.body.toString('utf8')) as { id: string; type: string; data: { dispute?: { status: string; provider_reference: string } } }; return [b.id, b]; }));
    for (const e of recorded) {
      expect(bodies.get(e.id)?.type, e.id).toBe(e.type);
      expect(bodies.get(e.id)?.data.dispute?.provider_reference, e.id).toEqual(expect.any(String));
    }
  }, 40_000);
});
