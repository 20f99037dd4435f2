// Double-entry posting rules, pure. Every posting balances per currency by construction; the
// database refuses one that does not (deferred constraint trigger) as a second line of defence.

import type { LedgerEffect } from './effects.ts';
import { heldPosting } from './ledger-held.ts';

export type LedgerDirection = 'debit' | 'credit';

export interface LedgerLine {
  readonly account: string;
  readonly direction: LedgerDirection;
  readonly amount: number;
  readonly currency: string;
}

/** Dispute postings (src/core/disputes.ts): funds withdrawn / reinstated at the provider, the loss written off, the provider's fee. */
export type DisputePostingKind = 'dispute_withdrawn' | 'dispute_reinstated' | 'dispute_lost' | 'dispute_fee';

export interface Posting {
  readonly kind: LedgerEffect['posting'] | DisputePostingKind | 'settlement';
  readonly lines: readonly LedgerLine[];
}

/** Accounts are per merchant or connector account, and per currency (the currency is on each line). */
export const ledgerAccounts = {
  merchantPayable: (merchantId: string) => `merchant:${merchantId}:payable`,
  connectorReceivable: (connector: string) => `connector:${connector}:receivable`,
  disputes: (merchantId: string) => `merchant:${merchantId}:disputes`,
  fees: (connector: string) => `connector:${connector}:fees`,
  settlement: (connector: string) => `connector:${connector}:settlement`,
  heldForRelease: (connector: string) => `connector:${connector}:held_for_release`,
};

function pair(debit: string, credit: string, amount: number, currency: string): LedgerLine[] {
  return [
    { account: debit, direction: 'debit', amount, currency },
    { account: credit, direction: 'credit', amount, currency },
  ];
}

/** A confirmed capture: the connector owes us, we owe the merchant. Refunds and reversals undo it. */
export function postingFor(effect: LedgerEffect, merchantId: string): Posting {
  const receivable = ledgerAccounts.connectorReceivable(effect.connector);
  const payable = ledgerAccounts.merchantPayable(merchantId);
  switch (effect.posting) {
    case 'capture':
    case 'refund_reversed':
      return { kind: effect.posting, lines: pair(receivable, payable, effect.amount, effect.currency) };
    case 'refund':
    case 'capture_reversed':
      return { kind: effect.posting, lines: pair(payable, receivable, effect.amount, effect.currency) };
    case 'held_for_release':
    case 'release_refunded':
      return heldPosting(effect.posting, effect.connector, effect.amount, effect.currency);
  }
}

/** One row of a provider's settlement report, in minor units of its currency. */
export interface SettlementAmounts {
  readonly connector: string;
  readonly currency: string;
  /** Signed: positive when the provider credits us (a settled capture), negative for a debit (refund, chargeback). */
  readonly gross: number;
  /** The provider's commission on the row, >= 0; what reaches the bank is gross - fee. */
  readonly fee: number;
}

/**
 * Settlement moves what the connector owes us (receivable, by the gross) to the bank (settlement
 * account, by the net) and books the provider's commission as fees. A debit row (refund,
 * chargeback) runs the other way. null when the row moves nothing.
 */
export function settlementPosting(s: SettlementAmounts): Posting | null {
  if (!Number.isSafeInteger(s.gross) || !Number.isSafeInteger(s.fee) || s.fee < 0) throw new RangeError(`settlement amounts must be integers, fee >= 0 (gross ${s.gross}, fee ${s.fee})`);
  const receivable = ledgerAccounts.connectorReceivable(s.connector);
  const bank = ledgerAccounts.settlement(s.connector);
  const fees = ledgerAccounts.fees(s.connector);
  const net = s.gross - s.fee;
  const line = (account: string, signedDebit: number): LedgerLine[] =>
    signedDebit === 0 ? [] : [{ account, direction: signedDebit > 0 ? 'debit' : 'credit', amount: Math.abs(signedDebit), currency: s.currency }];
  const lines = [...line(receivable, -s.gross), ...line(fees, s.fee), ...line(bank, net)];
  return lines.length === 0 ? null : { kind: 'settlement', lines };
}

/** Sum of debits minus credits per currency; zero for every currency when the lines balance. */
export function imbalance(lines: readonly LedgerLine[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of lines) out[l.currency] = (out[l.currency] ?? 0) + (l.direction === 'debit' ? l.amount : -l.amount);
  return out;
}
