// Failover is a value computed from data loaded before deciding. The rule: attempt n+1 starts only
// with a not-charged proof for every earlier attempt. A timeout is never a proof.

import type { ConnectorPolicy } from './policy.ts';
import type { Attempt, CaptureMethod, NotChargedProof } from './payment.ts';

/** The proof that an attempt did not charge the customer, or null when there is none. */
export function notChargedProof(attempt: Attempt): NotChargedProof | null {
  switch (attempt.status) {
    case 'declined':
      return 'declined';
    case 'abandoned':
      return attempt.proof;
    case 'preparing':
    case 'authorizing':
    case 'authenticating': // the customer may be at the provider's page: never proof, never failover
    case 'unknown':
    case 'fencing':
    case 'authorized':
    case 'releasing':
    case 'released':
    case 'review':
      return null;
  }
}

export type NextDecision =
  | { readonly kind: 'retry_same' }
  | { readonly kind: 'failover'; readonly connector: string; readonly proof: NotChargedProof; readonly skipped: readonly Skip[] }
  | { readonly kind: 'resolve_unknown' }
  | { readonly kind: 'review'; readonly reason: string }
  | { readonly kind: 'fail'; readonly reason: 'declined' | 'no_candidate' | 'max_attempts' | 'deadline'; readonly skipped: readonly Skip[] };

export interface Skip {
  readonly connector: string;
  readonly reason: string;
}

export interface DecideNextInput {
  readonly attempts: readonly Attempt[];
  readonly candidates: readonly string[];
  readonly openBreakers: ReadonlySet<string>;
  readonly policies: Readonly<Record<string, ConnectorPolicy>>;
  readonly captureMethod: CaptureMethod;
  readonly maxAttempts: number;
  readonly maxResends: number;
  readonly pastDeadline: boolean;
  /** Paid with a vaulted card: its code is destroyed at the first authorization response (PCI DSS 3.3.1.2). */
  readonly vaultedCard?: boolean;
}

/** The issuer answered this attempt (approval, decline, challenge): the vault has destroyed the card's code since. */
function issuerAnswered(a: Attempt): boolean {
  return a.status === 'declined' || a.lastOutcome === 'succeeded' || a.lastOutcome === 'declined' || a.lastOutcome === 'action_required' || a.authentication !== undefined;
}

/** Picks the next candidate not yet tried, skipping open breakers and connectors that cannot serve the payment. */
export function nextCandidate(input: Omit<DecideNextInput, 'maxResends' | 'pastDeadline' | 'maxAttempts'>): { connector: string | null; skipped: Skip[] } {
  const tried = new Set(input.attempts.map((a) => a.connector));
  const skipped: Skip[] = [];
  const codeGone = input.vaultedCard === true && input.attempts.some(issuerAnswered);
  for (const c of input.candidates) {
    if (tried.has(c)) continue;
    const policy = input.policies[c];
    if (policy === undefined) {
      skipped.push({ connector: c, reason: 'connector not configured' });
      continue;
    }
    if (input.captureMethod === 'manual' && !policy.capabilities.manualCapture) {
      skipped.push({ connector: c, reason: 'manual capture not supported' });
      continue;
    }
    if (input.openBreakers.has(c)) {
      skipped.push({ connector: c, reason: 'breaker open' });
      continue;
    }
    if (codeGone && policy.capabilities.requiresCardCode === true) {
      skipped.push({ connector: c, reason: 'needs the card code, destroyed at an earlier authorization response' });
      continue;
    }
    return { connector: c, skipped };
  }
  return { connector: null, skipped };
}

/** What follows the current (last) attempt's outcome. */
export function decideNext(input: DecideNextInput): NextDecision {
  const last = input.attempts[input.attempts.length - 1];
  if (last === undefined) return { kind: 'review', reason: 'no attempt' };
  if (last.status === 'unknown' || last.status === 'fencing') return { kind: 'resolve_unknown' };
  const proof = notChargedProof(last);
  if (proof === null) return { kind: 'review', reason: `attempt ${last.id} is ${last.status}: no proof it did not charge` };

  const declinedHere = proof === 'declined' && !last.retryElsewhere;
  if (declinedHere) return { kind: 'fail', reason: 'declined', skipped: [] };

  for (const a of input.attempts) {
    if (notChargedProof(a) === null) return { kind: 'review', reason: `attempt ${a.id} has no not-charged proof` };
  }
  const failReason = proof === 'declined' ? 'declined' : 'no_candidate';
  if (input.pastDeadline) return { kind: 'fail', reason: proof === 'declined' ? 'declined' : 'deadline', skipped: [] };

  // Our own checks refused it: the same request would be refused again, so it is never resent (failover may still take it).
  const refusedLocally = last.notSentReason === 'local_validation';
  const canRetrySame = proof === 'not_sent' && !last.maybeReached && !refusedLocally && last.notSentReason !== 'breaker_open' && last.sends > 0 && last.sends <= input.maxResends;
  if (input.attempts.length >= input.maxAttempts) {
    return canRetrySame ? { kind: 'retry_same' } : { kind: 'fail', reason: proof === 'declined' ? 'declined' : 'max_attempts', skipped: [] };
  }
  const next = nextCandidate(input);
  if (next.connector !== null) return { kind: 'failover', connector: next.connector, proof, skipped: next.skipped };
  if (canRetrySame) return { kind: 'retry_same' };
  return { kind: 'fail', reason: failReason, skipped: next.skipped };
}
