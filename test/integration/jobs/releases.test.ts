// Releases of approvals the payment does not keep (issue 20), end to end through the outbox, the
// sandboxes' release faults and their webhooks: an accepted release is not a released one; a
// release the provider fails is followed by a new one with a new key; past the bound the payment
// is parked for review with a discrepancy. Each test reads the sandboxes' own ledgers.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallOutcome } from '../../../src/core/outcome.ts';
import type { Payment } from '../../../src/core/payment.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { startWebhookGateway } from '../webhooks/helpers.ts';
import type { WebhookGateway } from '../webhooks/helpers.ts';

const HMAC = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
let gw: WebhookGateway;
let stripe: SandboxControl;
let adyen: SandboxControl;
/** Attempts whose authorize answer the test turns into a refusal after the provider approved (a late approval follows by webhook). */
const lostAnswer = new Set<string>();

beforeAll(async () => {
  gw = await startWebhookGateway('jobs_releases', `
connectors:
  stripe_a:
    type: stripe
    endpoint: sandbox
    secret_key: sk_test_rel
    webhook_secrets: [whsec_rel]
    breaker: { volume_threshold: 50 }
  adyen_b:
    type: adyen
    endpoint: sandbox
    api_key: ak_rel
    merchant_account: RelMerchant
    hmac_keys: [${HMAC}]
    basic_auth: { username: rel, password: rel }
    breaker: { volume_threshold: 50 }
routing:
  rules:
    - name: eur-adyen
      when: { currency: [EUR] }
      priority: [adyen_b, stripe_a]
  default: { priority: [stripe_a, adyen_b] }
  max_attempts: 3
`, {
    webhooks: { inboundRetryBaseMs: 100 },
    aroundCall: async (effect, call) => {
      const outcome = await call();
      // The approval happened at the provider; the gateway is told the call was refused (as a
      // buggy proxy would): it fails over, and the AUTHORISATION webhook is a late approval.
      if (effect.op === 'authorize' && lostAnswer.has(effect.attemptId)) return { kind: 'not_sent', reason: 'connection_refused', detail: 'lost by the test' } satisfies CallOutcome;
      return outcome;
    },
  });
  stripe = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
  adyen = gw.rt.sandboxes.find((s) => s.account === 'adyen_b')!;
});
afterAll(async () => gw?.close());

const entryOf = async (sb: SandboxControl, attemptId: string) => (await sb.ledger()).find((e) => e.reference === attemptId);
const releaseKeys = async (paymentId: string) =>
  (await gw.db.db.execute<{ provider_key: string }>(sql`SELECT DISTINCT provider_key FROM outbox WHERE payment_id = ${paymentId} AND payload->>'op' = 'release' ORDER BY provider_key`)).rows.map((r) => r.provider_key);
const released = (p: Payment) => p.attempts.some((a) => a.status === 'released' || a.status === 'review');

describe('releases', () => {
  it('Stripe, automatic capture, partial approval: a release refund accepted then failed is followed by a new one; released only once the provider refunded', async () => {
    await stripe.scheduleFault({ op: 'release', mode: 'release_fail_later', count: 1 });
    const p0 = await gw.pay({ amount: 1000, currency: 'USD', captureMethod: 'automatic', paymentMethod: { test_card: '4000000000000515' } });
    const p = await gw.waitFor(p0.id, (x) => x.state === 'declined' && released(x), 20_000);
    const a = p.attempts[0]!;
    expect(a.status).toBe('released');
    // The money first: the customer got the approval back (not only "accepted").
    const entry = (await entryOf(stripe, a.id))!;
    expect([entry.captured, entry.refunded]).toEqual([500, 500]);
    expect(a.release).toMatchObject({ kind: 'refund', round: 2, status: 'succeeded', amount: 500 });
    expect(await releaseKeys(p.id)).toHaveLength(2);
  });

  it('Adyen, late approval: a cancel received then failed by notification is not released; a new cancel with a new key is', async () => {
    await adyen.scheduleFault({ op: 'release', mode: 'release_fail_later', count: 1 });
    // The first attempt's answer is lost; its approval arrives by AUTHORISATION webhook after failover.
    const probe = await gw.pay({ amount: 2000, currency: 'EUR' });
    lostAnswer.add(probe.attempts[0]!.id);
    const p = await gw.waitFor(probe.id, (x) => x.state === 'authorized' && x.attempts[0]!.status === 'released', 25_000);
    const first = p.attempts[0]!;
    expect(first.connector).toBe('adyen_b');
    expect(first.status).toBe('released');
    expect((await entryOf(adyen, first.id))!.cancelled).toBe(true);
    expect(first.release).toMatchObject({ kind: 'void', round: 2, status: 'succeeded' });
    expect(p.attempts[1]!.status).toBe('authorized');
    expect(await releaseKeys(p.id)).toHaveLength(2);
  });

  // Issue 41 §1: every event is matched to the round whose refund it names. Round 1's refund is
  // performed, its answer lost, then reversed at once; its failure events come before its success.
  // Taking them as news about "the current round" burned round 2 on round 1's second failure event
  // and let round 1's late success confirm round 3: booked given back, while the provider had
  // captured the money and refunded nothing.
  const heldBalance = async (paymentId: string): Promise<number> => {
    const r = await gw.db.db.execute<{ held: string | null }>(sql`
      SELECT sum(CASE WHEN e.direction = 'credit' THEN e.amount ELSE -e.amount END) AS held
        FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
       WHERE t.payment_id = ${paymentId} AND e.account LIKE 'connector:%:held_for_release'`);
    return Number(r.rows[0]?.held ?? 0);
  };

  it('Stripe: a release refund whose answer is lost and which is reversed, failure events first, is released by the next round, never by its own late success', async () => {
    await stripe.scheduleFault({ op: 'release', mode: 'reverse_before_then_drop', count: 1 });
    const p0 = await gw.pay({ amount: 1200, currency: 'USD', captureMethod: 'automatic', paymentMethod: { test_card: '4000000000000515' } });
    const p = await gw.waitFor(p0.id, (x) => x.attempts[0]!.status === 'released' || x.state === 'needs_review', 25_000);
    const a = p.attempts[0]!;
    expect(p.state).toBe('declined');
    expect(a.status).toBe('released');
    // The provider's ledger: 600 captured, 600 refunded by round 2 (round 1's refund came back).
    const entry = (await entryOf(stripe, a.id))!;
    expect([entry.captured, entry.refunded]).toEqual([600, 600]);
    expect(a.release).toMatchObject({ kind: 'refund', round: 2, status: 'succeeded' });
    // Round 1 keeps its refund's id, learnt from its events (its answer never came).
    expect(a.release?.earlier?.map((r) => [r.round, r.status, r.providerRef?.startsWith('re_')])).toEqual([[1, 'failed', true]]);
    expect(await releaseKeys(p.id)).toHaveLength(2);
    expect(await heldBalance(p.id)).toBe(0);
  });

  it('Adyen: a late approval under automatic capture, its release refund answer lost and reversed (REFUND_FAILED before REFUND): held, then a new round', async () => {
    await adyen.scheduleFault({ op: 'release', mode: 'reverse_before_then_drop', count: 1 });
    const probe = await gw.pay({ amount: 3000, currency: 'EUR', captureMethod: 'automatic' });
    lostAnswer.add(probe.attempts[0]!.id);
    // Round 2's success, not the first "released": under load the sandbox's retried REFUND_FAILED
    // can arrive after round 1's REFUND, which books round 1 released until the reversal reopens it
    // (seen in a loaded .ci/run). Round 1 released for good times out here and fails below.
    const p = await gw.waitFor(probe.id, (x) => (x.attempts[0]!.status === 'released' && x.attempts[0]!.release?.round === 2) || x.state === 'needs_review', 25_000);
    const first = p.attempts[0]!;
    expect(first.connector).toBe('adyen_b');
    expect(first.status).toBe('released');
    const entry = (await entryOf(adyen, first.id))!;
    expect([entry.captured, entry.refunded]).toEqual([3000, 3000]);
    expect(first.release).toMatchObject({ kind: 'refund', round: 2, status: 'succeeded' });
    expect(await releaseKeys(p.id)).toHaveLength(2);
    expect(await heldBalance(p.id)).toBe(0);
  });

  it('a release refused past the bound parks the payment for review with a release_failed discrepancy', async () => {
    await stripe.scheduleFault({ op: 'release', mode: 'release_refused', count: 3 });
    const p0 = await gw.pay({ amount: 800, currency: 'USD', paymentMethod: { test_card: '4000000000000515' } });
    const p = await gw.waitFor(p0.id, (x) => x.state === 'needs_review', 20_000);
    expect(p.attempts[0]!.status).toBe('review');
    expect(p.attempts[0]!.release).toMatchObject({ round: 3, status: 'review', reviewFrom: 'declined' });
    expect(await releaseKeys(p.id)).toHaveLength(3);
    const d = await gw.db.db.execute<{ kind: string }>(sql`SELECT kind FROM discrepancies WHERE payment_id = ${p.id}`);
    expect(d.rows.map((r) => r.kind)).toContain('release_failed');
    // The authorization still stands at the provider: nothing was hidden.
    expect((await entryOf(stripe, p.attempts[0]!.id))!.cancelled).toBe(false);
  });
});
