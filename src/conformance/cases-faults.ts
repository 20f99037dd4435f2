// Faults: the three outcomes must stay apart. An outage is not_sent; a dropped or reset call is
// unknown or the true outcome, never a made-up decline or not_sent; a replay with the same key
// never charges twice; and a key past its retention is never resent because the provider forgets it.

import { describe, expect, it } from 'vitest';
import { DEFAULT_CORE_POLICY } from '../core/policy.ts';
import { mayResend } from '../core/keys.ts';
import type { CallOutcome } from '../core/outcome.ts';
import type { FaultMode } from '../sandboxes/shared/control.ts';
import { testCardNumber } from '../connectors/test-cards.ts';
import { useSandbox } from './context.ts';
import { authorizePayment, authorizeRequest, keyFor } from './harness.ts';
import type { PaymentHandle } from './harness.ts';
import { capture, refund } from './cases-payments.ts';
import type { Connector } from '../connectors/contract.ts';
import type { ConformanceSandbox, ConformanceSubject } from './subject.ts';

const ALLOWED_AFTER_FAULT = (truth: CallOutcome['kind']): readonly CallOutcome['kind'][] => ['unknown', truth];

export function registerFaultCases<S extends ConformanceSandbox>(subject: ConformanceSubject<S>): void {
  describe('faults', () => {
    const kit = useSandbox(subject);

    it('an outage yields not_sent{connection_refused}; the same key succeeds once the provider is back', async () => {
      const { connector, sandbox, ledgerOf } = kit();
      const req = authorizeRequest(connector);
      await sandbox.outage(60);
      try {
        const p = await authorizePayment(connector, req);
        expect(p.outcome, JSON.stringify(p.outcome)).toMatchObject({ kind: 'not_sent', reason: 'connection_refused' });
        expect((await ledgerOf(req.attemptId))).toHaveLength(0);
      } finally {
        await sandbox.outage(0);
      }
      const again = await authorizePayment(connector, req);
      expect(again.outcome.kind).toBe('succeeded');
      expect((await ledgerOf(req.attemptId))).toMatchObject([{ authorized: 1000 }]);
    });

    const faultModes: readonly FaultMode[] = ['accept_then_drop', 'reset_before_processing'];
    for (const mode of faultModes) {
      for (const count of [1, 2]) {
        for (const scenario of ['approved', 'insufficient_funds'] as const) {
          it(`${mode} x${count} on authorize (${scenario}) is unknown or the truth, never a guess`, async () => {
            const { connector, sandbox, ledgerOf } = kit();
            // More firings than the SDK makes requests would linger and hit the next test.
            if (count > 1 + (subject.sdkResendsAfterReset ?? 1)) return;
            const truth = scenario === 'approved' ? 'succeeded' : 'declined';
            await sandbox.scheduleFault({ op: 'authorize', mode, count });
            const p = await authorizePayment(connector, { card: testCardNumber(scenario) });
            expect(ALLOWED_AFTER_FAULT(truth), JSON.stringify(p.outcome)).toContain(p.outcome.kind);
            const authorized = (await ledgerOf(p.attemptId)).reduce((s, e) => s + e.authorized, 0);
            // A reset request lands only through the SDK's own resend, if it makes one.
            const resends = subject.sdkResendsAfterReset ?? 1;
            expect(authorized).toBe(truth === 'succeeded' && (mode === 'accept_then_drop' || count <= resends) ? 1000 : 0);
          });
        }
      }
    }

    for (const op of ['create', 'capture', 'void', 'refund'] as const) {
      for (const mode of faultModes) {
        it(`${mode} on every attempt of ${op} is unknown, never not_sent or declined`, async () => {
          const { connector, sandbox } = kit();
          if (op === 'create' && !connector.capabilities.preparesAuthorization) return;
          const p = op === 'create' ? null : await authorizePayment(connector, { amount: 1000, captureMethod: op === 'refund' ? 'automatic' : 'manual' });
          await sandbox.scheduleFault({ op, mode, count: 1 + (subject.sdkResendsAfterReset ?? 1) });
          const o = await runOp(connector, op, p);
          expect(o, JSON.stringify(o)).toMatchObject({ kind: 'unknown' });
        });
      }
    }

    it('a query after accept_then_drop finds the truth', async () => {
      const { connector, sandbox } = kit();
      if (!connector.capabilities.queryByReference) return;
      await sandbox.scheduleFault({ op: 'authorize', mode: 'accept_then_drop', count: 1 + (subject.sdkResendsAfterReset ?? 1) });
      const p = await authorizePayment(connector, { amount: 1000 });
      expect(p.outcome.kind).toBe('unknown');
      const q = await connector.query({ attemptId: p.attemptId, providerRef: p.providerRef, amount: 1000, currency: p.currency, sentAt: p.sentAt });
      expect(q, JSON.stringify(q)).toMatchObject({ kind: 'succeeded', amount: 1000 });
    });

    it('a query for an authorization that never arrived is unknown: no trace is not proof', async () => {
      const { connector } = kit();
      const req = authorizeRequest(connector);
      const none = await connector.query({ attemptId: req.attemptId, providerRef: null, amount: req.amount, currency: req.currency, sentAt: new Date().toISOString() });
      expect(none.kind).toBe('unknown');
      if (connector.prepare === undefined) return;
      const prepared = await connector.prepare({ ...req, idempotencyKey: keyFor(connector, req.paymentId, 'prepare') });
      const ref = 'providerRef' in prepared ? prepared.providerRef ?? null : null;
      const q = await connector.query({ attemptId: req.attemptId, providerRef: ref, amount: req.amount, currency: req.currency });
      expect(q, JSON.stringify(q)).toMatchObject({ kind: 'unknown', reason: 'not_found' });
    });

    // Assumes what Stripe documents: a canceled PaymentIntent can never be confirmed. (A fence by our
    // own reference assumes nothing of the kind: the "fence by our reference" cases.)
    it('a fence (cancel of the prepared object) before the authorization arrives holds: a late authorize never charges and a query proves no charge', async () => {
      const { connector, ledgerOf } = kit();
      if (connector.prepare === undefined) return;
      const req = authorizeRequest(connector);
      const prepared = await connector.prepare({ ...req, idempotencyKey: keyFor(connector, req.paymentId, 'prepare') });
      expect(prepared.kind).toBe('succeeded');
      const ref = 'providerRef' in prepared ? prepared.providerRef ?? '' : '';
      const fence = await connector.void({ paymentId: req.paymentId, attemptId: req.attemptId, providerRef: ref, amount: req.amount, currency: req.currency, idempotencyKey: keyFor(connector, req.paymentId, 'fence') });
      expect(fence.kind).toBe('succeeded');
      const late = await connector.authorize({ ...req, providerRef: ref });
      expect(['not_sent', 'declined'], JSON.stringify(late)).toContain(late.kind);
      const q = await connector.query({ attemptId: req.attemptId, providerRef: ref, amount: req.amount, currency: req.currency });
      expect(q, JSON.stringify(q)).toMatchObject({ kind: 'declined', retryElsewhere: true });
      expect((await ledgerOf(req.attemptId)).every((e) => e.authorized === 0 && e.cancelled)).toBe(true);
    });

    it('a replay with the same key returns the same answer and never charges twice', async () => {
      const { connector, ledgerOf } = kit();
      const req = authorizeRequest(connector);
      const first = await authorizePayment(connector, req);
      const second = await authorizePayment(connector, req);
      expect(first.outcome.kind).toBe('succeeded');
      expect(second.outcome).toEqual(first.outcome);
      expect((await ledgerOf(req.attemptId))).toHaveLength(1);
      expect((await ledgerOf(req.attemptId))[0]?.authorized).toBe(1000);
    });

    it('declares its key retention; the core refuses a resend past it; the sandbox really forgets the key then', async () => {
      const { connector, sandbox, ledgerOf } = kit();
      const retention = connector.policy.keyRetentionMs;
      const sentAt = new Date();
      const margin = DEFAULT_CORE_POLICY.retentionMarginMs;
      expect(mayResend(sentAt, new Date(sentAt.getTime() + retention - margin - 1), retention, margin)).toBe(true);
      expect(mayResend(sentAt, new Date(sentAt.getTime() + retention - margin), retention, margin)).toBe(false);
      expect(mayResend(sentAt, new Date(sentAt.getTime() + retention + 1), retention, margin)).toBe(false);

      // The first money-moving-or-not call of an authorization, resent with the same key.
      const req = authorizeRequest(connector);
      const send = async (): Promise<CallOutcome> =>
        connector.capabilities.preparesAuthorization && connector.prepare !== undefined
          ? connector.prepare({ ...req, idempotencyKey: keyFor(connector, req.paymentId, 'prepare') })
          : connector.authorize({ ...req, providerRef: null });
      const first = await send();
      await sandbox.advanceClock(retention / 1000 - 60);
      const inside = await send();
      expect(inside).toEqual(first); // still remembered just inside the declared window
      await sandbox.advanceClock(120);
      const after = await send();
      expect(after.kind).toBe('succeeded');
      expect('providerRef' in after && after.providerRef).not.toBe('providerRef' in first && first.providerRef);
      expect((await ledgerOf(req.attemptId))).toHaveLength(2); // a second object: why the core never resends past retention
    });
  });
}


async function runOp(c: Connector, op: 'create' | 'capture' | 'void' | 'refund', p: PaymentHandle | null): Promise<CallOutcome> {
  if (op === 'create' || p === null) {
    const req = authorizeRequest(c);
    if (c.prepare === undefined) throw new Error('create faults need a preparing connector');
    return c.prepare({ ...req, idempotencyKey: keyFor(c, req.paymentId, 'prepare') });
  }
  if (op === 'capture') return capture(c, p, 1000);
  if (op === 'refund') return refund(c, p, 1000);
  return c.void({ paymentId: p.paymentId, attemptId: p.attemptId, providerRef: p.providerRef ?? '', amount: p.amount, currency: p.currency, idempotencyKey: keyFor(c, p.paymentId, 'void') });
}
