// Double-entry posting rules, pure. Every posting balances per currency by construction; the
// database refuses one that does not (deferred constraint trigger) as a second line of defence.

import type { LedgerEffect } from './effects.ts';

export type LedgerDirection = 'debit' | 'credit';

export interface LedgerLine {
  readonly account: string;
  readonly direction: LedgerDirection;
  readonly amount: number;
  readonly currency: string;
}

export interface Posting {
  readonly kind: LedgerEffect['posting'] | 'dispute_opened' | 'dispute_won' | 'settlement';
  readonly lines: readonly LedgerLine[];
}

/** Accounts are per merchant or connector account, and per currency (the currency is on each line). */
export const ledgerAccounts = {
  merchantPayable: (merchantId: string) => `merchant:${merchantId}:payable`,
  connectorReceivable: (connector: string) => `connector:${connector}:receivable`,
  disputes: (merchantId: string) => `merchant:${merchantId}:disputes`,
  fees: (connector: string) => `connector:${connector}:fees`,
  settlement: (connector: string) => `connector:${connector}:settlement`,
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
  }
}

/** Sum of debits minus credits per currency; zero for every currency when the lines balance. */
export function imbalance(lines: readonly LedgerLine[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of lines) out[l.currency] = (out[l.currency] ?? 0) + (l.direction === 'debit' ? l.amount : -l.amount);
  return out;
}
