// Stripe's one-call authorization through the whole gateway (issue 26): one provider request per
// authorization, a lost answer found by the list lookup, a card that needs authentication declined
// instead of stranded, and payments persisted in the former two-call shape still authorized and
// resolved (prepare, then confirm; a lost confirm found by its PaymentIntent id).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectorPolicy } from '../../../src/core/policy.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

let gw: TestGateway;
let a: SandboxControl;
let b: SandboxControl;

beforeAll(async () => {
  gw = await startTestGateway('jobs_one_call', twoStripeConfig());
  a = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
  b = gw.rt.sandboxes.find((s) => s.account === 'stripe_b')!;
});
afterAll(async () => gw?.close());

const entriesOf = async (sb: SandboxControl, attemptId: string) => (await sb.ledger()).filter((e) => e.reference === attemptId);

async function withoutWebhooks<T>(run: () => Promise<T>): Promise<T> {
  await a.configureWebhooks({ enabled: false });
  try {
    return await run();
  } finally {
    await a.configureWebhooks({ enabled: true });
  }
}

/** Creates one payment as the gateway did before issue 26: its Stripe attempt starts with a prepare call. */
async function payInTheTwoCallShape(): Promise<string> {
  const envs = gw.rt.envs;
  const current = envs.current.bind(envs);
  envs.current = (maxAttempts) => {
    const env = current(maxAttempts);
    const stripe = env.policies['stripe_a']!;
    const twoCall: ConnectorPolicy = { ...stripe, capabilities: { ...stripe.capabilities, preparesAuthorization: true, queryByMerchantReference: false } };
    return { ...env, policies: { ...env.policies, stripe_a: twoCall } };
  };
  try {
    const p = await gw.pay();
    expect(p.attempts[0]).toMatchObject({ status: 'preparing', prepareCalls: 1, sends: 0 });
    return p.id;
  } finally {
    envs.current = current;
  }
}

describe('one call', () => {
  it('authorizes with one provider request, no prepare', async () => {
    const before = a.requestsReceived();
    const p = await gw.waitFor((await gw.pay()).id, settled);
    expect(p.state).toBe('authorized');
    expect(p.attempts).toHaveLength(1);
    expect(p.attempts[0]).toMatchObject({ prepareCalls: 0, sends: 1 });
    expect(p.attempts[0]!.providerRef).toMatch(/^pi_/);
    expect(a.requestsReceived() - before).toBe(1);
    expect(await entriesOf(a, p.attempts[0]!.id)).toMatchObject([{ authorized: 1000, id: p.attempts[0]!.providerRef }]);
  });

  it('a lost answer is found by the list lookup: authorized on the same connector, never failed over', async () => {
    // Processed, then the connection dropped (and the SDK's own retry dropped too): no PaymentIntent id.
    // No webhooks: the lookup, not the provider's event, must find it.
    await a.scheduleFault({ op: 'authorize', mode: 'accept_then_drop', count: 2 });
    const p = await withoutWebhooks(async () => gw.waitFor((await gw.pay()).id, settled, 30_000));
    expect(p.state).toBe('authorized');
    expect(p.attempts.map((x) => [x.connector, x.sends, x.queries])).toEqual([['stripe_a', 1, 1]]);
    expect(await entriesOf(a, p.attempts[0]!.id)).toMatchObject([{ authorized: 1000, id: p.attempts[0]!.providerRef }]);
  });

  it('a card that needs customer authentication is declined authentication_required (soft, not retried elsewhere)', async () => {
    const p = await gw.waitFor((await gw.pay({ paymentMethod: { tokens: { stripe_a: 'pm_card_authenticationRequired', stripe_b: 'pm_card_authenticationRequired' } } })).id, settled);
    expect(p.state).toBe('declined');
    expect(p.attempts.map((x) => [x.connector, x.declineCode, x.declineClass])).toEqual([['stripe_a', 'authentication_required', 'soft']]);
    expect((await entriesOf(a, p.attempts[0]!.id)).every((e) => e.authorized === 0)).toBe(true);
    expect(await entriesOf(b, p.attempts[0]!.id)).toHaveLength(0);
  });
});

describe('payments persisted in the two-call shape', () => {
  it('a prepared attempt is confirmed as before: two requests, authorized', async () => {
    const before = a.requestsReceived();
    const p = await gw.waitFor(await payInTheTwoCallShape(), settled);
    expect(p.state).toBe('authorized');
    expect(p.attempts[0]).toMatchObject({ prepareCalls: 1, sends: 1 });
    expect(a.requestsReceived() - before).toBe(2);
    expect(await entriesOf(a, p.attempts[0]!.id)).toMatchObject([{ authorized: 1000, id: p.attempts[0]!.providerRef }]);
  });

  it('a prepared attempt whose confirm answer is lost is resolved by its PaymentIntent id', async () => {
    await a.scheduleFault({ op: 'authorize', mode: 'accept_then_drop', count: 2 });
    const p = await withoutWebhooks(async () => gw.waitFor(await payInTheTwoCallShape(), settled, 30_000));
    expect(p.state).toBe('authorized');
    expect(p.attempts.map((x) => [x.connector, x.prepareCalls, x.sends, x.queries])).toEqual([['stripe_a', 1, 1, 1]]);
    expect(await entriesOf(a, p.attempts[0]!.id)).toMatchObject([{ authorized: 1000, id: p.attempts[0]!.providerRef }]);
  });
});
