// Adyen's dispute lifecycle (Webhooks v1 dispute event codes, docs.adyen.com dispute webhooks):
// every event of one dispute carries the dispute's pspReference, `originalReference` names the
// disputed payment. Each code says where the funds are after it; the table below (also in
// docs/reconciliation.md) is the whole machine. `additionalData.disputeStatus` refines whether the
// step is final where Adyen sends it; without it (payments processed in Brazil) the code decides.
//
// Events are applied by position, not by delta: CHARGEBACK says "withdrawn", CHARGEBACK_REVERSED
// "reinstated". The stage orders the codes, so a CHARGEBACK delivered after its CHARGEBACK_REVERSED
// is stale and moves nothing, and a SECOND_CHARGEBACK after a reversal withdraws again.

import type { DisputeOutcome, DisputeRecordState, DisputeStep } from '../../core/disputes.ts';

/** withdrawn / reinstated: the provider's funds position after the event; none: the event moves nothing. */
export type AdyenDisputeFunds = 'withdrawn' | 'reinstated' | 'none';

export interface AdyenDisputeRow {
  readonly funds: AdyenDisputeFunds;
  /**
   * The outcome when the event is final: `lost_if_withdrawn` ends the dispute lost only when the
   * funds are withdrawn (a defense period ending before any chargeback waits for it);
   * `won_or_closed` ends it won if it ever reached a chargeback, closed if it never did.
   */
  readonly final: DisputeOutcome | 'lost_if_withdrawn' | 'won_or_closed' | null;
  /** Rank in the lifecycle; null for informational events that never make an event stale. */
  readonly stage: number | null;
}

export const ADYEN_DISPUTE_LIFECYCLE: Readonly<Record<string, AdyenDisputeRow>> = {
  NOTIFICATION_OF_FRAUD: { funds: 'none', final: null, stage: 0 },
  REQUEST_FOR_INFORMATION: { funds: 'none', final: null, stage: 0 },
  NOTIFICATION_OF_CHARGEBACK: { funds: 'none', final: null, stage: 1 },
  DISPUTE_OPENED_WITH_CHARGEBACK: { funds: 'none', final: null, stage: 1 },
  CHARGEBACK: { funds: 'withdrawn', final: null, stage: 2 },
  CHARGEBACK_REVERSED: { funds: 'reinstated', final: null, stage: 3 },
  SECOND_CHARGEBACK: { funds: 'withdrawn', final: 'lost', stage: 4 },
  PREARBITRATION_WON: { funds: 'reinstated', final: 'won', stage: 5 },
  PREARBITRATION_LOST: { funds: 'withdrawn', final: 'lost', stage: 5 },
  ISSUER_RESPONSE_TIMEFRAME_EXPIRED: { funds: 'reinstated', final: 'won_or_closed', stage: 6 },
  DISPUTE_DEFENSE_PERIOD_ENDED: { funds: 'none', final: 'lost_if_withdrawn', stage: null },
  INFORMATION_SUPPLIED: { funds: 'none', final: null, stage: null },
  ISSUER_COMMENTS: { funds: 'none', final: null, stage: null },
};

export const isAdyenDisputeCode = (code: string): boolean => Object.hasOwn(ADYEN_DISPUTE_LIFECYCLE, code);

/** The documented disputeStatus values. */
export const ADYEN_DISPUTE_STATUSES = ['Unresponded', 'Responded', 'Expired', 'Undefended', 'Accepted', 'Pending', 'Lost', 'Won'] as const;

/**
 * One Adyen dispute event against the dispute as recorded (null: first heard of). `amount` is the
 * event's amount in minor units and its currency (0 when it carries none: the recorded amount is used).
 */
export function adyenDisputeStep(current: DisputeRecordState | null, eventCode: string, disputeStatus: string | null, amount: number, currency: string): DisputeStep {
  const row = ADYEN_DISPUTE_LIFECYCLE[eventCode];
  if (row === undefined) return { kind: 'stale', reason: `${eventCode} is not a dispute event` };
  const providerStatus = disputeStatus === null ? eventCode : `${eventCode}/${disputeStatus}`;
  if (current !== null && row.stage !== null && row.stage < current.stage) {
    return { kind: 'stale', reason: `${providerStatus} comes before the stage already applied (${current.stage}); nothing moves` };
  }
  const withdrawnNow = current?.withdrawn ?? 0;
  const disputed = amount > 0 ? amount : (current?.amount ?? 0);
  let funds = row.funds;
  let outcome: DisputeOutcome | null = null;
  // disputeStatus, where Adyen sends it, says more than the code: Lost keeps the funds withdrawn and
  // ends the dispute; Won ends it with the funds back — except after CHARGEBACK_REVERSED, which Adyen
  // documents as not final (a second chargeback may follow); Pending keeps a second chargeback open.
  if (disputeStatus === 'Lost') funds = 'withdrawn';
  if (disputeStatus === 'Won' && eventCode !== 'CHARGEBACK_REVERSED') funds = 'reinstated';
  const target = funds === 'withdrawn' ? disputed : funds === 'reinstated' ? 0 : withdrawnNow;
  // Every code from CHARGEBACK on implies a chargeback happened (a reversal delivered before it too).
  const impliesChargeback = row.stage !== null && row.stage >= 2 && eventCode !== 'ISSUER_RESPONSE_TIMEFRAME_EXPIRED';
  const reachedChargeback = withdrawnNow > 0 || (current?.stage ?? -1) >= 2 || target > 0 || impliesChargeback;
  // The defense period ended (the merchant did not or will not defend): lost as soon as the funds are
  // gone, whichever of DISPUTE_DEFENSE_PERIOD_ENDED and CHARGEBACK is delivered first.
  const defenseEnded = eventCode === 'DISPUTE_DEFENSE_PERIOD_ENDED' || current?.defenseEnded === true;
  const final = disputeStatus === 'Lost' ? 'lost' : disputeStatus === 'Won' && eventCode !== 'CHARGEBACK_REVERSED' ? 'won' : disputeStatus === 'Pending' && eventCode === 'SECOND_CHARGEBACK' ? null : row.final;
  if (final === 'lost_if_withdrawn') outcome = target > 0 ? 'lost' : null;
  else if (final === 'won_or_closed') outcome = reachedChargeback ? 'won' : 'closed';
  else outcome = final;
  if (outcome === null && defenseEnded && target > 0 && funds !== 'reinstated') outcome = 'lost';
  // Accepted / Expired: the merchant will not (or can no longer) defend; lost once the funds are gone.
  if (outcome === null && (disputeStatus === 'Accepted' || disputeStatus === 'Expired') && target > 0) outcome = 'lost';
  const delta = target - withdrawnNow;
  return {
    kind: 'step',
    stage: row.stage ?? current?.stage ?? 0,
    moves: delta === 0 ? [] : [{ key: eventCode, delta, fee: 0, currency: current?.currency ?? currency }],
    reinstated: funds === 'reinstated' && reachedChargeback,
    outcome,
    defenseEnded,
    providerStatus,
  };
}
