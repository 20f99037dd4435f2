// Issue 41 §4, end to end through the API, the workers and the sandboxes: a void (or capture) the
// provider performed, whose answer was lost and never stored under its key (the sandbox's
// already_done fault), is resent with the same key and refused "already in that state" (Stripe 400
// payment_intent_unexpected_state with the PaymentIntent embedded). The gateway must take that as an
// answer: look the PaymentIntent up and land the payment in voided / captured at once — not resend,
// park it in needs_review, refuse the merchant's next void with 409, and wait for a webhook.
// Stripe's webhooks are off here, so only the lookup can settle it.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentResource } from '../../../src/api/resource-schemas.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { until } from '../helpers/until.ts';

const WAIT_MS = 5_000;
// The shipped routes: EUR from 100,000 goes to Adyen first, the rest of EUR to Stripe.
const AMOUNT = { stripe: 5000, adyen: 100_000 } as const;

let api: ApiGateway;
let sandboxes: Record<'stripe' | 'adyen', SandboxControl>;

beforeAll(async () => {
  api = await startApiGateway('already_done', { modificationWaitMs: WAIT_MS, authorizationWaitMs: WAIT_MS, log: () => undefined }, readFileSync('config/switchyard.yaml', 'utf8'), {}, true);
  const find = (account: string): SandboxControl => api.gw.rt.sandboxes.find((s) => s.account === account)!;
  sandboxes = { stripe: find('stripe_eu'), adyen: find('adyen_eu') };
});
afterAll(async () => api?.close());

async function authorized(on: 'stripe' | 'adyen'): Promise<string> {
  const created = await api.call('POST', '/v1/payments', { body: paymentBody({ amount: AMOUNT[on] }) });
  const p = paymentResource.parse(created.json);
  expect(p.status).toBe('authorized');
  expect(p.connector).toBe(on === 'stripe' ? 'stripe_eu' : 'adyen_eu');
  return p.id;
}

async function states(paymentId: string): Promise<string[]> {
  const r = await api.gw.db.pool.query<{ to_state: string }>('SELECT to_state FROM payment_transitions WHERE payment_id = $1 ORDER BY id', [paymentId]);
  return r.rows.map((x) => x.to_state);
}

async function status(paymentId: string): Promise<string> {
  return paymentResource.parse((await api.call('GET', `/v1/payments/${paymentId}`)).json).status;
}

describe('stripe: "already canceled / captured" after a lost answer is resolved by a lookup', () => {
  beforeAll(async () => sandboxes.stripe.configureWebhooks({ enabled: false }));
  afterAll(async () => sandboxes.stripe.configureWebhooks({ enabled: true }));

  it('a void whose answer was lost is voided promptly, never parked, without any webhook', async () => {
    const id = await authorized('stripe');
    await sandboxes.stripe.scheduleFault({ op: 'void', mode: 'already_done', count: 1 });
    const v = await api.call('POST', `/v1/payments/${id}/void`, { body: {} });
    expect(v.status, v.text).toBe(200);
    expect(v.json.status).toBe('voided');
    expect(await states(id)).not.toContain('needs_review');
    const ledger = (await sandboxes.stripe.ledger()).filter((e) => e.payment_id === id);
    expect(ledger).toMatchObject([{ cancelled: true, captured: 0 }]);
  });

  it('a capture whose answer was lost is captured promptly, never parked', async () => {
    const id = await authorized('stripe');
    await sandboxes.stripe.scheduleFault({ op: 'capture', mode: 'already_done', count: 1 });
    const c = await api.call('POST', `/v1/payments/${id}/capture`, { body: {} });
    expect(c.status, c.text).toBe(200);
    const p = paymentResource.parse(c.json);
    expect(p).toMatchObject({ status: 'captured', amount_captured: AMOUNT.stripe });
    expect(p.captures).toEqual([expect.objectContaining({ status: 'succeeded', amount: AMOUNT.stripe })]);
    expect(await states(id)).not.toContain('needs_review');
    expect((await sandboxes.stripe.ledger()).filter((e) => e.payment_id === id)).toMatchObject([{ captured: AMOUNT.stripe }]);
  });
});

describe('adyen: the second cancel is refused "already cancelled" by notification; the first one\'s success settles it', () => {
  it('a void whose answer was lost lands in voided, never parked, never back to authorized', async () => {
    const id = await authorized('adyen');
    // Notifications a little late, so the same-key resend goes out before the first cancel's success is applied.
    await sandboxes.adyen.configureWebhooks({ delayMs: 4_000 });
    try {
      await sandboxes.adyen.scheduleFault({ op: 'void', mode: 'already_done', count: 1 });
      await api.call('POST', `/v1/payments/${id}/void`, { body: {} });
      await until(() => status(id), (s) => s === 'voided', 'the Adyen void to be confirmed', 20_000);
      // Both cancels' notifications were taken in (the second one's "already cancelled" too), and nothing moved the payment back.
      await until(async () => (await api.gw.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM inbound_events WHERE payment_id = $1 AND outcome <> 'pending' AND provider_event_id LIKE 'CANCELLATION:%'`, [id])).rows[0]!.n, (n) => Number(n) >= 2, 'both CANCELLATION notifications', 20_000);
    } finally {
      await sandboxes.adyen.configureWebhooks({ delayMs: 0 });
    }
    const path = await states(id);
    expect(path).not.toContain('needs_review');
    expect(path.slice(path.indexOf('voiding'))).not.toContain('authorized');
    expect(await status(id)).toBe('voided');
  });
});
