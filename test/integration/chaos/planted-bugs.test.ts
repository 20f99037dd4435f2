// The harness must catch bugs, not only pass: each deliberately broken part, swapped into the
// gateway's processes through its seams, must produce violations of the invariant it breaks.
// One topology (database, Redis, sandboxes, proxy) serves all six runs; each run starts its own
// gateway processes with its bug.

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChaos } from '../../../chaos/harness.ts';
import type { ChaosReport } from '../../../chaos/harness.ts';
import { makePlan } from '../../../chaos/plan.ts';
import { PARTIAL_CARD } from '../../../chaos/plan.ts';
import type { FaultKind, PaymentPlan, ProviderOp } from '../../../chaos/plan.ts';
import { EXPECTED_INVARIANTS, PLANTED_BUGS } from '../../../chaos/planted-bugs.ts';
import type { PlantedBug } from '../../../chaos/planted-bugs.ts';
import { Topology } from '../../../chaos/topology.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

/** The faults that give each bug its chance (a bug in timeout handling needs timeouts). */
interface Aim {
  readonly kinds: readonly FaultKind[];
  readonly rate: number;
  readonly payments: number;
  readonly accounts?: readonly string[];
  readonly ops?: readonly ProviderOp[];
  readonly webhookDelayMs?: number;
  /** Where the seed search starts. */
  readonly seed: number;
  /** How long to wait for quiescence (default 30 s). */
  readonly quiesceMs?: number;
  /** release_failure faults of one variant only. */
  readonly releaseMode?: 'refused' | 'fail_later';
}

const FAULTS: Readonly<Record<PlantedBug, Aim>> = {
  failover_on_timeout: { kinds: ['latency_before', 'accept_then_drop'], rate: 0.5, payments: 50, seed: 1000 },
  // Answers lost after the provider acted, where a resend with another key makes it act again: Adyen
  // keeps no payment per merchant reference.
  // Webhooks late, so the worker's lost answer, not the provider's notification, decides what happens next.
  new_key_per_retry: { kinds: ['accept_then_drop', 'latency_before'], rate: 0.5, payments: 40, accounts: ['adyen_c'], ops: ['authorize', 'refund'], webhookDelayMs: 3000, seed: 1001 },
  // Events arriving while two refunds of the same amount are in flight (delayed for the whole run).
  // Webhooks late enough that both refunds of a pair are in flight when the first one's event arrives.
  stale_webhook: { kinds: ['webhook_duplicate', 'webhook_reorder'], rate: 0.2, payments: 30, webhookDelayMs: 2_000, seed: 1002 },
  // Lost updates need concurrent transitions of one payment: worker answers racing webhooks.
  skip_version_check: { kinds: ['webhook_duplicate', 'webhook_reorder'], rate: 0.2, payments: 50, seed: 1003 },
  refund_without_amount_check: { kinds: [], rate: 0, payments: 50, seed: 1004 },
  // No faults needed: IDR payments routed to Adyen are charged 100x there.
  adyen_amounts_in_iso_units: { kinds: [], rate: 0, payments: 40, seed: 1005 },
  // Refunds whose answers are lost and whose resends are replayed past a retention of seconds; the
  // held webhooks make the quiescence wait longer.
  retention_not_checked_at_execution: { kinds: ['key_expiry'], rate: 0.08, payments: 30, seed: 1006, quiesceMs: 60_000 },
  // Authorizations refused in one execution while a second one of the same row is approved.
  superseded_refusal_as_proof: { kinds: ['duplicate_execution'], rate: 0.3, payments: 24, ops: ['authorize'], seed: 1007 },
  // Release refunds (USD, automatic capture, the partial-approval card on Stripe) that the sandbox
  // accepts as pending and fails later.
  accepted_release_is_released: { kinds: ['release_failure'], rate: 0.3, payments: 40, accounts: ['stripe_c'], releaseMode: 'fail_later', seed: 1009 },
  // One-call Stripe authorizations held by the sandbox past the client's timeout (the key held, the
  // create run later): the lookup runs while nothing is there yet.
  not_found_by_list_is_proof: { kinds: ['latency_after'], rate: 0.5, payments: 24, accounts: ['stripe_c'], ops: ['authorize'], seed: 1010 },
  // Customers who leave the challenge page (or come back after the deadline): no faults needed; the
  // driver waits out each deadline, so a short quiescence wait.
  expiry_never_abandons: { kinds: [], rate: 0, payments: 24, seed: 1011, quiesceMs: 10_000 },
  // Challenged payments the driver captures (or that capture automatically): no faults needed.
  action_required_as_approval: { kinds: [], rate: 0, payments: 24, seed: 1012, quiesceMs: 10_000 },
  // Customers who leave (their attempts never cancelled) or complete after the deadline.
  abandonment_without_cancel: { kinds: [], rate: 0, payments: 24, seed: 1011, quiesceMs: 10_000 },
};

/** Two refunds in flight together, where they stay in flight until a webhook settles them (Adyen: EUR). */
const asyncRefundPair = (p: PaymentPlan): boolean => p.currency === 'EUR' && p.card === '4242424242424242' && p.steps.some((s) => s.kind === 'refund_pair');
const refundPair = (p: PaymentPlan): boolean => p.card === '4242424242424242' && p.steps.some((s) => s.kind === 'refund_pair');
/** An approved IDR payment: about half of them go to Adyen, where the bug charges 100 times the amount. */
const approvedIdr = (p: PaymentPlan): boolean => p.currency === 'IDR' && p.card === '4242424242424242';
/** A partial approval on Stripe under automatic capture: its release is a refund, accepted as pending when the fault meets it. */
const partialAutomatic = (p: PaymentPlan): boolean => p.card === PARTIAL_CARD && p.captureMethod === 'automatic';

/** The first seed from `from` whose plan has at least `min` payments the bug needs (plans are pure: cheap to scan). */
function seedWith(from: number, payments: number, wanted: (p: PaymentPlan) => boolean, min: number): number {
  for (let seed = from; ; seed++) {
    const plan = makePlan({ seed, payments, merchants: 6, accounts: ['stripe_c', 'adyen_c'], faultRate: 0, kills: true, clientTimeoutMs: 1_500 });
    if (plan.payments.filter(wanted).length >= min) return seed;
  }
}

/** Customers who never come back before the deadline. */
const leavesTheCustomerWaiting = (p: PaymentPlan): boolean => p.authentication?.lifecycle === 'abandon' || p.authentication?.lifecycle === 'complete_late';
/** A challenged payment whose approval would be captured: automatic capture, or a capture step. */
const challengedAndCaptured = (p: PaymentPlan): boolean =>
  p.authentication !== undefined && (p.captureMethod === 'automatic' || p.steps.some((s) => s.kind === 'capture' || s.kind === 'race' || s.kind === 'over_capture'));

/** What a bug needs from the workload, when any seed will not do. */
/** An approved payment with a refund: key_expiry loses a refund's answer. */
const refunded = (p: PaymentPlan): boolean => p.card === '4242424242424242' && p.steps.some((s) => s.kind === 'refund' || s.kind === 'refund_pair');
const NEEDS: Partial<Record<PlantedBug, (p: PaymentPlan) => boolean>> = {
  stale_webhook: asyncRefundPair, skip_version_check: refundPair, adyen_amounts_in_iso_units: approvedIdr, retention_not_checked_at_execution: refunded, accepted_release_is_released: partialAutomatic,
  expiry_never_abandons: leavesTheCustomerWaiting, action_required_as_approval: challengedAndCaptured, abandonment_without_cancel: leavesTheCustomerWaiting,
};
/** How many payments of the kind a bug needs its seed to have (default 6). */
const NEEDED: Partial<Record<PlantedBug, number>> = { accepted_release_is_released: 2, expiry_never_abandons: 2, action_required_as_approval: 3, abandonment_without_cancel: 2 };

/**
 * Bugs whose aim no longer meets their workload reliably, parked here (with a note in
 * docs/reliability.md) until it is fixed. None now: stale_webhook is asserted again since its run
 * holds webhooks 2 s.
 */
const NOT_IN_CI: readonly PlantedBug[] = [];

// The runs take ~500 s on a quiet machine with the ten pre-issue-27 bugs, 771 s with thirteen on a
// loaded one (2026-12-01): the hook's bound leaves room for a bug that needs a second seed.
let db: TestDatabase;
let topology: Topology;
const reports = new Map<PlantedBug, ChaosReport>();

beforeAll(async () => {
  db = await createTestDatabase('chaos_planted');
  topology = await Topology.boot({ databaseUrl: db.url, processes: 1, runDir: join(tmpdir(), `sy-chaos-planted-${process.pid}`), clientTimeoutMs: 1_500, apiWaitMs: 2_000 });
  const order: readonly PlantedBug[] = [
    'skip_version_check', 'refund_without_amount_check', 'adyen_amounts_in_iso_units', 'stale_webhook', 'failover_on_timeout', 'new_key_per_retry',
    'superseded_refusal_as_proof', 'retention_not_checked_at_execution', 'accepted_release_is_released', 'not_found_by_list_is_proof',
    'expiry_never_abandons', 'action_required_as_approval', 'abandonment_without_cancel',
  ];
  expect([...order, ...NOT_IN_CI].sort()).toEqual([...PLANTED_BUGS].sort());
  for (const bug of order) {
    const aim = FAULTS[bug];
    // A bug shows only when the workload meets it (a lost answer on the right call, two refunds in
    // flight when an event arrives): up to five seeded runs, stopping at the first that catches it
    // (the shared sandbox sends webhooks in order from one process, so the overlap is rarer).
    for (let tryNo = 0; tryNo < 5; tryNo++) {
      const from = aim.seed + 100 * tryNo;
      const report = await runChaos(
        {
          payments: aim.payments, seed: NEEDS[bug] === undefined ? from : seedWith(from, aim.payments, NEEDS[bug], NEEDED[bug] ?? 6), processes: 1, databaseUrl: db.url,
          runDir: topology.opts.runDir, plant: bug, kinds: aim.kinds, faultRate: aim.rate, quiesceMs: aim.quiesceMs ?? 30_000,
          ...(aim.accounts === undefined ? {} : { faultAccounts: aim.accounts }),
          ...(aim.ops === undefined ? {} : { faultOps: aim.ops }),
          ...(aim.webhookDelayMs === undefined ? {} : { webhookDelayMs: aim.webhookDelayMs }),
          ...(aim.releaseMode === undefined ? {} : { releaseMode: aim.releaseMode }),
        },
        topology,
      );
      reports.set(bug, report);
      if (report.details.violations.some((v) => EXPECTED_INVARIANTS[bug].includes(v.invariant))) break;
    }
  }
}, 1_200_000);

afterAll(async () => {
  await topology?.close();
  await db?.drop();
});

describe('chaos harness against planted bugs', () => {
  it.each(PLANTED_BUGS.filter((b) => !NOT_IN_CI.includes(b)))('%s is caught by its invariant', (bug) => {
    const r = reports.get(bug)!;
    const caught = r.details.violations.filter((v) => EXPECTED_INVARIANTS[bug].includes(v.invariant));
    console.log(`${bug}: ${JSON.stringify(r.violations_by_invariant)} e.g. ${caught[0]?.detail ?? '-'}`);
    expect(caught.length, `${bug}: ${JSON.stringify(r.violations_by_invariant)}`).toBeGreaterThan(0);
    expect(caught.every((v) => v.detail.length > 0)).toBe(true);
  });
});
