// Captures as each connector really does them (issue 43), over HTTP against both sandboxes:
// - Adyen without multiple partial captures (the account default): final: false is refused with 422
//   multicapture_unsupported naming the routed connector, nothing written; a final partial capture
//   releases the rest, and a further capture's refusal says so.
// - Adyen with `multicapture: true`: final: false leaves the rest capturable; a final partial capture
//   is the capture followed by a /cancels of the remainder, released only on its CANCELLATION.
// - Stripe (multicapture on the charge): final: false leaves the rest open; a final capture releases it.
// - Automatic capture: the capture is listed and the attempt says captured.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentResource, problemResource } from '../../../src/api/resource-schemas.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { until } from '../observability/helpers.ts';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';

const ADYEN = (name: string, multicapture: boolean): string => `
  ${name}:
    type: adyen
    endpoint: sandbox
    api_key: sandbox
    merchant_account: SwitchyardSandbox_${name}
    hmac_keys: ["44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"]
    basic_auth: { username: switchyard, password: sandbox }
    timeout_ms: 1500${multicapture ? '\n    multicapture: true' : ''}`;

const CONFIG = `
connectors:${ADYEN('adyen_a', false)}${ADYEN('adyen_mc', true)}
  stripe_b:
    type: stripe
    secret_key: sk_test_b
    webhook_secrets: [whsec_b]
    timeout_ms: 1500
routing:
  rules:
    - { name: to_stripe, when: { metadata: { psp: stripe_b } }, priority: [stripe_b] }
    - { name: to_adyen_mc, when: { metadata: { psp: adyen_mc } }, priority: [adyen_mc] }
  default: { priority: [adyen_a] }
  max_attempts: 1
`;

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('captures_per_connector', { authorizationWaitMs: 5_000, modificationWaitMs: 8_000 }, CONFIG, {}, true);
});
afterAll(async () => api?.close());

const sandbox = (account: string): SandboxControl => api.gw.rt.sandboxes.find((s) => s.account === account)!;
const getPayment = async (id: string) => paymentResource.parse((await api.call('GET', `/v1/payments/${id}`)).json);
const capture = (id: string, body: Record<string, unknown>) => api.call('POST', `/v1/payments/${id}/capture`, { body });

async function authorized(psp: string, captureMethod: 'manual' | 'automatic' = 'manual') {
  const created = await api.call('POST', '/v1/payments', { body: paymentBody({ amount: 1000, capture_method: captureMethod, metadata: { psp } }) });
  expect(created.status, created.text).toBe(201);
  const p = paymentResource.parse(created.json);
  expect(p.connector).toBe(psp);
  return p;
}

async function providerEntry(account: string, psp: string | null) {
  return (await sandbox(account).ledger()).find((e) => e.id === psp);
}

describe('Adyen without multiple partial captures (default)', () => {
  it('final: false is refused synchronously: 422 multicapture_unsupported naming the connector, nothing written or sent', async () => {
    const p = await authorized('adyen_a');
    expect(p).toMatchObject({ amount_capturable: 1000, amount_released: 0 });
    const r = await capture(p.id, { amount: 400, final: false });
    expect(r.status, r.text).toBe(422);
    const problem = problemResource.parse(r.json);
    expect(problem.code).toBe('multicapture_unsupported');
    expect(problem.detail).toContain('adyen_a');
    expect(problem.errors).toEqual([expect.objectContaining({ path: 'final' })]);
    const after = await getPayment(p.id);
    expect(after).toMatchObject({ status: 'authorized', captures: [], amount_capturable: 1000 });
    expect(await providerEntry('adyen_a', p.attempts[0]!.provider_reference)).toMatchObject({ captured: 0 });
  });

  it('a final partial capture releases the rest; a further capture is refused saying so', async () => {
    const p = await authorized('adyen_a');
    const r = await capture(p.id, { amount: 600 });
    expect(r.status, r.text).toBe(200);
    expect(paymentResource.parse(r.json)).toMatchObject({ status: 'captured', amount_captured: 600, amount_capturable: 0, amount_released: 400 });
    const again = await capture(p.id, { amount: 100 });
    expect(again.status).toBe(409);
    expect(problemResource.parse(again.json).detail).toBe('cannot capture a payment that is captured: its final capture released the remaining 400 EUR');
  });
});

describe('Adyen with multicapture: true', () => {
  it('final: false leaves the rest open; the final partial capture is followed by a cancel of the remainder, released on its CANCELLATION', async () => {
    const p = await authorized('adyen_mc');
    const first = await capture(p.id, { amount: 300, final: false });
    expect(first.status, first.text).toBe(200);
    expect(paymentResource.parse(first.json)).toMatchObject({ status: 'captured', amount_captured: 300, amount_capturable: 700, amount_released: 0 });
    const second = await capture(p.id, { amount: 200, final: false });
    expect(second.status, second.text).toBe(200);
    expect(paymentResource.parse(second.json)).toMatchObject({ amount_captured: 500, amount_capturable: 500 });
    const last = await capture(p.id, { amount: 100, final: true });
    expect(last.status, last.text).toBe(200);
    expect(paymentResource.parse(last.json)).toMatchObject({ status: 'captured', amount_captured: 600, amount_capturable: 0 });
    const released = await until(() => getPayment(p.id), (x) => x.amount_released === 400);
    expect(released.captures.map((c) => [c.amount, c.final, c.status])).toEqual([[300, false, 'succeeded'], [200, false, 'succeeded'], [100, true, 'succeeded']]);
    // At the provider: three captures, the rest cancelled (a CANCELLATION that succeeded), the payment not cancelled.
    const entry = await providerEntry('adyen_mc', p.attempts[0]!.provider_reference);
    expect(entry).toMatchObject({ authorized: 1000, captured: 600, cancelled: false });
    const ops = await api.gw.db.pool.query<{ op: string; amount: number }>(`SELECT payload->>'op' AS op, (payload->>'amount')::int AS amount FROM outbox WHERE payment_id = $1 AND kind = 'provider_call' ORDER BY id`, [p.id]);
    expect(ops.rows.map((o) => o.op)).toEqual(['authorize', 'capture', 'capture', 'capture', 'void']);
    expect(ops.rows.at(-1)!.amount).toBe(400);
    const again = await capture(p.id, { amount: 100 });
    expect(again.status).toBe(409);
    expect(problemResource.parse(again.json).detail).toBe('cannot capture a payment that is captured: its final capture released the remaining 400 EUR');
  });

  it('a remainder cancel the provider refuses releases nothing (amount_released stays 0) and is a release_failed finding', async () => {
    const p = await authorized('adyen_mc');
    await sandbox('adyen_mc').scheduleFault({ op: 'void', mode: 'release_fail_later', count: 1 });
    expect((await capture(p.id, { amount: 700 })).status).toBe(200);
    const findings = await until(
      async () => (await api.gw.db.pool.query<{ kind: string }>(`SELECT kind FROM discrepancies WHERE payment_id = $1`, [p.id])).rows,
      (rows) => rows.length > 0,
    );
    expect(findings.map((f) => f.kind)).toEqual(['release_failed']);
    expect(await getPayment(p.id)).toMatchObject({ status: 'captured', amount_captured: 700, amount_released: 0, amount_capturable: 0 });
    await sandbox('adyen_mc').clearFaults();
  });
});

describe('Stripe (multicapture on the charge)', () => {
  it('final: false leaves the rest open; the final capture releases the rest at once', async () => {
    const p = await authorized('stripe_b');
    const first = await capture(p.id, { amount: 300, final: false });
    expect(first.status, first.text).toBe(200);
    expect(paymentResource.parse(first.json)).toMatchObject({ amount_captured: 300, amount_capturable: 700, amount_released: 0 });
    const last = await capture(p.id, { amount: 200 });
    expect(paymentResource.parse(last.json)).toMatchObject({ status: 'captured', amount_captured: 500, amount_capturable: 0, amount_released: 500 });
  });
});

describe.each(['stripe_b', 'adyen_a'])('automatic capture (%s)', (psp) => {
  it('lists the capture made with the approval, and the attempt says captured', async () => {
    const p = await authorized(psp, 'automatic');
    expect(p).toMatchObject({ status: 'captured', amount_captured: 1000, amount_capturable: 0 });
    expect(p.attempts[0]!.status).toBe('captured');
    expect(p.captures).toEqual([expect.objectContaining({ object: 'capture', amount: 1000, final: true, status: 'succeeded', provider_reference: p.attempts[0]!.provider_reference })]);
    expect((await getPayment(p.id)).captures[0]!.id).toBe(p.captures[0]!.id);
  });
});
