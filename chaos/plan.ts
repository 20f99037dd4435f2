// The run's plan, pure and fixed by the seed: one lifecycle per payment, and a fault schedule tied
// to the driver's operation counter (fault i fires when operation `atOp` starts), so the same seed
// asks for the same faults at the same points of the workload whatever the machine's speed.

import { Rng } from './rng.ts';

export const FAULT_KINDS = [
  'error_503',
  'reset_before_processing',
  'accept_then_drop',
  'latency_before',
  'latency_after',
  'outage',
  'webhook_duplicate',
  'webhook_reorder',
  'webhook_delay',
  'kill_api',
  'kill_worker',
  'redis_restart',
  'pg_terminate',
  'duplicate_execution',
  'key_expiry',
  // The sandbox refuses, or accepts and later fails, the cancel or refund releasing an approval the
  // payment does not keep (a partial approval in the workload, a late one under faults).
  'release_failure',
  // A capture or refund the provider performs, then reverses at once (Adyen CAPTURE_FAILED /
  // REFUND_FAILED, Stripe refund.failed), its failure event delivered before, after, or twice
  // around the success it reverses.
  'late_reversal',
  // A release refund the provider performs, its answer lost, then reverses at once, its failure
  // events delivered before its success (issue 41 §1): each event must settle its own round.
  'release_reversed_first',
  // A void or capture the sandbox performs, whose answer it drops and never stores under the key:
  // the same-key resend is refused "already in that state" (Stripe 400 payment_intent_unexpected_state,
  // Adyen a failed CANCELLATION / CAPTURE) instead of replayed (issue 41 §4).
  'already_done',
  // An Adyen account completes an authorization that is in flight when a technical cancel of its
  // reference arrives (the sandbox's inFlightAfterCancel: authorised), and its /payments are held
  // long enough that the gateway fences them (issue 41 §5): a confirmed fence, a failover, then the
  // approval anyway.
  'authorise_after_cancel',
  // The gateway's database refuses every connection (ALLOW_CONNECTIONS false, its backends cut) for
  // longer than the workers' retry budget; the sandboxes' database stays up. Then allowed again.
  'pg_outage_long',
  // The vault's own process (--vault-process) killed with -9 and started again: a worker's reveal
  // or the API's tokenize meets no vault (issue 44). Only with a vault process to kill.
  'kill_vault',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * Kinds added after seeds were chosen for what their schedules meet (the planted plans, the quick
 * pass): drawn after the others from a fork of their own, so a seed keeps the schedule of every
 * other kind and only gains these.
 */
const APPENDED_KINDS: readonly FaultKind[] = ['pg_outage_long', 'kill_vault'];

/** resume: the call after the customer's authentication (Stripe: retrieve the PaymentIntent; Adyen: /payments/details). */
export type ProviderOp = 'create' | 'authorize' | 'capture' | 'refund' | 'void' | 'resume';

export interface FaultEvent {
  readonly atOp: number;
  readonly kind: FaultKind;
  /** Sandbox account (sandbox faults, outages, webhook settings). */
  readonly account?: string;
  readonly op?: ProviderOp;
  readonly count?: number;
  readonly latencyMs?: number;
  readonly seconds?: number;
  /** Which process of its role (kills). */
  readonly processIndex?: number;
  /** Webhook settings stay changed for this many operations. */
  readonly windowOps?: number;
  /** release_failure: refused outright, or accepted and failed later (a Stripe cancel, being synchronous, is refused). */
  readonly release?: 'refused' | 'fail_later';
  /** late_reversal: the failure event before, after, or twice around the success. */
  readonly order?: 'before' | 'after' | 'twice';
}

/** How a request is sent: once, then replayed with the same key, or twice at once. */
export type Repeat = 'once' | 'replay' | 'concurrent';

export type Step =
  | { readonly kind: 'capture'; readonly percent: number; readonly repeat: Repeat }
  | { readonly kind: 'void'; readonly repeat: Repeat }
  /** percent of what the driver believes is still refundable; 'half' twice gives equal amounts. */
  | { readonly kind: 'refund'; readonly percent: number; readonly repeat: Repeat }
  /** Two refunds of half of what is refundable, sent at once with different keys: both in flight together. */
  | { readonly kind: 'refund_pair' }
  /** A refund of one unit more than is refundable: must be 422 amount_exceeds_captured. */
  | { readonly kind: 'over_refund' }
  /** A capture of one unit more than authorized: must be 422 amount_exceeds_authorized. */
  | { readonly kind: 'over_capture' }
  /** A capture and a void of the same payment at once, with different keys: one wins, the other is refused. */
  | { readonly kind: 'race' }
  /** The same key with another body: must be 422 idempotency_key_reused. */
  | { readonly kind: 'reuse_key' }
  /** A field the API does not take: must be 400, and nothing written. */
  | { readonly kind: 'bad_request' }
  /** A provider webhook with a wrong signature naming this payment: must be refused, no effect. */
  | { readonly kind: 'forged_webhook' };

/**
 * The workload's currencies, each with the amount step both connectors can send (IDR: Adyen takes
 * whole rupiah; KWD: Stripe wants the last digit 0). JPY, KWD, CLP, ISK and IDR are the zero-,
 * three- and provider-differing currencies (Adyen: CLP, ISK 2 decimals, IDR 0; Stripe: ISK 2), so
 * a wrong exponent on either connector shows as a charge that disagrees with the sandbox ledger.
 */
export const AMOUNT_STEPS = { USD: 1, EUR: 1, JPY: 1, KWD: 10, CLP: 1, ISK: 1, IDR: 100 } as const;
export type WorkloadCurrency = keyof typeof AMOUNT_STEPS;
const MIXED_CURRENCIES: readonly WorkloadCurrency[] = ['JPY', 'KWD', 'CLP', 'ISK', 'IDR'];

/** `amount` rounded down to a multiple of the currency's step: partial captures and refunds stay sendable. */
export function floorToStep(amount: number, currency: WorkloadCurrency): number {
  const step = AMOUNT_STEPS[currency];
  return amount - (amount % step);
}

/**
 * What the customer does when the provider asks for authentication: complete (then the steps, as an
 * approved payment's), fail, abandon (never comes back: the deadline passes), complete_late (presses
 * Complete `lateByMs` after expires_at, when the gateway is fencing or has fenced).
 */
export type AuthLifecycle = 'complete' | 'fail' | 'abandon' | 'complete_late';

export interface PaymentPlan {
  readonly index: number;
  readonly merchant: number;
  readonly amount: number;
  readonly currency: WorkloadCurrency;
  readonly captureMethod: 'manual' | 'automatic';
  readonly card: string;
  readonly createRepeat: Repeat;
  readonly steps: readonly Step[];
  /** Present on the payments that send a return_url with a card the issuer wants authenticated. */
  readonly authentication?: { readonly lifecycle: AuthLifecycle; readonly lateByMs: number };
  /** Routed to the accounts whose keys expire in seconds (plans with key_expiry faults; `metadata.chaos_keys`). */
  readonly shortKeys?: true;
  /**
   * Paid with a vaulted card (issue 44): the driver tokenizes VAULTED_CARD with the merchant's
   * publishable key, then pays with the pmd_ id. Only approved plans without authentication.
   */
  readonly vaulted?: true;
}

export interface ChaosPlan {
  readonly seed: number;
  readonly payments: readonly PaymentPlan[];
  readonly faults: readonly FaultEvent[];
  /** Operations the plan expects (an estimate: a declined payment skips its steps). */
  readonly expectedOps: number;
}

export interface PlanOptions {
  readonly seed: number;
  readonly payments: number;
  readonly merchants: number;
  readonly accounts: readonly string[];
  /** Faults per planned operation. */
  readonly faultRate: number;
  /** Kill and restart faults only fire when there are processes to kill. */
  readonly kills: boolean;
  /** The vault runs as its own process (kill_vault faults have one to kill). */
  readonly vaultProcess?: boolean;
  /** Client timeout of the connectors (latency faults go beyond it). */
  readonly clientTimeoutMs: number;
  /** Only these kinds (default all). */
  readonly kinds?: readonly FaultKind[];
  /** Sandbox faults only on these operations (default all, authorize most). */
  readonly ops?: readonly ProviderOp[];
  /** release_failure faults of this variant only (default: either, by the seed). */
  readonly releaseMode?: 'refused' | 'fail_later';
  /**
   * Only lifecycles this keeps (a planted bug's run needs only the workload its bug lives in):
   * candidates are drawn from the seed until `payments` are kept, and the fault schedule spreads
   * over the kept ones' operations.
   */
  readonly keep?: (p: PaymentPlan) => boolean;
  /**
   * The account a key_expiry fault drawn on `account` hits instead (the run's short-keys account of
   * that provider); absent: the account drawn.
   */
  readonly keyExpiryAccount?: (account: string) => string;
  /** Of the payments with a refund, the share sent to the short-keys accounts (default SHORT_KEYS_SHARE). */
  readonly shortKeysShare?: number;
  /** Of the approved payments without authentication, the share paid with a vaulted card (default 0). */
  readonly vaultedShare?: number;
}

/**
 * The number a vaulted plan's card is: approved at both sandboxes (docs/sandbox.md) and not one of the
 * gateway's test cards, so the card-data scan (card_data_contained) can look for it everywhere.
 */
export const VAULTED_CARD = '5555555555554444';
/** The share of the full workload's approved payments paid with a vaulted card. */
export const VAULTED_SHARE = 0.25;

/** Drawn last from the plan's own fork (a seed keeps everything else it had); none with share 0. */
function withVaulted(rng: Rng, plan: PaymentPlan, share: number): PaymentPlan {
  if (share <= 0 || plan.card !== APPROVED_CARD || plan.authentication !== undefined || !rng.chance(share)) return plan;
  return { ...plan, vaulted: true };
}

/** Of the payments with a refund, the share sent to the short-keys accounts when the plan has key_expiry faults. */
export const SHORT_KEYS_SHARE = 0.3;

const refunds = (p: PaymentPlan): boolean => p.steps.some((s) => s.kind === 'refund' || s.kind === 'refund_pair');

/** How many candidates a `keep` filter may look at per payment it must keep, before the plan gives up. */
const KEEP_CANDIDATES_PER_PAYMENT = 5_000;

const APPROVED_CARD = '4242424242424242';
const CARDS: Readonly<Record<string, number>> = {
  '4242424242424242': 80, // approved
  '4000000000000002': 4, // generic_decline (soft)
  '4000000000009995': 4, // insufficient_funds
  '4000000000009979': 3, // stolen_card (hard)
  '4000000000000119': 9, // processing_error: soft, retry elsewhere (failover on proof)
};

/** Asks for a challenge on both sandboxes (issue 27). */
export const CHALLENGE_CARD = '4000002760003184';
/** Authenticated, then declined for insufficient funds. */
export const AUTHENTICATED_DECLINE_CARD = '4000008260003178';

/**
 * The connector types whose sandboxes present a challenge page. Authentication lifecycles go only
 * to a currency the chaos routing sends to one of them first (USD: Stripe first; EUR: Adyen first).
 */
export const CHALLENGE_CONNECTORS: readonly ('stripe' | 'adyen')[] = ['stripe', 'adyen'];
const FIRST_ROUTED: Readonly<Record<'stripe' | 'adyen', WorkloadCurrency>> = { stripe: 'USD', adyen: 'EUR' };
export const CHALLENGE_CURRENCIES: readonly WorkloadCurrency[] = CHALLENGE_CONNECTORS.map((c) => FIRST_ROUTED[c]);

/** Approves half the amount on Stripe: the payment is declined and the approval released (void, or refund under automatic capture). */
export const PARTIAL_CARD = '4000000000000515';

function repeat(rng: Rng): Repeat {
  return rng.weighted({ once: 70, replay: 20, concurrent: 10 });
}

function manualSteps(rng: Rng): Step[] {
  switch (rng.weighted({ full: 28, partial: 18, void: 12, race: 10, keep: 6, over: 12, refunds: 14 })) {
    case 'full':
      return [{ kind: 'capture', percent: 100, repeat: repeat(rng) }, ...(rng.chance(0.5) ? [{ kind: 'refund', percent: 100, repeat: repeat(rng) } as const] : [])];
    case 'partial':
      return [{ kind: 'capture', percent: rng.pick([40, 50, 60, 80]), repeat: repeat(rng) }, { kind: 'refund', percent: 50, repeat: repeat(rng) }, { kind: 'refund', percent: 100, repeat: repeat(rng) }];
    case 'void':
      return [{ kind: 'void', repeat: repeat(rng) }, ...(rng.chance(0.3) ? [{ kind: 'capture', percent: 100, repeat: 'once' } as const] : [])];
    case 'race':
      return [{ kind: 'race' }, { kind: 'refund', percent: 100, repeat: 'once' }];
    case 'keep':
      return rng.chance(0.5) ? [{ kind: 'bad_request' }] : [];
    case 'over':
      return [{ kind: 'over_capture' }, { kind: 'capture', percent: 100, repeat: 'once' }, { kind: 'over_refund' }, { kind: 'refund', percent: 100, repeat: repeat(rng) }];
    default:
      // Two refunds of the same amount, one after the other or both at once: an event about one
      // must never settle the other.
      return rng.chance(0.5)
        ? [{ kind: 'capture', percent: 100, repeat: 'once' }, { kind: 'refund', percent: 50, repeat: repeat(rng) }, { kind: 'refund', percent: 100, repeat: repeat(rng) }, { kind: 'over_refund' }]
        : [{ kind: 'capture', percent: 100, repeat: 'once' }, { kind: 'refund_pair' }, { kind: 'over_refund' }];
  }
}

function automaticSteps(rng: Rng): Step[] {
  switch (rng.weighted({ none: 30, one: 30, two: 30, over: 10 })) {
    case 'none':
      return [];
    case 'one':
      return [{ kind: 'refund', percent: rng.pick([30, 100]), repeat: repeat(rng) }];
    case 'two':
      return rng.chance(0.5) ? [{ kind: 'refund', percent: 50, repeat: repeat(rng) }, { kind: 'refund', percent: 100, repeat: repeat(rng) }] : [{ kind: 'refund_pair' }];
    default:
      return [{ kind: 'over_refund' }, { kind: 'refund', percent: 100, repeat: 'once' }];
  }
}

function paymentPlan(rng: Rng, index: number, merchants: number): PaymentPlan {
  const captureMethod = rng.chance(0.75) ? 'manual' : 'automatic';
  const steps = captureMethod === 'manual' ? manualSteps(rng) : automaticSteps(rng);
  const extras: Step[] = [];
  if (rng.chance(0.05)) extras.push({ kind: 'reuse_key' });
  if (rng.chance(0.03)) extras.push({ kind: 'bad_request' });
  if (rng.chance(0.04)) extras.push({ kind: 'forged_webhook' });
  const plan: PaymentPlan = {
    index,
    merchant: rng.int(0, merchants - 1),
    // Even amounts, so two refunds of half are the same amount.
    amount: rng.int(5, 5000) * 20,
    currency: rng.chance(0.5) ? 'USD' : 'EUR',
    captureMethod,
    card: rng.weighted(CARDS),
    createRepeat: repeat(rng),
    steps: [...steps, ...extras],
  };
  // Drawn last, so a seed keeps the steps, cards and repeats it had before the currency mix.
  if (!rng.chance(0.35)) return withAuthentication(rng, withPartial(rng, plan));
  const currency = rng.pick(MIXED_CURRENCIES);
  return { ...plan, currency, amount: plan.amount * AMOUNT_STEPS[currency] };
}

/**
 * A few USD payments with the partial-approval card (drawn after everything else, so a seed keeps
 * its plan otherwise): Stripe approves half, the gateway declines and releases it, and the
 * release_failure fault has a release to fail. Their steps stay (a declined payment skips them).
 */
function withPartial(rng: Rng, plan: PaymentPlan): PaymentPlan {
  if (!rng.chance(0.06) || plan.currency !== 'USD') return plan;
  return { ...plan, card: PARTIAL_CARD };
}

/**
 * About one payment in three of a currency routed to a connector that presents a challenge asks for
 * customer authentication (drawn after everything else, so a seed keeps its plan otherwise). Its
 * steps stay: a completed authentication is followed by them, as an approved payment's are.
 */
function withAuthentication(rng: Rng, plan: PaymentPlan): PaymentPlan {
  if (!rng.chance(0.35) || !CHALLENGE_CURRENCIES.includes(plan.currency) || plan.card === PARTIAL_CARD) return plan;
  const kind = rng.weighted({ complete: 40, fail: 15, abandon: 15, complete_late: 15, declined_after: 15 });
  const lateByMs = rng.int(0, 3_000);
  if (kind === 'declined_after') return { ...plan, card: AUTHENTICATED_DECLINE_CARD, authentication: { lifecycle: 'complete', lateByMs } };
  return { ...plan, card: CHALLENGE_CARD, authentication: { lifecycle: kind, lateByMs } };
}

/** Operations a lifecycle issues when its payment is approved (each repeat is one more). */
function opsOf(p: PaymentPlan): number {
  const rep = (r: Repeat): number => (r === 'once' ? 1 : 2);
  return rep(p.createRepeat) + p.steps.reduce((n, s) => n + ('repeat' in s ? rep(s.repeat) : s.kind === 'race' || s.kind === 'refund_pair' ? 2 : 1), 0);
}

const SANDBOX_FAULTS: readonly FaultKind[] = ['error_503', 'reset_before_processing', 'accept_then_drop', 'latency_before', 'latency_after'];

const WEIGHTS: Readonly<Record<FaultKind, number>> = {
  error_503: 16,
  reset_before_processing: 14,
  accept_then_drop: 14,
  latency_before: 9,
  latency_after: 9,
  outage: 5,
  webhook_duplicate: 6,
  webhook_reorder: 5,
  webhook_delay: 5,
  kill_api: 4,
  kill_worker: 5,
  redis_restart: 2,
  pg_terminate: 4,
  duplicate_execution: 5,
  key_expiry: 2,
  release_failure: 4,
  late_reversal: 4,
  release_reversed_first: 3,
  already_done: 4,
  authorise_after_cancel: 3,
  pg_outage_long: 1,
  kill_vault: 3,
};

/**
 * How long authorise_after_cancel holds a /payments: past the client's timeout, the same-key resends
 * (each answered "in progress", 1-2, 2-4 and 4-8 s apart with the default backoff) and the fence
 * that follows, so the technical cancel arrives while the authorization is still in flight.
 */
export const AUTHORISE_AFTER_CANCEL_HOLD_MS = 20_000;

/**
 * How long a pg_outage_long lasts: longer than the chaos processes' job retry budget
 * (topology.ts CHAOS_JOB_RETRIES: 4 tries from 200 ms, about 1.4 s), so the jobs that meet it fail
 * for good, and short enough for a planted-bug run.
 */
export const PG_OUTAGE_SECONDS = { min: 3, max: 5 } as const;

/**
 * The idempotency-key retention the run's connector accounts declare, and their sandboxes keep keys
 * for, when the plan has key_expiry faults: seconds, so that a call delayed past it is reachable in
 * a run (the gateway's own clock is not jumped: that would also fire deadlines, leases and webhook
 * tolerances). Resends are decided inside retention minus a margin of at most half of it.
 */
export const KEY_EXPIRY_RETENTION_S = 20;

function faultEvent(rng: Rng, atOp: number, kind: FaultKind, o: PlanOptions): FaultEvent {
  const account = rng.pick(o.accounts);
  if (SANDBOX_FAULTS.includes(kind)) {
    const op = o.ops !== undefined ? rng.pick(o.ops) : rng.weighted<ProviderOp>({ authorize: 45, create: 10, capture: 20, refund: 15, void: 10, resume: 8 });
    const latency = kind === 'latency_before' || kind === 'latency_after';
    return { atOp, kind, account, op, count: rng.int(1, 2), ...(latency ? { latencyMs: o.clientTimeoutMs + rng.int(300, 1500) } : {}) };
  }
  switch (kind) {
    case 'release_failure':
    {
      const drawn = rng.chance(0.5) ? 'refused' : 'fail_later';
      return { atOp, kind, account, count: rng.int(1, 2), release: o.releaseMode ?? drawn };
    }
    case 'late_reversal':
      return { atOp, kind, account, op: rng.chance(0.5) ? 'capture' : 'refund', count: 1, order: rng.pick(['before', 'after', 'twice'] as const) };
    case 'release_reversed_first':
      return { atOp, kind, account, count: rng.int(1, 2) };
    case 'already_done': {
      // Void and capture only: a partial refund run again under a forgotten key refunds again (as
      // live would). On Adyen only the void: its refused capture resend names a second capture
      // reference, which the webhook_auth check would read as another object's event.
      const aimed = (o.ops ?? ['void', 'capture']).filter((x) => x === 'void' || x === 'capture');
      const op = account.startsWith('adyen') || aimed.length === 0 ? 'void' : rng.pick(aimed);
      return { atOp, kind, account, op, count: 1 };
    }
    case 'authorise_after_cancel': {
      // Only Adyen cancels by merchant reference.
      const adyen = o.accounts.filter((a) => a.startsWith('adyen'));
      return { atOp, kind, account: adyen.length > 0 ? adyen[0]! : account, op: 'authorize', count: 1, latencyMs: o.clientTimeoutMs + AUTHORISE_AFTER_CANCEL_HOLD_MS };
    }
    case 'outage':
      return { atOp, kind, account, seconds: rng.int(1, 3) };
    case 'pg_outage_long':
      return { atOp, kind, seconds: rng.int(PG_OUTAGE_SECONDS.min, PG_OUTAGE_SECONDS.max) };
    case 'webhook_duplicate':
    case 'webhook_reorder':
    case 'webhook_delay':
      return { atOp, kind, account, windowOps: rng.int(10, 40), ...(kind === 'webhook_delay' ? { latencyMs: rng.int(200, 2000) } : {}) };
    case 'kill_api':
    case 'kill_worker':
      return { atOp, kind, processIndex: rng.int(0, 1000) };
    case 'kill_vault':
      return { atOp, kind };
    case 'duplicate_execution': {
      // The first execution is refused after latencyMs (inside the client timeout, so it is a refusal,
      // not a timeout) while a second execution of the same row gets the provider's real answer.
      const aimed = (o.ops ?? []).filter((x) => x === 'authorize' || x === 'capture' || x === 'refund');
      const op = aimed.length > 0 ? rng.pick(aimed) : rng.weighted<ProviderOp>({ authorize: 70, capture: 15, refund: 15, create: 0, void: 0, resume: 0 });
      return { atOp, kind, account, op, latencyMs: Math.max(300, Math.min(1_000, o.clientTimeoutMs - 500)) };
    }
    case 'key_expiry':
      // A refund's answer is lost, its same-key resend dead-letters and is replayed past retention:
      // on a short-keys account, where only the payments marked shortKeys go.
      return { atOp, kind, account: o.keyExpiryAccount?.(account) ?? account, op: 'refund', seconds: KEY_EXPIRY_RETENTION_S };
    default:
      return { atOp, kind };
  }
}

export function makePlan(o: PlanOptions): ChaosPlan {
  const rng = new Rng(o.seed);
  const payments: PaymentPlan[] = [];
  if (o.keep === undefined) {
    for (let i = 0; i < o.payments; i++) {
      const f = rng.fork();
      payments.push(withVaulted(f, paymentPlan(f, i, o.merchants), o.vaultedShare ?? 0));
    }
  } else {
    // Indexes stay the candidates' own, so a kept lifecycle is the one the full plan of that seed has.
    for (let i = 0; payments.length < o.payments; i++) {
      if (i >= o.payments * KEEP_CANDIDATES_PER_PAYMENT) throw new Error(`seed ${o.seed}: fewer than ${o.payments} lifecycles in ${i} candidates pass the workload filter`);
      const f = rng.fork();
      const candidate = withVaulted(f, paymentPlan(f, i, o.merchants), o.vaultedShare ?? 0);
      if (o.keep(candidate)) payments.push(candidate);
    }
  }
  const expectedOps = payments.reduce((n, p) => n + opsOf(p), 0);

  const all = (o.kinds ?? FAULT_KINDS)
    .filter((k) => o.kills || (k !== 'kill_api' && k !== 'kill_worker' && k !== 'redis_restart'))
    .filter((k) => (o.kills && o.vaultProcess === true) || k !== 'kill_vault');
  const kinds = all.filter((k) => !APPENDED_KINDS.includes(k));
  const weights = Object.fromEntries(kinds.map((k) => [k, WEIGHTS[k]])) as Record<FaultKind, number>;
  const faults: FaultEvent[] = [];
  const total = kinds.length === 0 ? 0 : Math.max(kinds.length, Math.round(expectedOps * o.faultRate));
  const frng = rng.fork();
  // Every kind at least once, then by weight; spread over the first 90% of the operations so the
  // last faults still meet traffic.
  const span = Math.max(1, Math.floor(expectedOps * 0.9));
  for (let i = 0; i < total; i++) {
    const kind = i < kinds.length ? kinds[i]! : frng.weighted(weights);
    faults.push(faultEvent(frng, frng.int(1, span), kind, o));
  }
  // Appended kinds: their share of the run's faults (at least one each), drawn from a fork of their own.
  const arng = rng.fork();
  const allWeight = all.reduce((n, k) => n + WEIGHTS[k], 0);
  for (const kind of all.filter((k) => APPENDED_KINDS.includes(k))) {
    const n = Math.max(1, Math.round((expectedOps * o.faultRate * WEIGHTS[kind]) / allWeight));
    for (let i = 0; i < n; i++) faults.push(faultEvent(arng, arng.int(1, span), kind, o));
  }
  faults.sort((a, b) => a.atOp - b.atOp);
  // Marked after the faults (a seed keeps its schedule): the refunds key_expiry faults will meet.
  // Each payment's own draw (seed and index), so a kept lifecycle is marked as the full plan marks it.
  const keyExpiry = faults.some((f) => f.kind === 'key_expiry');
  const shortKeys = (p: PaymentPlan): boolean => new Rng(((o.seed ^ 0x5bd1e995) + Math.imul(p.index + 1, 0x9e3779b1)) >>> 0).chance(o.shortKeysShare ?? SHORT_KEYS_SHARE);
  const marked = payments.map((p) => (keyExpiry && refunds(p) && shortKeys(p) ? { ...p, shortKeys: true as const } : p));
  return { seed: o.seed, payments: marked, faults, expectedOps };
}
