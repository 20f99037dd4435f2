// "Already done" is an answer, not a refusal (issue 41 §4). A void or capture whose answer was lost
// (the sandbox performed it, dropped the answer and stored none under the key: fault already_done)
// is resent with the same key; the provider refuses the resend because the payment already is where
// the operation would put it. The connector must call that unknown{already_done} — never not_sent
// or a decline — and what the provider shows afterwards (its lookup, or its own event of the send
// that did it) must say the operation happened, once.

import { describe, expect, it } from 'vitest';
import { newId } from '../core/ids.ts';
import type { CallOutcome } from '../core/outcome.ts';
import type { Connector, NormalizedEvent } from '../connectors/contract.ts';
import { useSandbox } from './context.ts';
import type { KitContext } from './context.ts';
import { authorizePayment, keyFor, settleModification } from './harness.ts';
import type { PaymentHandle } from './harness.ts';
import type { ConformanceSandbox, ConformanceSubject } from './subject.ts';

type Op = 'void' | 'capture';

function ref(p: PaymentHandle): string {
  expect(p.providerRef, 'authorization carries a provider reference').toBeTypeOf('string');
  return p.providerRef as string;
}

/** One send of the void or capture of `p`, always with the same key (n = 1), settled by webhook when the connector answers later. */
async function send(c: Connector, p: PaymentHandle, op: Op, captureId: string): Promise<CallOutcome> {
  const base = { paymentId: p.paymentId, attemptId: p.attemptId, providerRef: ref(p), amount: p.amount, currency: p.currency };
  const o = op === 'void'
    ? await c.void({ ...base, idempotencyKey: keyFor(c, p.paymentId, 'void') })
    : await c.capture({ ...base, captureId, final: true, alreadyCaptured: 0, idempotencyKey: keyFor(c, p.paymentId, 'capture') });
  return settleModification(c, o, { op, paymentRef: ref(p), amount: p.amount, currency: p.currency });
}

/**
 * The operation under the already_done fault, then resent with the same key as the core does after
 * an unknown answer: the answer to the resend, as the connector (and its webhook) says it.
 */
export async function alreadyDoneAfterUnknown<S extends ConformanceSandbox>(ctx: KitContext<S>, op: Op): Promise<{ readonly p: PaymentHandle; readonly first: CallOutcome; readonly resend: CallOutcome; readonly captureId: string }> {
  const { connector, sandbox } = ctx;
  const p = await authorizePayment(connector, { amount: 1000 });
  expect(p.outcome.kind).toBe('succeeded');
  const captureId = newId('capture');
  await sandbox.scheduleFault({ op, mode: 'already_done', count: 1 });
  const first = await send(connector, p, op, captureId);
  // An SDK that resends a dropped request by itself (stripe-node) meets the refusal already.
  const resend = first.kind === 'unknown' && first.reason === 'already_done' ? first : await send(connector, p, op, captureId);
  return { p, first, resend, captureId };
}

/** The success event of the send that did it, as the provider notifies it (providers whose modifications answer later). */
async function ownSuccessEvent<S extends ConformanceSandbox>(ctx: KitContext<S>, p: PaymentHandle, op: Op): Promise<NormalizedEvent | undefined> {
  const wanted = op === 'void' ? 'void_succeeded' : 'capture_succeeded';
  const until = Date.now() + 5_000;
  for (;;) {
    for (const d of ctx.receiver.received) {
      if (!d.rawBody.includes(ref(p))) continue;
      const v = ctx.connector.verifyWebhook(d.rawBody, d.headers, new Date());
      const e = v.ok ? v.events.find((x) => x.kind === wanted && x.providerRef === ref(p)) : undefined;
      if (e !== undefined) return e;
    }
    if (Date.now() > until) return undefined;
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function registerAlreadyDoneCases<S extends ConformanceSandbox>(subject: ConformanceSubject<S>): void {
  describe('already done is an answer', () => {
    const kit = useSandbox(subject);

    for (const [op, title] of [['void', 'answered already-canceled after an unknown void'], ['capture', 'already-captured after an unknown capture']] as const) {
      it(`${title}: unknown{already_done}, and the provider shows it done once`, async () => {
        const ctx = kit();
        const { connector } = ctx;
        const { p, first, resend, captureId } = await alreadyDoneAfterUnknown(ctx, op);
        expect(['unknown'], JSON.stringify(first)).toContain(first.kind);
        expect(resend, JSON.stringify(resend)).toMatchObject({ kind: 'unknown', reason: 'already_done' });
        // The same key again is refused the same way: a resend can never settle it.
        if (!connector.capabilities.asyncModifications) expect(await send(connector, p, op, captureId)).toMatchObject({ kind: 'unknown', reason: 'already_done' });
        const ledger = await ctx.ledgerOf(p.attemptId);
        expect(ledger).toHaveLength(1);
        expect(ledger[0], JSON.stringify(ledger)).toMatchObject(op === 'void' ? { cancelled: true, captured: 0 } : { captured: 1000 });
        if (connector.lookupOperation !== undefined) {
          const found = await connector.lookupOperation({
            kind: op === 'void' ? 'cancel' : 'capture', paymentId: p.paymentId, attemptId: p.attemptId, providerRef: ref(p), amount: 1000, currency: p.currency,
            ...(op === 'capture' ? { captureId, alreadyCaptured: 0 } : {}),
          });
          expect(found, JSON.stringify(found)).toMatchObject({ kind: 'succeeded', amount: 1000 });
        } else {
          // No lookup at this provider: its notification of the send that did it settles the operation.
          expect(await ownSuccessEvent(ctx, p, op), `the ${op} that was performed is notified`).toBeDefined();
        }
      });
    }

    it('a lookup of a void that never happened is not "done"', async () => {
      const { connector } = kit();
      if (connector.lookupOperation === undefined) return;
      const p = await authorizePayment(connector, { amount: 1000 });
      const found = await connector.lookupOperation({ kind: 'cancel', paymentId: p.paymentId, attemptId: p.attemptId, providerRef: ref(p), amount: 1000, currency: p.currency });
      expect(found.kind, JSON.stringify(found)).toBe('unknown');
    });
  });
}
