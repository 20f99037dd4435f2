// Each provider's dispute lifecycle (src/connectors/<provider>/dispute-lifecycle.ts) through the
// common plan (src/core/disputes.ts), pure: every path the issue names, in order and in every
// delivery order, ends in the same state with the same money booked; inquiries move nothing; a
// dispute first heard of at its end books the net; the Adyen notification names the dispute by
// its own pspReference and the payment by originalReference.
import { describe, expect, it } from 'vitest';
import { ADYEN_DEFAULT_DECLINES } from '../../../src/connectors/adyen/defaults.ts';
import { adyenDisputeStep } from '../../../src/connectors/adyen/dispute-lifecycle.ts';
import { normalizeItem } from '../../../src/connectors/adyen/webhook.ts';
import { verifyAdyenWebhook } from '../../../src/connectors/adyen/webhook.ts';
import type { DisputeBalanceTransaction } from '../../../src/connectors/contract.ts';
import { stripeDisputeStep } from '../../../src/connectors/stripe/dispute-lifecycle.ts';
import { isFinalDispute, planDispute } from '../../../src/core/disputes.ts';
import type { DisputeEventType, DisputeRecordState, DisputeStatus, DisputeStep } from '../../../src/core/disputes.ts';
import { imbalance, ledgerAccounts } from '../../../src/core/ledger.ts';
import { basicAuthorization, notificationBody, signNotificationItem } from '../../../src/sandboxes/adyen/index.ts';

const A = 10_000;
const accounts = { disputeId: 'dsp_1', connector: 'c', merchantId: 'm' };
const receivable = ledgerAccounts.connectorReceivable('c');
const disputesAccount = ledgerAccounts.disputes('m');
const payable = ledgerAccounts.merchantPayable('m');
const fees = ledgerAccounts.fees('c');

interface Outcome {
  status: DisputeStatus | null;
  withdrawn: number;
  balances: Record<string, number>;
  events: DisputeEventType[];
}

/** Applies the steps in order as the gateway does (a final dispute takes nothing more), summing the postings per account. */
function run(steps: readonly ((s: DisputeRecordState | null) => DisputeStep)[]): Outcome {
  let state: DisputeRecordState | null = null;
  const posted = new Set<string>();
  const balances: Record<string, number> = {};
  const events: DisputeEventType[] = [];
  for (const make of steps) {
    if (state !== null && isFinalDispute(state.status)) continue;
    const step = make(state);
    if (step.kind === 'stale') continue;
    const plan = planDispute(state, { amount: A, currency: 'EUR' }, step, accounts, posted);
    for (const p of plan.postings) {
      expect(posted.has(p.source)).toBe(false);
      posted.add(p.source);
      expect(Object.values(imbalance(p.posting.lines)).every((v) => v === 0)).toBe(true);
      for (const l of p.posting.lines) balances[l.account] = (balances[l.account] ?? 0) + (l.direction === 'debit' ? l.amount : -l.amount);
    }
    events.push(...plan.events);
    state = plan.next;
  }
  return { status: state?.status ?? null, withdrawn: state?.withdrawn ?? 0, balances: Object.fromEntries(Object.entries(balances).filter(([, v]) => v !== 0)), events };
}

function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [[...xs]];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

const adyen = (code: string, status: string | null = null) => (s: DisputeRecordState | null) => adyenDisputeStep(s, code, status, A, 'EUR');

const withdrawnOpen = { [disputesAccount]: A, [receivable]: -A };
const lostBooks = { [payable]: A, [receivable]: -A };

describe('Adyen dispute lifecycle', () => {
  // [name, path (code + disputeStatus), final status, withdrawn, balances]
  const paths: [string, [string, string | null][], DisputeStatus, number, Record<string, number>][] = [
    ['chargeback defended, issuer accepts', [['NOTIFICATION_OF_CHARGEBACK', 'Unresponded'], ['CHARGEBACK', 'Undefended'], ['INFORMATION_SUPPLIED', 'Responded'], ['CHARGEBACK_REVERSED', 'Pending'], ['ISSUER_RESPONSE_TIMEFRAME_EXPIRED', 'Won']], 'won', 0, {}],
    ['chargeback not defended', [['DISPUTE_OPENED_WITH_CHARGEBACK', 'Undefended'], ['CHARGEBACK', 'Undefended'], ['DISPUTE_DEFENSE_PERIOD_ENDED', 'Expired']], 'lost', A, lostBooks],
    ['chargeback accepted', [['CHARGEBACK', 'Accepted']], 'lost', A, lostBooks],
    ['second chargeback after a reversal', [['CHARGEBACK', 'Undefended'], ['CHARGEBACK_REVERSED', 'Pending'], ['SECOND_CHARGEBACK', 'Lost']], 'lost', A, lostBooks],
    ['pre-arbitration won', [['CHARGEBACK', 'Undefended'], ['CHARGEBACK_REVERSED', 'Pending'], ['SECOND_CHARGEBACK', 'Pending'], ['PREARBITRATION_WON', 'Won']], 'won', 0, {}],
    ['pre-arbitration lost', [['CHARGEBACK', 'Undefended'], ['CHARGEBACK_REVERSED', 'Pending'], ['SECOND_CHARGEBACK', 'Pending'], ['ISSUER_COMMENTS', 'Pending'], ['PREARBITRATION_LOST', 'Lost']], 'lost', A, lostBooks],
    ['request for information, answered', [['REQUEST_FOR_INFORMATION', 'Unresponded'], ['INFORMATION_SUPPLIED', 'Responded'], ['ISSUER_RESPONSE_TIMEFRAME_EXPIRED', 'Expired']], 'closed', 0, {}],
    ['notification of fraud', [['NOTIFICATION_OF_FRAUD', null]], 'opened', 0, {}],
    ['chargeback still open after its reversal', [['CHARGEBACK', 'Undefended'], ['CHARGEBACK_REVERSED', 'Won']], 'funds_reinstated', 0, {}],
    ['chargeback open', [['NOTIFICATION_OF_CHARGEBACK', 'Unresponded'], ['CHARGEBACK', 'Undefended'], ['ISSUER_COMMENTS', 'Pending']], 'funds_withdrawn', A, withdrawnOpen],
  ];

  it.each(paths)('%s: in order, and without disputeStatus (Brazil), the same end', (_name, path, status, withdrawn, balances) => {
    for (const brazil of [false, true]) {
      // Without disputeStatus a second chargeback is final (nothing says pre-arbitration is open):
      // the pre-arbitration paths are only run with it.
      if (brazil && path.some(([, s]) => s === 'Pending' && path.some(([c]) => c.startsWith('PREARBITRATION')))) continue;
      if (brazil && path.some(([c, s]) => c === 'CHARGEBACK' && s === 'Accepted')) continue;
      const r = run(path.map(([c, s]) => adyen(c, brazil ? null : s)));
      expect([r.status, r.withdrawn, r.balances], `brazil=${brazil}`).toEqual([status, withdrawn, balances]);
    }
  });

  it.each(paths.filter(([, path]) => path.length <= 5))('%s: every delivery order books the same money', (_name, path, _status, _withdrawn, balances) => {
    for (const order of permutations(path)) {
      const r = run(order.map(([c, s]) => adyen(c, s)));
      // A late CHARGEBACK after its reversal is stale: money is what Adyen moved, whatever the order.
      expect([r.balances, r.withdrawn > 0 ? 'withdrawn' : 'not'], order.map(([c]) => c).join(' > ')).toEqual([balances, balances[receivable] === undefined ? 'not' : 'withdrawn']);
    }
  });

  it('the issue: CHARGEBACK > CHARGEBACK_REVERSED > SECOND_CHARGEBACK never tells the merchant won, and ends lost with the funds gone', () => {
    const r = run([adyen('CHARGEBACK'), adyen('CHARGEBACK_REVERSED'), adyen('SECOND_CHARGEBACK')]);
    expect(r.events).toEqual(['dispute.opened', 'dispute.funds_withdrawn', 'dispute.funds_reinstated', 'dispute.funds_withdrawn', 'dispute.lost']);
    expect(r.balances).toEqual(lostBooks);
  });

  it('an RFI moves nothing and closes; a late CHARGEBACK after a final step is not applied', () => {
    expect(run([adyen('REQUEST_FOR_INFORMATION'), adyen('ISSUER_RESPONSE_TIMEFRAME_EXPIRED')]).events).toEqual(['dispute.opened', 'dispute.closed']);
    expect(run([adyen('CHARGEBACK_REVERSED'), adyen('CHARGEBACK')])).toMatchObject({ status: 'funds_reinstated', balances: {} });
  });

  it('a dispute notification names the dispute by its pspReference and the payment by originalReference', () => {
    const key = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
    for (const eventCode of ['NOTIFICATION_OF_CHARGEBACK', 'CHARGEBACK', 'CHARGEBACK_REVERSED', 'SECOND_CHARGEBACK']) {
      const item = signNotificationItem({ additionalData: { disputeStatus: 'Lost' }, amount: { value: 1000, currency: 'EUR' }, eventCode, eventDate: '2026-11-03T10:00:00+01:00', merchantAccountCode: 'M', merchantReference: 'att_1', pspReference: 'DSP1', originalReference: 'PAY1', reason: '10.4', success: 'true' }, key);
      const v = verifyAdyenWebhook(Buffer.from(notificationBody([item])), { authorization: basicAuthorization('u', 'p') }, { hmacKeys: [key], username: 'u', password: 'p' }, new Date(), ADYEN_DEFAULT_DECLINES);
      expect(v.ok && v.events[0], eventCode).toMatchObject({ kind: 'dispute', disputeRef: 'DSP1', providerRef: 'PAY1', attemptId: 'att_1', amount: 1000, providerEventId: `${eventCode}:DSP1:true`, fact: { provider: 'adyen', eventCode, disputeStatus: 'Lost' } });
    }
    expect(normalizeItem({ eventCode: 'CHARGEBACK', pspReference: 'DSP1', success: 'true', amount: { value: 500, currency: 'EUR' } }, ADYEN_DEFAULT_DECLINES)).toMatchObject({ kind: 'dispute', fact: { disputeStatus: null } });
  });
});

const txn = (id: string, amount: number, fee: number): DisputeBalanceTransaction => ({ id, amount, fee, currency: 'EUR' });
const W = txn('txn_w', -A, 1500);
const R = txn('txn_r', A, -1500);
const stripe = (status: string, transactions: DisputeBalanceTransaction[] = []) => (s: DisputeRecordState | null) => stripeDisputeStep(s, status, transactions);

describe('Stripe dispute lifecycle', () => {
  // Each path as the events Stripe sends, each event carrying the dispute object with its balance transactions so far.
  const paths: [string, ((s: DisputeRecordState | null) => DisputeStep)[], DisputeStatus, number, Record<string, number>, DisputeEventType[]][] = [
    ['inquiry closed', [stripe('warning_needs_response'), stripe('warning_under_review'), stripe('warning_closed')], 'closed', 0, {}, ['dispute.opened', 'dispute.closed']],
    ['inquiry prevented', [stripe('warning_needs_response'), stripe('prevented')], 'closed', 0, {}, ['dispute.opened', 'dispute.closed']],
    ['inquiry escalated, won', [stripe('warning_needs_response'), stripe('needs_response'), stripe('needs_response', [W]), stripe('under_review', [W]), stripe('won', [W, R]), stripe('won', [W, R])], 'won', 0, {}, ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.funds_reinstated', 'dispute.won']],
    ['chargeback lost', [stripe('needs_response'), stripe('needs_response', [W]), stripe('under_review', [W]), stripe('lost', [W])], 'lost', A, { [payable]: A, [fees]: 1500, [receivable]: -A - 1500 }, ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.lost']],
    ['appeal won', [stripe('needs_response', [W]), stripe('under_review', [W]), stripe('appeal_needs_response', [W]), stripe('appeal_under_review', [W]), stripe('won', [W, R])], 'won', 0, {}, ['dispute.opened', 'dispute.funds_withdrawn', 'dispute.funds_reinstated', 'dispute.won']],
    ['chargeback open', [stripe('needs_response', [W]), stripe('under_review', [W])], 'funds_withdrawn', A, { [disputesAccount]: A, [fees]: 1500, [receivable]: -A - 1500 }, ['dispute.opened', 'dispute.funds_withdrawn']],
  ];

  it.each(paths)('%s: state, money and merchant events in order', (_name, path, status, withdrawn, balances, events) => {
    expect(run(path)).toEqual({ status, withdrawn, balances, events });
  });

  it.each(paths)('%s: every delivery order books the same money and ends the same', (_name, path, status, withdrawn, balances) => {
    for (const order of permutations(path.slice(0, 5))) {
      const r = run([...order, ...path.slice(5)]);
      expect([r.status, r.withdrawn, r.balances]).toEqual([status, withdrawn, balances]);
    }
  });

  it('an inquiry (warning_needs_response) withdraws nothing; an unknown status is not applied', () => {
    expect(run([stripe('warning_needs_response')])).toEqual({ status: 'opened', withdrawn: 0, balances: {}, events: ['dispute.opened'] });
    expect(stripeDisputeStep(null, 'charge_refunded', []).kind).toBe('stale');
  });
});
