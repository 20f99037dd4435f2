// How often the recovery sweeper looks at each kind of work in flight, by state. Each state has a
// normal lifetime: an authorization in flight answers within seconds, a capture or void within
// minutes, a refund pending at the provider may take hours. An item is due once it has been
// untouched for its state's interval, and that interval grows with the item's age (a quarter of
// it), between the state's base and its cap: a young stall is nudged soon, an old one rarely.

/** parked: a payment in needs_review, asked about again (core/step-parked.ts), not nudged as stalled. */
export type SweptKind = 'authorization' | 'capture' | 'refund' | 'void' | 'release' | 'parked';

export interface Cadence {
  readonly kind: SweptKind;
  /** The states (of the payment, the capture, the refund or the attempt) this cadence covers. */
  readonly states: readonly string[];
  readonly baseMs: number;
  readonly capMs: number;
}

const MIN = 60_000;
const HOUR = 60 * MIN;

/** `authorizationMs`: the base for payments still being authorized (RuntimeOptions.recoveryStaleMs). */
export function sweeperCadences(authorizationMs: number): readonly Cadence[] {
  return [
    { kind: 'authorization', states: ['authorizing', 'auth_unknown', 'requires_action'], baseMs: authorizationMs, capMs: Math.max(authorizationMs, HOUR) },
    { kind: 'capture', states: ['requested', 'pending'], baseMs: 10 * MIN, capMs: 6 * HOUR },
    { kind: 'refund', states: ['requested'], baseMs: 10 * MIN, capMs: 6 * HOUR },
    { kind: 'refund', states: ['pending'], baseMs: 2 * HOUR, capMs: 24 * HOUR },
    { kind: 'void', states: ['voiding'], baseMs: 10 * MIN, capMs: 6 * HOUR },
    { kind: 'release', states: ['releasing'], baseMs: 10 * MIN, capMs: 6 * HOUR },
    // A parked payment whose provider may since have answered: soon at first, then ever more rarely.
    { kind: 'parked', states: ['needs_review'], baseMs: authorizationMs, capMs: 6 * HOUR },
  ];
}

/** The untouched time after which an item of this age is due: a quarter of its age, within [base, cap]. */
export function dueAfterMs(c: Cadence, ageMs: number): number {
  return Math.min(c.capMs, Math.max(c.baseMs, Math.floor(ageMs / 4)));
}
