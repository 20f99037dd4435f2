// Vaulted cards (issue 44), for connectors that declare acceptsCardData: the payment cases with the
// card itself in the call (PaymentMethodInput.card) instead of a test_card translation. The numbers
// are the gateway's test cards, which every sandbox honours as raw card data too (docs/sandbox.md).

import { describe, expect, it } from 'vitest';
import type { CallOutcome } from '../core/outcome.ts';
import type { ConnectorCard } from '../connectors/contract.ts';
import { declineRuleFor } from '../connectors/decline-table.ts';
import { testCardNumber } from '../connectors/test-cards.ts';
import type { TestCardScenario } from '../connectors/test-cards.ts';
import { capture, refund } from './cases-payments.ts';
import { useSandbox } from './context.ts';
import { authorizePayment } from './harness.ts';
import type { ConformanceSandbox, ConformanceSubject } from './subject.ts';

/** A card both sandboxes approve (a documented test card at Stripe and at Adyen). */
export const APPROVED_AT_EVERY_SANDBOX = '5555555555554444';

function vaulted(number: string, o: Partial<ConnectorCard> = {}): { card: ConnectorCard } {
  return { card: { paymentMethodId: 'pmd_conformance', number, expMonth: 3, expYear: new Date().getUTCFullYear() + 2, cvc: '737', holderName: 'Conformance Kit', ...o } };
}

const DECLINES: readonly TestCardScenario[] = ['stolen_card', 'expired_card', 'insufficient_funds', 'generic_decline', 'processing_error'];

export function registerCardCases<S extends ConformanceSandbox>(subject: ConformanceSubject<S>): void {
  describe('vaulted cards (raw card data in the authorization)', () => {
    const kit = useSandbox(subject);

    it('the connector declares it takes card data', () => {
      const { connector } = kit();
      expect(connector.capabilities.acceptsCardData).toBe(true);
    });

    it('authorizes, captures and refunds an approved card; and authorizes it without its code', async () => {
      const { connector, ledgerOf } = kit();
      const p = await authorizePayment(connector, { paymentMethod: vaulted(APPROVED_AT_EVERY_SANDBOX), amount: 1200 });
      expect(p.outcome, JSON.stringify(p.outcome)).toMatchObject({ kind: 'succeeded', amount: 1200 });
      expect(await capture(connector, p, 1200)).toMatchObject({ kind: 'succeeded' });
      expect(await refund(connector, p, 1200)).toMatchObject({ kind: 'succeeded' });
      expect(await ledgerOf(p.attemptId)).toMatchObject([{ authorized: 1200, captured: 1200, refunded: 1200 }]);
      const noCode = await authorizePayment(connector, { paymentMethod: vaulted(APPROVED_AT_EVERY_SANDBOX, { cvc: null, holderName: null }) });
      expect(noCode.outcome, JSON.stringify(noCode.outcome)).toMatchObject({ kind: 'succeeded' });
    });

    for (const scenario of DECLINES) {
      it(`declines the ${scenario} card as its decline table says`, async () => {
        const { connector, ledgerOf } = kit();
        const p = await authorizePayment(connector, { paymentMethod: vaulted(testCardNumber(scenario)) });
        expect(p.outcome, JSON.stringify(p.outcome)).toMatchObject({ kind: 'declined' });
        const o = p.outcome as Extract<CallOutcome, { kind: 'declined' }>;
        expect({ class: o.class, retryElsewhere: o.retryElsewhere }).toEqual(declineRuleFor(connector.declineTable, o.code));
        expect((await ledgerOf(p.attemptId)).every((e) => e.authorized === 0)).toBe(true);
      });
    }

    it('an invalid card number never authorizes and is never unknown', async () => {
      const { connector, ledgerOf } = kit();
      const p = await authorizePayment(connector, { paymentMethod: vaulted('4242424242424241') });
      expect(['declined', 'not_sent'], JSON.stringify(p.outcome)).toContain(p.outcome.kind);
      expect((await ledgerOf(p.attemptId)).every((e) => e.authorized === 0)).toBe(true);
    });

    it('a same-key resend with the same card replays the first answer: one authorization', async () => {
      const { connector, ledgerOf } = kit();
      const p = await authorizePayment(connector, { paymentMethod: vaulted(APPROVED_AT_EVERY_SANDBOX) });
      const again = await authorizePayment(connector, { paymentMethod: vaulted(APPROVED_AT_EVERY_SANDBOX), paymentId: p.paymentId, attemptId: p.attemptId, authKey: p.authKey });
      expect(again.outcome).toEqual(p.outcome);
      expect(await ledgerOf(p.attemptId)).toHaveLength(1);
    });

    it('an account without raw card data refuses the card before processing: not sent, nothing authorized', async () => {
      const { connector, sandbox, ledgerOf } = kit();
      await sandbox.configureRawCardData(false);
      try {
        const p = await authorizePayment(connector, { paymentMethod: vaulted(APPROVED_AT_EVERY_SANDBOX) });
        expect(p.outcome, JSON.stringify(p.outcome)).toMatchObject({ kind: 'not_sent' });
        expect(await ledgerOf(p.attemptId)).toEqual([]);
      } finally {
        await sandbox.configureRawCardData(true);
      }
    });
  });
}
