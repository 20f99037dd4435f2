// A void while the customer is at the 3-D Secure page (issue 43), over HTTP against both sandboxes:
// the attempt is cancelled at the provider (Stripe: the PaymentIntent canceled; Adyen: /cancels,
// settled by its CANCELLATION notification) and the payment ends voided; the gateway's
// authentication page then sends the customer back to the merchant, never on to the provider.
// A cancel the provider refuses returns the payment to requires_action with its page and original
// expires_at, never to authorized.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentResource, problemResource } from '../../../src/api/resource-schemas.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';

const CHALLENGE_CARD = '4000002760003184';

function config(): string {
  return `
connectors:
  adyen_a:
    type: adyen
    endpoint: sandbox
    api_key: sandbox
    merchant_account: SwitchyardSandbox
    hmac_keys: ["44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"]
    basic_auth: { username: switchyard, password: sandbox }
    timeout_ms: 1500
  stripe_b:
    type: stripe
    secret_key: sk_test_b
    webhook_secrets: [whsec_b]
    timeout_ms: 1500
routing:
  rules:
    - { name: to_stripe, when: { metadata: { psp: stripe } }, priority: [stripe_b] }
  default: { priority: [adyen_a] }
  max_attempts: 1
`;
}

let api: ApiGateway;
const RETURN = 'https://shop.example/done';

beforeAll(async () => {
  api = await startApiGateway('void_requires_action', { authorizationWaitMs: 5_000, modificationWaitMs: 8_000 }, config(), {}, true);
});
afterAll(async () => api?.close());

const sandbox = (account: string): SandboxControl => api.gw.rt.sandboxes.find((s) => s.account === account)!;
const getPayment = async (id: string) => paymentResource.parse((await api.call('GET', `/v1/payments/${id}`)).json);

async function waitingForCustomer(psp: 'adyen' | 'stripe') {
  const created = await api.call('POST', '/v1/payments', {
    body: paymentBody({ amount: 1500, payment_method: { type: 'card', test_card: CHALLENGE_CARD }, return_url: RETURN, metadata: { psp } }),
  });
  expect(created.status, created.text).toBe(201);
  const p = paymentResource.parse(created.json);
  expect(p.status).toBe('requires_action');
  expect(p.attempts.map((a) => a.connector)).toEqual([psp === 'adyen' ? 'adyen_a' : 'stripe_b']);
  return p;
}

describe.each(['stripe', 'adyen'] as const)('void in requires_action (%s)', (psp) => {
  const account = psp === 'adyen' ? 'adyen_a' : 'stripe_b';

  it('cancels at the provider and ends voided; the authentication page then says it is over', async () => {
    const p = await waitingForCustomer(psp);
    const voided = await api.call('POST', `/v1/payments/${p.id}/void`, { body: {} });
    expect(voided.status, voided.text).toBe(200);
    const after = paymentResource.parse(voided.json);
    expect(after).toMatchObject({ status: 'voided', next_action: null, amount_captured: 0 });
    expect(after.attempts[0]).toMatchObject({ status: 'abandoned', proof: 'fenced' });
    // The provider holds it cancelled, nothing authorized.
    const entry = (await sandbox(account).ledger()).find((e) => e.reference === p.attempts[0]!.id || e.id === p.attempts[0]!.provider_reference);
    expect(entry).toMatchObject({ authorized: 0, captured: 0 });
    expect(entry?.status.toLowerCase()).toMatch(/cancel/);
    // The page says it is over; it never redirects to the merchant (only a return with the provider's evidence does, issue 42).
    const page = await fetch(new URL(p.next_action!.url, api.url), { redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(page.headers.get('location')).toBeNull();
    expect(await page.text()).toContain('no longer pending');
    // The same void again with a new key: a finished operation is a 409 naming the state (docs/api.md), nothing more happens.
    const again = await api.call('POST', `/v1/payments/${p.id}/void`, { body: {} });
    expect(again.status, again.text).toBe(409);
    expect(problemResource.parse(again.json)).toMatchObject({ code: 'invalid_state' });
    expect((await getPayment(p.id)).status).toBe('voided');
  });

  it('a cancel the provider refuses returns the payment to requires_action with its page and original expires_at, never authorized', async () => {
    const p = await waitingForCustomer(psp);
    await sandbox(account).scheduleFault({ op: 'void', mode: 'release_fail_later', count: 1 });
    const refused = await api.call('POST', `/v1/payments/${p.id}/void`, { body: {} });
    expect([402, 409], refused.text).toContain(refused.status);
    const problem = problemResource.parse(refused.json);
    expect(problem.code).toMatch(/^void_(declined|rejected)$/);
    const after = await getPayment(p.id);
    expect(after.status).toBe('requires_action');
    expect(after.next_action).toEqual(p.next_action);
    expect(after.attempts[0]!.status).toBe('authenticating');
    await sandbox(account).clearFaults();
  });
});
