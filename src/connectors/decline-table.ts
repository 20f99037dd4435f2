// Decline policy as data: each connector ships defaults keyed by its own decline codes, and the
// account config overrides them code by code. The router and failover read only the merged table.

import type { Declined } from '../core/outcome.ts';
import type { DeclineRule, DeclineTable } from './contract.ts';

/**
 * A code nobody listed: soft (the card may work later) and not retried elsewhere, because failing
 * over on an unexplained decline sends the same card to a second issuer decision for nothing.
 */
export const UNLISTED_DECLINE_RULE: DeclineRule = Object.freeze({ class: 'soft', retryElsewhere: false });

/** The config's rows win over the connector's defaults; the result is frozen. */
export function mergeDeclineTable(defaults: DeclineTable, overrides: DeclineTable | undefined): DeclineTable {
  const merged: Record<string, DeclineRule> = {};
  for (const [code, rule] of Object.entries(defaults)) merged[code] = Object.freeze({ ...rule });
  for (const [code, rule] of Object.entries(overrides ?? {})) merged[code] = Object.freeze({ ...rule });
  return Object.freeze(merged);
}

export function declineRuleFor(table: DeclineTable, code: string): DeclineRule {
  return Object.hasOwn(table, code) ? (table[code] ?? UNLISTED_DECLINE_RULE) : UNLISTED_DECLINE_RULE;
}

export interface DeclineFacts {
  /** Our normalized code, also the table key (e.g. insufficient_funds). */
  readonly code: string;
  /** The provider's own code as sent (e.g. Stripe `card_declined`). */
  readonly providerCode: string;
  readonly providerRef?: string;
  readonly providerStatus?: string;
  readonly message?: string;
}

/** Builds a Declined outcome whose class and retryElsewhere come from the table, never from the call site. */
export function declinedOutcome(table: DeclineTable, facts: DeclineFacts): Declined {
  const rule = declineRuleFor(table, facts.code);
  return {
    kind: 'declined',
    class: rule.class,
    retryElsewhere: rule.retryElsewhere,
    code: facts.code,
    providerCode: facts.providerCode,
    ...(facts.providerRef !== undefined ? { providerRef: facts.providerRef } : {}),
    ...(facts.providerStatus !== undefined ? { providerStatus: facts.providerStatus } : {}),
    ...(facts.message !== undefined ? { message: facts.message } : {}),
  };
}
