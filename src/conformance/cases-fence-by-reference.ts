// A fence by our own reference (connectors declaring cancelByMerchantReference: Adyen's technical
// cancel). It is the one fence possible while the provider's id is unknown (a lost /payments
// answer), and its confirmation is the gateway's proof that the attempt did not charge. What it
// proves, and what it does not, is what these cases pin down (issue 41 §5):
// - a cancel of a payment the provider holds names that payment: the proof covers it;
// - a cancel of a reference the provider has not seen is confirmed naming no payment. Whether an
//   authorization already in flight when it arrives is then stopped is not documented: each case
//   says which behaviour it assumes and runs against the sandbox in that behaviour
//   (`configureTechnicalCancel`). Either way the gateway can tell: a later approval names a payment
//   the confirmation never named, and a cancel (or refund) by that payment's reference gives it back.

import { describe, expect, it } from 'vitest';
import type { CallOutcome } from '../core/outcome.ts';
import { useSandbox } from './context.ts';
import { authorizeRequest, eventFor, keyFor, settleModification } from './harness.ts';
import type { Connector } from '../connectors/contract.ts';
import type { ConformanceSandbox, ConformanceSubject } from './subject.ts';

type InFlight = 'cancelled' | 'authorised';

/** Gives an authorization back the way the gateway's release does: void, or refund when captured. */
async function giveBack(connector: Connector, paymentId: string, attemptId: string, psp: string, captured: boolean): Promise<CallOutcome> {
  const base = { paymentId, attemptId, providerRef: psp, amount: 1000, currency: 'EUR' };
  if (!captured) {
    const o = await connector.void({ ...base, idempotencyKey: keyFor(connector, paymentId, 'release') });
    return settleModification(connector, o, { op: 'void', paymentRef: psp, amount: 1000, currency: 'EUR' });
  }
  const refundId = `${attemptId}_release`;
  const o = await connector.refund({ ...base, refundId, reason: 'duplicate', reference: refundId, idempotencyKey: keyFor(connector, paymentId, 'release') });
  return settleModification(connector, o, { op: 'refund', paymentRef: psp, amount: 1000, currency: 'EUR' });
}

export function registerFenceByReferenceCases<S extends ConformanceSandbox>(subject: ConformanceSubject<S>): void {
  describe('fence by our reference', () => {
    const kit = useSandbox(subject);

    /** Runs `body` with the sandbox answering in-flight authorizations as `inFlight`; false when the sandbox cannot (then only its default, `cancelled`, runs). */
    async function assuming(sandbox: S, inFlight: InFlight, body: () => Promise<void>): Promise<boolean> {
      if (sandbox.configureTechnicalCancel === undefined) {
        if (inFlight !== 'cancelled') return false;
        await body();
        return true;
      }
      await sandbox.configureTechnicalCancel(inFlight);
      try {
        await body();
      } finally {
        await sandbox.configureTechnicalCancel('cancelled');
      }
      return true;
    }

    for (const inFlight of ['cancelled', 'authorised'] as const) {
      for (const captureMethod of ['manual', 'automatic'] as const) {
        const then = inFlight === 'cancelled'
          ? 'it is answered Cancelled, nothing charged'
          : `it completes, its approval names a payment the confirmation never named, and ${captureMethod === 'manual' ? 'a cancel' : 'a refund'} by that reference gives it back`;
        it(`assuming an authorization in flight is ${inFlight} by a cancel of its reference (${captureMethod} capture): the cancel is confirmed naming no payment; ${then}`, async () => {
          const { connector, connectorWith, sandbox, receiver, ledgerOf } = kit();
          if (!connector.capabilities.cancelByMerchantReference || connector.cancelByReference === undefined) return;
          await assuming(sandbox, inFlight, async () => {
            const impatient = connectorWith({ timeoutMs: 300 });
            const req = { ...authorizeRequest(impatient, { captureMethod }), providerRef: null };
            // The /payments is taken and held (its key in flight) past the client's timeout: a true unknown.
            await sandbox.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 900, process: 'after', count: 1 });
            expect(await impatient.authorize(req)).toMatchObject({ kind: 'unknown', reason: 'timeout' });
            const fence = await connector.cancelByReference!({ attemptId: req.attemptId, idempotencyKey: keyFor(connector, req.paymentId, 'fence') });
            expect(fence).toMatchObject({ kind: 'pending' });
            const confirmed = await eventFor(connector, receiver, req.attemptId, 'fence_confirmed');
            expect(confirmed).toMatchObject({ kind: 'fence_confirmed', providerRef: null });
            const late = await eventFor(connector, receiver, req.attemptId, 'authorization');
            const entries = await ledgerOf(req.attemptId);
            if (inFlight === 'cancelled') {
              expect(late).toMatchObject({ outcome: { kind: 'declined', code: 'cancelled' } });
              expect(entries).toMatchObject([{ authorized: 0, captured: 0 }]);
              return;
            }
            expect(late).toMatchObject({ outcome: { kind: 'succeeded', amount: 1000 } });
            const psp = late?.providerRef ?? '';
            expect(psp).not.toBe('');
            expect(entries).toMatchObject([{ id: psp, authorized: 1000, captured: captureMethod === 'automatic' ? 1000 : 0, cancelled: false }]);
            expect(await giveBack(connector, req.paymentId, req.attemptId, psp, captureMethod === 'automatic')).toMatchObject({ kind: 'succeeded' });
            expect(await ledgerOf(req.attemptId)).toMatchObject(captureMethod === 'manual' ? [{ cancelled: true, captured: 0 }] : [{ captured: 1000, refunded: 1000 }]);
          });
        });
      }
    }

    for (const inFlight of ['cancelled', 'authorised'] as const) {
      it(`assuming an authorization in flight is ${inFlight}: a cancel of a payment the provider authorised names it; cancelled under manual capture, refused once captured when the connector says so`, async () => {
        const { connector, sandbox, receiver, ledgerOf } = kit();
        if (!connector.capabilities.cancelByMerchantReference || connector.cancelByReference === undefined) return;
        const ran = await assuming(sandbox, inFlight, async () => {
          for (const captureMethod of ['manual', 'automatic'] as const) {
            if (captureMethod === 'automatic' && connector.capabilities.cancelRefusedOnceCaptured !== true) continue;
            const req = { ...authorizeRequest(connector, { captureMethod }), providerRef: null };
            const approved = await connector.authorize(req);
            expect(approved.kind).toBe('succeeded');
            const psp = 'providerRef' in approved ? approved.providerRef : undefined;
            expect(await connector.cancelByReference!({ attemptId: req.attemptId, idempotencyKey: keyFor(connector, req.paymentId, 'fence') })).toMatchObject({ kind: 'pending' });
            const kind = captureMethod === 'manual' ? 'fence_confirmed' : 'fence_refused';
            const e = await eventFor(connector, receiver, req.attemptId, kind);
            // The confirmation names the payment it cancelled: an approval of that payment is older than the fence.
            expect(e, kind).toMatchObject({ kind, providerRef: psp });
            expect(await ledgerOf(req.attemptId)).toMatchObject([{ cancelled: captureMethod === 'manual', captured: captureMethod === 'manual' ? 0 : 1000 }]);
          }
        });
        expect(ran || inFlight === 'authorised').toBe(true);
      });
    }
  });
}
