// Issue 41 §5, end to end: Adyen's technical cancel is the gateway's proof for an attempt whose
// /payments answer never came, but Adyen does not document that it stops an authorization still in
// flight. The Adyen sandbox in that behaviour (inFlightAfterCancel: authorised) acknowledges the
// cancel and completes the held /payments afterwards, with its AUTHORISATION notification. The
// payment has failed over by then; the late authorization is live money at a second provider and
// is released at once (cancel by its pspReference; refund under automatic capture, booked held for
// release meanwhile), with a late_approval discrepancy. In the default behaviour nothing is released.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CORE_POLICY } from '../../../src/core/policy.ts';
import type { Payment } from '../../../src/core/payment.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { startWebhookGateway } from '../webhooks/helpers.ts';
import type { WebhookGateway } from '../webhooks/helpers.ts';
import { until } from '../helpers/until.ts';

const HMAC = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
/** How long the sandbox holds the first /payments: past the client's timeout, the resends (704) and the fence. */
const HOLD_MS = 4_000;
let gw: WebhookGateway;
let stripe: SandboxControl;
let adyen: SandboxControl;

beforeAll(async () => {
  gw = await startWebhookGateway('jobs_tc_in_flight', `
connectors:
  stripe_a:
    type: stripe
    endpoint: sandbox
    secret_key: sk_test_tcf
    webhook_secrets: [whsec_tcf]
    breaker: { volume_threshold: 50 }
  adyen_b:
    type: adyen
    endpoint: sandbox
    api_key: ak_tcf
    merchant_account: TcfMerchant
    hmac_keys: [${HMAC}]
    basic_auth: { username: tcf, password: tcf }
    timeout_ms: 500
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
    // Resends of the unknown /payments a few hundred ms apart: the fence goes out while it is still held.
    core: { ...DEFAULT_CORE_POLICY, backoffBaseMs: 100, backoffCapMs: 1_000 },
  });
  stripe = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
  adyen = gw.rt.sandboxes.find((s) => s.account === 'adyen_b')!;
});
afterAll(async () => gw?.close());

const entryOf = async (sb: SandboxControl, attemptId: string) => (await sb.ledger()).find((e) => e.reference === attemptId);
const discrepancies = async (paymentId: string): Promise<string[]> =>
  (await gw.db.db.execute<{ kind: string }>(sql`SELECT kind FROM discrepancies WHERE payment_id = ${paymentId} ORDER BY kind`)).rows.map((r) => r.kind);
const heldPostings = async (paymentId: string): Promise<{ credited: number; balance: number }> => {
  const r = await gw.db.db.execute<{ credited: string | null; balance: string | null }>(sql`
    SELECT sum(CASE WHEN e.direction = 'credit' THEN e.amount ELSE 0 END) AS credited,
           sum(CASE WHEN e.direction = 'credit' THEN e.amount ELSE -e.amount END) AS balance
      FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
     WHERE t.payment_id = ${paymentId} AND e.account LIKE 'connector:%:held_for_release'`);
  return { credited: Number(r.rows[0]?.credited ?? 0), balance: Number(r.rows[0]?.balance ?? 0) };
};

/**
 * EUR payments whose Adyen /payments are held past the client's timeout (created together, so each
 * first send meets one firing before any resend): fenced by technical cancel, then failed over to Stripe.
 */
async function failedOverWhileHeld(payments: readonly { captureMethod: 'manual' | 'automatic'; amount: number }[]): Promise<Payment[]> {
  await adyen.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: HOLD_MS, process: 'after', count: payments.length });
  const created = await Promise.all(payments.map((o) => gw.pay({ ...o, currency: 'EUR' })));
  return Promise.all(created.map(async (p0) => {
    const p = await gw.waitFor(p0.id, (x) => x.attempts.length === 2 && x.attempts[1]!.status === 'authorized', 15_000);
    const [first, second] = p.attempts;
    expect([first!.connector, first!.status, first!.proof, first!.providerRef]).toEqual(['adyen_b', 'abandoned', 'fenced', null]);
    expect(second!.connector).toBe('stripe_a');
    return p;
  }));
}

/** The late authorization was given back at once, and the provider's own ledger says so. */
async function releasedAtOnce(p: Payment, captureMethod: 'manual' | 'automatic', amount: number): Promise<void> {
  const first = p.attempts[0]!.id;
  const done = await gw.waitFor(p.id, (x) => x.attempts[0]!.status === 'released' || x.state === 'needs_review', 20_000);
  expect(done.state).toBe(captureMethod === 'manual' ? 'authorized' : 'captured');
  expect(done.attempts[0]).toMatchObject({ status: 'released', release: { kind: captureMethod === 'manual' ? 'void' : 'refund', round: 1, status: 'succeeded', amount } });
  // The provider's own ledger: the late authorization was given back; Stripe holds the payment.
  const late = (await entryOf(adyen, first))!;
  expect(late.id).toBe(done.attempts[0]!.providerRef);
  expect(late.authorized).toBe(amount);
  if (captureMethod === 'manual') expect([late.cancelled, late.captured]).toEqual([true, 0]);
  else expect([late.captured, late.refunded]).toEqual([amount, amount]);
  expect((await entryOf(stripe, done.attempts[1]!.id))!.authorized).toBe(amount);
  expect(await discrepancies(p.id)).toEqual(['late_approval']);
  // Under automatic capture the late capture was booked held for release, and moved out when the refund was confirmed.
  expect(await heldPostings(p.id)).toEqual(captureMethod === 'manual' ? { credited: 0, balance: 0 } : { credited: amount, balance: 0 });
}

describe('an Adyen authorization in flight when its technical cancel is acknowledged', () => {
  it('completes after the failover: released at once (manual capture: cancelled; automatic: refunded), the Adyen ledger shows it, a late_approval discrepancy', async () => {
    await adyen.configureTechnicalCancel!('authorised');
    try {
      const plans = [{ captureMethod: 'manual', amount: 1500 }, { captureMethod: 'automatic', amount: 2500 }] as const;
      const ps = await failedOverWhileHeld(plans);
      await Promise.all(ps.map((p, i) => releasedAtOnce(p, plans[i]!.captureMethod, plans[i]!.amount)));
    } finally {
      await adyen.configureTechnicalCancel!('cancelled');
    }
  });

  it('in the default behaviour the held /payments is answered Cancelled: nothing to release, no discrepancy', async () => {
    const [p] = await failedOverWhileHeld([{ captureMethod: 'manual', amount: 1700 }]);
    if (p === undefined) throw new Error('no payment');
    const first = p.attempts[0]!.id;
    const late = await until(() => entryOf(adyen, first), (e) => e !== undefined, 'the held /payments to run', 10_000);
    expect(late).toMatchObject({ authorized: 0, status: 'Cancelled' });
    // Its AUTHORISATION (success=false), once processed, changed nothing.
    const processed = sql`SELECT count(*)::text AS n FROM inbound_events WHERE event->>'attemptId' = ${first} AND event->>'kind' = 'authorization' AND outcome <> 'pending'`;
    await until(async () => (await gw.db.db.execute<{ n: string }>(processed)).rows[0]?.n ?? '0', (n) => Number(n) > 0, 'the late AUTHORISATION to be processed', 10_000);
    const after = await gw.waitFor(p.id, () => true);
    expect(after.attempts[0]).toMatchObject({ status: 'abandoned', proof: 'fenced', release: null });
    expect(await discrepancies(p.id)).toEqual([]);
  });
});
