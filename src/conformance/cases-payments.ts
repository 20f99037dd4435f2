// Happy paths and business refusals: authorize (approved, hard and soft declines), capture (full,
// partial, multicapture), void, refunds, amounts in 0/2/3-decimal currencies, declared capabilities.

import { describe, expect, it } from 'vitest';
import { newId } from '../core/ids.ts';
import type { CallOutcome } from '../core/outcome.ts';
import type { Connector, ReconciliationRecord, ReconciliationWindow } from '../connectors/contract.ts';
import { declineRuleFor } from '../connectors/decline-table.ts';
import { testCardNumber } from '../connectors/test-cards.ts';
import type { TestCardScenario } from '../connectors/test-cards.ts';
import { useSandbox } from './context.ts';
import { authorizePayment, keyFor, settleModification } from './harness.ts';
import type { PaymentHandle } from './harness.ts';
import type { ConformanceSandbox, ConformanceSubject } from './subject.ts';

function succeeded(o: CallOutcome): Extract<CallOutcome, { kind: 'succeeded' }> {
  expect(o, JSON.stringify(o)).toMatchObject({ kind: 'succeeded' });
  return o as Extract<CallOutcome, { kind: 'succeeded' }>;
}

function ref(p: PaymentHandle): string {
  expect(p.providerRef, 'authorization carries a provider reference').toBeTypeOf('string');
  return p.providerRef as string;
}

/** Capture; with asyncModifications a `pending` answer is settled by the provider's webhook. */
export async function capture(c: Connector, p: PaymentHandle, amount: number, final = true, n = 1, alreadyCaptured = 0): Promise<CallOutcome> {
  const o = await c.capture({
    paymentId: p.paymentId, attemptId: p.attemptId, captureId: newId('capture'), providerRef: ref(p),
    amount, currency: p.currency, final, alreadyCaptured, idempotencyKey: keyFor(c, p.paymentId, 'capture', n),
  });
  return settleModification(c, o, { op: 'capture', paymentRef: ref(p), amount, currency: p.currency });
}

/** Refund; with asyncModifications a `pending` answer is settled by the provider's webhook. */
export async function refund(c: Connector, p: PaymentHandle, amount: number, n = 1): Promise<CallOutcome> {
  const o = await c.refund({
    paymentId: p.paymentId, attemptId: p.attemptId, refundId: newId('refund'), providerRef: ref(p),
    amount, currency: p.currency, reason: 'requested_by_customer', idempotencyKey: keyFor(c, p.paymentId, 'refund', n),
  });
  return settleModification(c, o, { op: 'refund', paymentRef: ref(p), amount, currency: p.currency });
}

const DECLINES: readonly { scenario: TestCardScenario; class: 'hard' | 'soft'; retryElsewhere?: boolean }[] = [
  { scenario: 'stolen_card', class: 'hard', retryElsewhere: false },
  { scenario: 'lost_card', class: 'hard', retryElsewhere: false },
  { scenario: 'expired_card', class: 'hard', retryElsewhere: false },
  { scenario: 'incorrect_cvc', class: 'hard' },
  { scenario: 'insufficient_funds', class: 'soft', retryElsewhere: false },
  { scenario: 'generic_decline', class: 'soft' },
  { scenario: 'processing_error', class: 'soft', retryElsewhere: true },
];

export function registerPaymentCases<S extends ConformanceSandbox>(subject: ConformanceSubject<S>): void {
  describe('authorize', () => {
    const kit = useSandbox(subject);

    it('approves the approved test card for the full amount; the sandbox holds it uncaptured', async () => {
      const { connector, ledgerOf } = kit();
      const p = await authorizePayment(connector, { amount: 1000 });
      expect(succeeded(p.outcome)).toMatchObject({ amount: 1000, providerRef: p.providerRef });
      expect((await ledgerOf(p.attemptId))).toMatchObject([{ authorized: 1000, captured: 0, cancelled: false }]);
    });

    for (const d of DECLINES) {
      it(`declines ${d.scenario} as ${d.class}${d.retryElsewhere === true ? ', retry elsewhere' : ''}, as its decline table says`, async () => {
        const { connector, ledgerOf } = kit();
        const p = await authorizePayment(connector, { card: testCardNumber(d.scenario) });
        expect(p.outcome, JSON.stringify(p.outcome)).toMatchObject({ kind: 'declined', class: d.class });
        const o = p.outcome as Extract<CallOutcome, { kind: 'declined' }>;
        expect({ class: o.class, retryElsewhere: o.retryElsewhere }).toEqual(declineRuleFor(connector.declineTable, o.code));
        if (d.retryElsewhere !== undefined) expect(o.retryElsewhere).toBe(d.retryElsewhere);
        expect(o.providerRef, 'a decline names the provider object').toBeTypeOf('string');
        expect((await ledgerOf(p.attemptId)).every((e) => e.authorized === 0 && e.captured === 0)).toBe(true);
      });
    }

    it('refuses a test card on a live account before sending anything', async () => {
      const { connectorWith, sandbox } = kit();
      const before = (await sandbox.ledger()).length;
      const p = await authorizePayment(connectorWith({ liveAccount: true }));
      expect(p.outcome).toMatchObject({ kind: 'not_sent', reason: 'local_validation' });
      expect((await sandbox.ledger()).length).toBe(before);
    });

    it(`accepts a key of exactly maxKeyLength characters`, async () => {
      const { connector } = kit();
      const paymentId = newId('payment');
      const p = await authorizePayment(connector, { paymentId, authKey: `${paymentId}:`.padEnd(connector.policy.maxKeyLength, 'k') });
      succeeded(p.outcome);
    });

    for (const { currency, amount, received } of subject.amountCases) {
      it(`round-trips ${amount} minor units of ${currency} through authorize, capture and refund (the provider receives ${received})`, async () => {
        const { connector, ledgerOf } = kit();
        const p = await authorizePayment(connector, { amount, currency });
        expect(succeeded(p.outcome)).toMatchObject({ amount, currency });
        // The ledger in ISO units (the provider's reading of what it got) and as received.
        expect(await ledgerOf(p.attemptId)).toMatchObject([{ authorized: amount, received: { authorized: received } }]);
        expect(succeeded(await capture(connector, p, amount))).toMatchObject({ amount });
        const r = await refund(connector, p, amount);
        expect(succeeded(r)).toMatchObject({ amount });
        expect(await ledgerOf(p.attemptId)).toMatchObject([{ captured: amount, refunded: amount, received: { captured: received, refunded: received } }]);
      });
    }

    for (const { currency, amount } of subject.unsendableAmounts) {
      it(`refuses ${amount} minor units of ${currency} before sending, naming the amount`, async () => {
        const { connector, sandbox } = kit();
        const before = (await sandbox.ledger()).length;
        const { outcome } = await authorizePayment(connector, { amount, currency });
        expect(outcome).toMatchObject({ kind: 'not_sent', reason: 'local_validation', detail: expect.stringContaining(`${amount} ${currency}`) as unknown });
        expect((await sandbox.ledger()).length).toBe(before);
      });
    }
  });

  describe('capture, void, refund', () => {
    const kit = useSandbox(subject);

    it('captures the full authorization', async () => {
      const { connector, ledgerOf } = kit();
      const p = await authorizePayment(connector, { amount: 1000 });
      expect(succeeded(await capture(connector, p, 1000))).toMatchObject({ amount: 1000 });
      expect((await ledgerOf(p.attemptId))).toMatchObject([{ captured: 1000 }]);
    });

    it('captures part of the authorization when partialCapture is declared (refuses it otherwise); the rest cannot be captured after a final capture', async () => {
      const { connector, ledgerOf } = kit();
      const p = await authorizePayment(connector, { amount: 1000 });
      if (!connector.capabilities.partialCapture) {
        expect((await capture(connector, p, 600)).kind).not.toBe('succeeded');
        expect((await ledgerOf(p.attemptId))).toMatchObject([{ captured: 0 }]);
        return;
      }
      expect(succeeded(await capture(connector, p, 600))).toMatchObject({ amount: 600 });
      const again = await capture(connector, p, 400, true, 2, 600);
      expect(again.kind).not.toBe('succeeded');
      expect((await ledgerOf(p.attemptId))).toMatchObject([{ captured: 600 }]);
    });

    it('captures several times when multicapture is declared (refuses a non-final capture otherwise)', async () => {
      const { connector, ledgerOf } = kit();
      const p = await authorizePayment(connector, { amount: 1000 });
      if (!connector.capabilities.multicapture) {
        expect((await capture(connector, p, 300, false)).kind).not.toBe('succeeded');
        return;
      }
      expect(succeeded(await capture(connector, p, 300, false, 1, 0))).toMatchObject({ amount: 300 });
      expect(succeeded(await capture(connector, p, 200, false, 2, 300))).toMatchObject({ amount: 200 });
      expect(succeeded(await capture(connector, p, 500, true, 3, 500))).toMatchObject({ amount: 500 });
      expect((await ledgerOf(p.attemptId))).toMatchObject([{ captured: 1000 }]);
    });

    it('voids an authorization: the hold is released and nothing is captured', async () => {
      const { connector, ledgerOf } = kit();
      const p = await authorizePayment(connector, { amount: 1000 });
      const v = await connector.void({ paymentId: p.paymentId, attemptId: p.attemptId, providerRef: ref(p), amount: 1000, currency: p.currency, idempotencyKey: keyFor(connector, p.paymentId, 'void') });
      succeeded(await settleModification(connector, v, { op: 'void', paymentRef: ref(p), amount: 1000, currency: p.currency }));
      expect((await ledgerOf(p.attemptId))).toMatchObject([{ cancelled: true, captured: 0 }]);
    });

    it('refunds in full', async () => {
      const { connector, ledgerOf } = kit();
      const p = await authorizePayment(connector, { amount: 1000, captureMethod: 'automatic' });
      expect(succeeded(p.outcome)).toMatchObject({ amount: 1000 });
      expect(succeeded(await refund(connector, p, 1000))).toMatchObject({ amount: 1000 });
      expect((await ledgerOf(p.attemptId))).toMatchObject([{ captured: 1000, refunded: 1000 }]);
    });

    it('refunds partially, several times, and never beyond the captured amount (refuses partial refunds when undeclared)', async () => {
      const { connector, ledgerOf } = kit();
      const p = await authorizePayment(connector, { amount: 1000, captureMethod: 'automatic' });
      if (!connector.capabilities.partialRefund) {
        expect((await refund(connector, p, 300)).kind).not.toBe('succeeded');
        return;
      }
      for (const [i, amount] of [300, 300, 400].entries()) expect(succeeded(await refund(connector, p, amount, i + 1))).toMatchObject({ amount });
      expect((await refund(connector, p, 10, 4)).kind).not.toBe('succeeded');
      expect((await ledgerOf(p.attemptId))).toMatchObject([{ refunded: 1000 }]);
    });

    it('queries an authorization by provider reference when queryByReference is declared', async () => {
      const { connector } = kit();
      if (!connector.capabilities.queryByReference) return;
      const p = await authorizePayment(connector, { amount: 1000 });
      const q = await connector.query({ attemptId: p.attemptId, providerRef: p.providerRef, amount: 1000, currency: p.currency });
      expect(succeeded(q)).toMatchObject({ amount: 1000, providerRef: p.providerRef });
    });
  });

  describe('reconciliation', () => {
    const kit = useSandbox(subject);
    /** Only what the provider announced is downloaded, by the name it announced (never a made-up one). */
    async function fromAnnouncedReports(window: ReconciliationWindow): Promise<readonly ReconciliationRecord[]> {
      const { connector, sandbox } = kit();
      const { reports } = connector;
      expect(reports, 'a connector without fetchReconciliationRecords reads announced reports').toBeDefined();
      expect(subject.publishReports !== undefined, 'its subject lets the sandbox announce them').toBe(true);
      const files = await subject.publishReports!(sandbox);
      expect(files.length).toBeGreaterThan(0);
      const texts: { name: string; text: string }[] = [];
      for (const name of files) {
        expect(reports!.accepts(name), name).not.toBeNull();
        const text = await reports!.download(name);
        expect(text, `${name} is served once announced`).not.toBeNull();
        texts.push({ name, text: text! });
      }
      return reports!.records(texts, window);
    }
    it('reports every payment of the window with the amounts the sandbox ledger holds', async () => {
      const { connector, ledgerOf } = kit();
      const from = new Date(Date.now() - 60_000);
      const held = await authorizePayment(connector, { amount: 1000 });
      const taken = await authorizePayment(connector, { amount: 2000, captureMethod: 'automatic' });
      succeeded(await refund(connector, taken, 500));
      await new Promise((r) => setTimeout(r, connector.reconciliationDelayMs));
      const window = { from, to: new Date(Date.now() + 60_000) };
      const records = connector.fetchReconciliationRecords !== undefined ? await connector.fetchReconciliationRecords(window) : await fromAnnouncedReports(window);

      for (const [p, expected] of [[held, { authorized: 1000, captured: 0, refunded: 0 }], [taken, { authorized: 2000, captured: 2000, refunded: 500 }]] as const) {
        const mine = records.filter((r) => r.attemptId === p.attemptId);
        expect(mine).toMatchObject([{ providerRef: p.providerRef, amount: p.amount, currency: p.currency, ...expected }]);
        const ledger = (await ledgerOf(p.attemptId))[0];
        expect({ captured: mine[0]?.captured, refunded: mine[0]?.refunded }).toEqual({ captured: ledger?.captured, refunded: ledger?.refunded });
      }
    });
  });

  describe('declared capabilities', () => {
    const kit = useSandbox(subject);
    it('match the methods the connector has and its policy is usable', () => {
      const { connector } = kit();
      expect(connector.capabilities).toBe(connector.policy.capabilities);
      // A connector that prepares has prepare; one that stopped preparing may keep it for attempts persisted before (Stripe).
      if (connector.capabilities.preparesAuthorization) expect(typeof connector.prepare).toBe('function');
      // Finding an attempt by our id is a kind of query.
      if (connector.capabilities.queryByMerchantReference) expect(connector.capabilities.queryByReference).toBe(true);
      expect(connector.cancelByReference !== undefined).toBe(connector.capabilities.cancelByMerchantReference);
      expect(connector.policy.maxKeyLength).toBeGreaterThanOrEqual(16);
      expect(connector.policy.keyRetentionMs).toBeGreaterThan(0);
      expect(connector.policy.authHoldMs).toBeGreaterThan(0);
      if (connector.capabilities.multicapture) expect(connector.capabilities.partialCapture).toBe(true);
    });
  });
}
