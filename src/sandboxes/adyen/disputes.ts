// Disputes as Adyen runs them, driven from test code: one dispute per pspReference of its own,
// every event of it carrying that pspReference with `originalReference` = the disputed payment,
// `additionalData.disputeStatus` (omitted when asked: Adyen omits it for payments processed in
// Brazil), and the funds moved by the codes that move them — booked as report rows (Chargeback,
// ChargebackReversed, SecondChargeback) when they move, never otherwise. A step the lifecycle does
// not allow (a reversal of funds never withdrawn, anything after a final step) is refused.

import type { AdyenOperationContext } from './context.ts';
import { eventDate } from './notifications.ts';
import type { AdyenDisputeRecord, PaymentRecord } from './state.ts';

export interface AdyenDisputeStepSpec {
  readonly eventCode: string;
  /** The disputeStatus to send; null omits it (Brazil); undefined sends what Adyen sends for the code. */
  readonly disputeStatus?: string | null;
}

type Funds = 'withdraw' | 'reinstate' | 'keep';

/** How long the merchant has to defend, in the sandbox (schemes set it per reason; 21 days is a common span). */
export const DEFENSE_PERIOD_MS = 21 * 86_400_000;

/** What each code does to the funds at Adyen, whether it ends the dispute, and the disputeStatus it usually carries. */
const CODES: Readonly<Record<string, { funds: Funds; final: boolean; status: string | null }>> = {
  NOTIFICATION_OF_FRAUD: { funds: 'keep', final: false, status: null },
  REQUEST_FOR_INFORMATION: { funds: 'keep', final: false, status: 'Unresponded' },
  NOTIFICATION_OF_CHARGEBACK: { funds: 'keep', final: false, status: 'Unresponded' },
  DISPUTE_OPENED_WITH_CHARGEBACK: { funds: 'keep', final: false, status: 'Undefended' },
  INFORMATION_SUPPLIED: { funds: 'keep', final: false, status: 'Responded' },
  ISSUER_COMMENTS: { funds: 'keep', final: false, status: 'Pending' },
  CHARGEBACK: { funds: 'withdraw', final: false, status: 'Undefended' },
  CHARGEBACK_REVERSED: { funds: 'reinstate', final: false, status: 'Pending' },
  SECOND_CHARGEBACK: { funds: 'withdraw', final: true, status: 'Lost' },
  PREARBITRATION_WON: { funds: 'reinstate', final: true, status: 'Won' },
  PREARBITRATION_LOST: { funds: 'withdraw', final: true, status: 'Lost' },
  ISSUER_RESPONSE_TIMEFRAME_EXPIRED: { funds: 'reinstate', final: true, status: 'Won' },
  DISPUTE_DEFENSE_PERIOD_ENDED: { funds: 'keep', final: false, status: 'Expired' },
};

function findDispute(p: PaymentRecord, psp: string): AdyenDisputeRecord {
  const d = (p.disputes ?? []).find((x) => x.pspReference === psp);
  if (d === undefined) throw new Error(`payment ${p.pspReference} has no dispute ${psp}`);
  return d;
}

/**
 * Runs the steps on the payment's dispute `disputePsp` (a new dispute when null) and queues one
 * notification per step, in order. Returns the dispute's pspReference.
 */
export function runDisputeSteps(ctx: AdyenOperationContext, paymentPsp: string, disputePsp: string | null, steps: readonly AdyenDisputeStepSpec[], amount?: number): string {
  const p = ctx.state.payments.get(paymentPsp);
  if (p === undefined) throw new Error(`no payment ${paymentPsp}`);
  let d: AdyenDisputeRecord;
  if (disputePsp === null) {
    const value = amount ?? p.captured;
    if (!Number.isInteger(value) || value < 1 || value > p.captured) throw new Error(`a dispute amount must be an integer between 1 and ${p.captured} (captured)`);
    d = { pspReference: ctx.newPspReference(), amount: value, withdrawn: false, reversedOnce: false, final: false, codes: [], openedMs: ctx.nowMs };
    p.disputes = [...(p.disputes ?? []), d];
  } else {
    d = findDispute(p, disputePsp);
  }
  for (const [i, step] of steps.entries()) {
    const code = CODES[step.eventCode];
    if (code === undefined) throw new Error(`${step.eventCode} is not a dispute event code`);
    if (d.final) throw new Error(`dispute ${d.pspReference} is closed; ${step.eventCode} cannot follow ${d.codes.at(-1) ?? ''}`);
    let funds = code.funds;
    // ISSUER_RESPONSE_TIMEFRAME_EXPIRED ends an RFI (nothing was withdrawn) as well as a defended chargeback.
    if (funds === 'reinstate' && !d.withdrawn && step.eventCode === 'ISSUER_RESPONSE_TIMEFRAME_EXPIRED') funds = 'keep';
    // PREARBITRATION_LOST after a second chargeback: the funds are already gone.
    if (funds === 'withdraw' && d.withdrawn && step.eventCode === 'PREARBITRATION_LOST') funds = 'keep';
    if (funds === 'withdraw' && d.withdrawn) throw new Error(`dispute ${d.pspReference}: ${step.eventCode} while the funds are already withdrawn`);
    if (funds === 'reinstate' && !d.withdrawn) throw new Error(`dispute ${d.pspReference}: ${step.eventCode} but no funds are withdrawn`);
    if (funds === 'withdraw') {
      ctx.state.book({ bookedMs: ctx.nowMs + i, type: d.reversedOnce ? 'SecondChargeback' : 'Chargeback', payment: p, modificationReference: d.pspReference, amount: d.amount });
      d.withdrawn = true;
    } else if (funds === 'reinstate') {
      ctx.state.book({ bookedMs: ctx.nowMs + i, type: 'ChargebackReversed', payment: p, modificationReference: d.pspReference, amount: d.amount });
      d.withdrawn = false;
      d.reversedOnce = true;
    }
    // The issuer's timeframe ending closes an RFI (Expired) as well as a defended chargeback (Won).
    const usual = step.eventCode === 'ISSUER_RESPONSE_TIMEFRAME_EXPIRED' && !d.reversedOnce ? 'Expired' : code.status;
    const status = step.disputeStatus === undefined ? usual : step.disputeStatus;
    // A second chargeback sent as Pending leaves room for pre-arbitration; a defense period ending with funds gone ends it.
    d.final = (code.final && !(step.eventCode === 'SECOND_CHARGEBACK' && status === 'Pending')) || (step.eventCode === 'DISPUTE_DEFENSE_PERIOD_ENDED' && d.withdrawn);
    d.codes.push(step.eventCode);
    ctx.notify({
      // defensePeriodEndsAt: when the merchant's time to defend ends (21 days after opening here).
      ...(status === null ? {} : { additionalData: { disputeStatus: status, chargebackReasonCode: '10.4', chargebackSchemeCode: 'visa', ...(d.openedMs !== undefined && { defensePeriodEndsAt: eventDate(d.openedMs + DEFENSE_PERIOD_MS) }) } }),
      amount: { value: d.amount, currency: p.amount.currency },
      eventCode: step.eventCode,
      // A millisecond apart: the order Adyen generated them in, whatever order they are delivered in.
      eventDate: eventDate(ctx.nowMs + i),
      merchantAccountCode: p.merchantAccount,
      merchantReference: p.merchantReference,
      originalReference: p.pspReference,
      paymentMethod: p.paymentMethod,
      pspReference: d.pspReference,
      reason: 'Other Fraud-Card Absent Environment',
      success: 'true',
    });
  }
  return d.pspReference;
}
