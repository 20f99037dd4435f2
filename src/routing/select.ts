// select(): the pure routing interpreter. Rules are data; the result names the rule, the
// candidates in order and every skipped candidate with its reason, so each decision can be explained.

import { createHash } from 'node:crypto';
import { connectorAcceptsCardData, connectorAmountProblem } from '../connectors/registry.ts';
import type { StoredKeyMode } from '../core/api-keys.ts';
import type { RouteRule, RouteStrategy } from './config-schema.ts';
import type { RoutingSnapshot } from './snapshot.ts';

export interface RouteFacts {
  readonly paymentId: string;
  readonly amount: number;
  readonly currency: string;
  readonly merchantId: string;
  readonly country?: string | undefined;
  readonly brand?: string | undefined;
  readonly metadata?: Readonly<Record<string, string>> | undefined;
  /** Payment-method tokens by connector account (only which accounts have one matters here). */
  readonly tokens?: Readonly<Record<string, unknown>> | undefined;
  /** Sandbox only: a documented test card number. */
  readonly testCard?: string | undefined;
  /** A vaulted card (pmd_…): any connector that takes card data may charge it, sandbox or live. */
  readonly vaultedCard?: boolean | undefined;
  /** The mode of the key that asks: a test key reaches only test accounts, a live key only live ones; `any` (a legacy key, or absent) every account. */
  readonly keyMode?: StoredKeyMode | undefined;
}

export interface RouteSkip {
  readonly connector: string;
  readonly reason: string;
}

export interface RouteDecision {
  readonly snapshot: string;
  readonly rule: string;
  readonly candidates: readonly string[];
  readonly skipped: readonly RouteSkip[];
}

/** Why a connector of this type cannot take the amount in its provider's exponents, or null. */
export type AmountCheck = (connectorType: string, amount: number, currency: string) => string | null;

/**
 * Why no attempt can start. All but no_candidate are the request's fault and name the field
 * (`field`, the API's dotted path): the API refuses them with nothing written. no_candidate is a
 * routing outcome (breakers, rules, tokens for other accounts): the payment is recorded failed.
 */
export type SelectRefusalCode = 'test_card_not_allowed' | 'tokens_name_no_account' | 'amount_not_accepted' | 'no_candidate';

export type SelectResult =
  | { readonly ok: true; readonly decision: RouteDecision }
  | { readonly ok: false; readonly code: SelectRefusalCode; readonly message: string; readonly field: string | null; readonly decision: RouteDecision };

export function ruleMatches(rule: RouteRule, f: RouteFacts): boolean {
  const w = rule.when;
  if (w.currency !== undefined && !(w.currency as readonly string[]).includes(f.currency)) return false;
  if (w.amount !== undefined) {
    const a = w.amount;
    if (a.gte !== undefined && !(f.amount >= a.gte)) return false;
    if (a.gt !== undefined && !(f.amount > a.gt)) return false;
    if (a.lte !== undefined && !(f.amount <= a.lte)) return false;
    if (a.lt !== undefined && !(f.amount < a.lt)) return false;
  }
  if (w.country !== undefined && (f.country === undefined || !w.country.includes(f.country))) return false;
  if (w.brand !== undefined && (f.brand === undefined || !w.brand.includes(f.brand.toLowerCase()))) return false;
  if (w.merchant !== undefined && !w.merchant.includes(f.merchantId)) return false;
  if (w.metadata !== undefined) {
    for (const [k, v] of Object.entries(w.metadata)) if (f.metadata?.[k] !== v) return false;
  }
  return true;
}

/** A number in [0, 1) fixed by the payment id and rule, so a replay routes the same way. */
export function stableFraction(paymentId: string, ruleName: string): number {
  const h = createHash('sha256').update(`${paymentId}\u0000${ruleName}`).digest();
  return h.readUInt32BE(0) / 0x1_0000_0000;
}

export function orderCandidates(strategy: RouteStrategy, paymentId: string, ruleName: string): string[] {
  if (strategy.priority !== undefined) return [...strategy.priority];
  const weights = Object.entries(strategy.weighted ?? {});
  const total = weights.reduce((s, [, w]) => s + w, 0);
  let point = stableFraction(paymentId, ruleName) * total;
  let chosen = weights[weights.length - 1]?.[0];
  for (const [name, w] of weights) {
    if (point < w) {
      chosen = name;
      break;
    }
    point -= w;
  }
  // The chosen one first; the others follow as failover, heaviest first.
  const rest = weights.filter(([n]) => n !== chosen).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([n]) => n);
  return chosen === undefined ? rest : [chosen, ...rest];
}

/**
 * A candidate whose provider cannot take the amount (its exponent for the currency leaves a
 * remainder, it has no such currency, or the amount is above the provider's maximum) is skipped
 * with that reason, so the payment goes to the next one; when every candidate that could take the
 * payment method was skipped for the amount it is amount_not_accepted (a 400 on `amount` at the
 * API). The connector refuses the same amount before sending (not_sent), should it get one.
 */
export function select(snapshot: RoutingSnapshot, facts: RouteFacts, amountCheck: AmountCheck = connectorAmountProblem, cardDataCheck: (type: string) => boolean = connectorAcceptsCardData): SelectResult {
  const rule = snapshot.rules.find((r) => ruleMatches(r, facts));
  const ruleName = rule?.name ?? 'default';
  const ordered = orderCandidates(rule ?? snapshot.default, facts.paymentId, ruleName);
  const candidates: string[] = [];
  const skipped: RouteSkip[] = [];
  // Connectors that could take the payment method but not the amount.
  const refusedAmount: string[] = [];
  for (const name of ordered) {
    const c = snapshot.connectors[name];
    if (c === undefined) {
      skipped.push({ connector: name, reason: 'connector account not configured' });
      continue;
    }
    if (!reaches(facts.keyMode, c.mode)) {
      skipped.push({ connector: name, reason: `a ${c.mode} account: a ${facts.keyMode} key reaches only ${facts.keyMode} accounts` });
      continue;
    }
    if (facts.vaultedCard === true) {
      if (!cardDataCheck(c.type)) {
        skipped.push({ connector: name, reason: 'does not take card data (a vaulted card)' });
        continue;
      }
    } else if (facts.tokens?.[name] === undefined && !(facts.testCard !== undefined && c.sandbox)) {
      skipped.push({ connector: name, reason: facts.testCard !== undefined ? 'test_card given but this connector is live' : 'no payment method token for this connector' });
      continue;
    }
    const amountProblem = amountCheck(c.type, facts.amount, facts.currency);
    if (amountProblem !== null) {
      skipped.push({ connector: name, reason: `cannot take this amount: ${amountProblem}` });
      refusedAmount.push(`${name}: ${amountProblem}`);
      continue;
    }
    candidates.push(name);
  }
  const decision: RouteDecision = { snapshot: snapshot.version, rule: ruleName, candidates, skipped };
  const refuse = (code: SelectRefusalCode, message: string, field: string | null): SelectResult => ({ ok: false, code, message, field, decision });
  // Test cards are for test keys and sandboxes: a live key never takes one, and every account the
  // key could reach by the rule must be a sandbox (accounts of the other mode are out of its reach).
  if (facts.testCard !== undefined && facts.keyMode === 'live') {
    return refuse('test_card_not_allowed', 'test_card is accepted only with a test key (sk_sy_test_…): this is a live key', 'payment_method.test_card');
  }
  if (facts.testCard !== undefined && ordered.some((n) => { const c = snapshot.connectors[n]; return c !== undefined && reaches(facts.keyMode, c.mode) && !c.sandbox; })) {
    return refuse('test_card_not_allowed', 'test_card is accepted only when every candidate connector is a sandbox', 'payment_method.test_card');
  }
  const unknownAccounts = tokensNamingNoAccount(snapshot, facts);
  if (unknownAccounts !== null) {
    return refuse('tokens_name_no_account', `tokens name no configured connector account (${unknownAccounts.join(', ')}); configured: ${Object.keys(snapshot.connectors).sort().join(', ')}`, 'payment_method.tokens');
  }
  if (candidates.length === 0 && refusedAmount.length > 0) {
    return refuse('amount_not_accepted', `no candidate connector can take ${facts.amount} ${facts.currency}: ${refusedAmount.join('; ')}`, 'amount');
  }
  if (candidates.length === 0) return refuse('no_candidate', 'no connector can take this payment', null);
  return { ok: true, decision };
}

/** Whether a key of this mode may send a payment to an account of that mode (a legacy key, `any`, reaches all). */
export function reaches(keyMode: StoredKeyMode | undefined, accountMode: 'test' | 'live'): boolean {
  return keyMode === undefined || keyMode === 'any' || keyMode === accountMode;
}

/**
 * Whether a payment is live: made with a live key it is, with a test key it is not. A legacy key
 * (`any`) reaches both, so its payment is live when one of the accounts it may be sent to (its
 * candidates) is live: it may move real money. With no candidate it is live when an account its route
 * named is (migration 0024 decides existing payments by the same rule).
 */
export function paymentLivemode(snapshot: RoutingSnapshot, decision: RouteDecision, keyMode: StoredKeyMode | undefined): boolean {
  if (keyMode === 'live' || keyMode === 'test') return keyMode === 'live';
  const accounts = decision.candidates.length > 0 ? decision.candidates : decision.skipped.map((s) => s.connector);
  return accounts.some((n) => Object.hasOwn(snapshot.connectors, n) && snapshot.connectors[n]!.mode === 'live');
}

/** Without a test card, tokens whose every account is unknown to the config: those names (else null). */
function tokensNamingNoAccount(snapshot: RoutingSnapshot, facts: RouteFacts): string[] | null {
  if (facts.testCard !== undefined || facts.tokens === undefined) return null;
  const named = Object.keys(facts.tokens);
  if (named.length === 0 || named.some((n) => Object.hasOwn(snapshot.connectors, n))) return null;
  return named;
}
