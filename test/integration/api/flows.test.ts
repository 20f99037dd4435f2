// Full merchant flows over HTTP against the Stripe sandboxes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentResource, problemResource, refundResource, timelineList } from '../../../src/api/resource-schemas.ts';
import { paymentBody, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('api_flows');
});
afterAll(async () => api?.close());

describe('merchant flows', () => {
  it('authorize -> partial capture -> second capture -> refunds up to the captured amount -> one more refund is refused', async () => {
    const created = await api.call('POST', '/v1/payments', { body: paymentBody({ amount: 5000, metadata: { order: '42' } }) });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toMatch(/^application\/json/);
    const p = paymentResource.parse(created.json);
    expect(p).toMatchObject({ object: 'payment', status: 'authorized', amount: 5000, currency: 'EUR', amount_authorized: 5000, amount_captured: 0, connector: 'stripe_a', metadata: { order: '42' } });
    expect(p.attempts).toHaveLength(1);
    expect(p.attempts[0]).toMatchObject({ connector: 'stripe_a', status: 'authorized', outcome: 'succeeded', proof: null, decline_code: null });
    expect(p.attempts[0]!.provider_reference).toMatch(/^pi_/);
    expect(p.routing).toMatchObject({ rule: 'default', candidates: ['stripe_a', 'stripe_b'], skipped: [] });

    const first = await api.call('POST', `/v1/payments/${p.id}/capture`, { body: { amount: 2000, final: false } });
    expect(first.status).toBe(200);
    expect(paymentResource.parse(first.json)).toMatchObject({ status: 'captured', amount_captured: 2000 });
    const second = await api.call('POST', `/v1/payments/${p.id}/capture`, { body: {} });
    expect(second.status).toBe(200);
    expect(second.json).toMatchObject({ status: 'captured', amount_captured: 5000 });

    const r1 = await api.call('POST', `/v1/payments/${p.id}/refunds`, { body: { amount: 3000, reason: 'requested_by_customer' } });
    expect(r1.status).toBe(201);
    const refund = refundResource.parse(r1.json);
    expect(refund).toMatchObject({ object: 'refund', payment_id: p.id, amount: 3000, currency: 'EUR', status: 'succeeded', reason: 'requested_by_customer' });
    const r2 = await api.call('POST', `/v1/payments/${p.id}/refunds`, { body: {} });
    expect(r2.status).toBe(201);
    expect(r2.json).toMatchObject({ amount: 2000, status: 'succeeded' });
    const over = await api.call('POST', `/v1/payments/${p.id}/refunds`, { body: { amount: 1 } });
    expect(over.status).toBe(422);
    expect(over.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(over.json).toMatchObject({ status: 422, code: 'amount_exceeds_captured', errors: [{ path: 'amount' }] });

    const got = await api.call('GET', `/v1/refunds/${refund.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(r1.json);
    const final = await api.call('GET', `/v1/payments/${p.id}`);
    expect(final.json).toMatchObject({ status: 'captured', amount_captured: 5000, amount_refunded: 5000 });

    const timeline = timelineList.parse((await api.call('GET', `/v1/payments/${p.id}/timeline`)).json);
    expect(timeline.data[0]).toMatchObject({ from: 'created', origin: 'api' });
    expect(timeline.data.some((t) => t.origin === 'worker' && t.to === 'authorized')).toBe(true);
    const refundInputs = timeline.data.filter((t) => (t.input as { type: string }).type === 'refund_requested');
    // The refused third refund is on the timeline too, as an ignored input with its code.
    expect(refundInputs.map((t) => [t.outcome, t.code])).toEqual([['applied', null], ['applied', null], ['ignored', 'amount_exceeds_captured']]);
  });

  it('capturing more than authorized is refused with amount_exceeds_authorized', async () => {
    const p = (await api.call('POST', '/v1/payments', { body: paymentBody({ amount: 1000 }) })).json;
    const r = await api.call('POST', `/v1/payments/${p.id}/capture`, { body: { amount: 1001 } });
    expect(r.status).toBe(422);
    expect(r.json.code).toBe('amount_exceeds_authorized');
  });

  it('voids', async () => {
    const p = (await api.call('POST', '/v1/payments', { body: paymentBody() })).json;
    const v = await api.call('POST', `/v1/payments/${p.id}/void`);
    expect(v.status).toBe(200);
    expect(v.json).toMatchObject({ id: p.id, status: 'voided' });
    expect(v.json.attempts[0]?.status).toBe('released');
  });

  it('a decline is a created payment (201), and capturing it is invalid_state', async () => {
    const d = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: '4000000000009979' } }) });
    expect(d.status).toBe(201);
    expect(d.json).toMatchObject({ status: 'declined', amount_authorized: 0 });
    expect(d.json.attempts).toEqual([expect.objectContaining({ status: 'declined', outcome: 'declined', decline_code: 'stolen_card' })]);
    const c = await api.call('POST', `/v1/payments/${d.json.id}/capture`, { body: {} });
    expect(c.status).toBe(409);
    expect(problemResource.parse(c.json)).toMatchObject({ code: 'invalid_state', status: 409, type: 'https://switchyard.dev/problems/invalid_state' });
  });

  it('automatic capture answers 201 captured', async () => {
    const r = await api.call('POST', '/v1/payments', { body: paymentBody({ capture_method: 'automatic', amount: 700 }) });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ status: 'captured', amount_captured: 700 });
  });

  it('fails over when stripe_a is in outage (set through the sandbox control API); the attempts show the proof', async () => {
    const on = await fetch(`${api.url}/_sandbox/stripe_a/outage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ seconds: 30 }) });
    expect(on.status).toBe(200);
    try {
      const r = await api.call('POST', '/v1/payments', { body: paymentBody() });
      expect(r.status).toBe(201);
      expect(r.json).toMatchObject({ status: 'authorized', connector: 'stripe_b' });
      expect(r.json.attempts.map((a) => [a['connector'], a['outcome'], a['proof']])).toEqual([
        ['stripe_a', 'not_sent', 'not_sent'],
        ['stripe_b', 'succeeded', null],
      ]);
    } finally {
      await fetch(`${api.url}/_sandbox/stripe_a/outage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ seconds: 0 }) });
    }
  });

  it('lists newest first with a cursor, filtered by reference and status', async () => {
    const ref = `list-${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await api.call('POST', '/v1/payments', { body: paymentBody({ reference: ref, amount: 100 + i }) })).json.id);
    const page1 = await api.call('GET', `/v1/payments?reference=${ref}&limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.json).toMatchObject({ object: 'list', has_more: true, next_cursor: ids[1] });
    expect(page1.json.data.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[1]]);
    const page2 = await api.call('GET', `/v1/payments?reference=${ref}&limit=2&starting_after=${page1.json.next_cursor}`);
    expect(page2.json).toMatchObject({ has_more: false, next_cursor: null });
    expect(page2.json.data.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    const declined = await api.call('GET', `/v1/payments?reference=${ref}&status=declined`);
    expect(declined.json.data).toEqual([]);
  });

  it('answers 202 with the in-flight payment when the wait ends first, never a guess', async () => {
    const slow = await startApiGateway('api_flows_slow', { authorizationWaitMs: 0 });
    try {
      await slow.gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 1000, count: 1 });
      const r = await slow.call('POST', '/v1/payments', { body: paymentBody() });
      expect(r.status).toBe(202);
      expect(['created', 'authorizing']).toContain(r.json.status);
    } finally {
      await slow.close();
    }
  });

  it('serves health, readiness and the OpenAPI document without auth', async () => {
    expect((await api.call('GET', '/healthz', { key: null })).status).toBe(200);
    const ready = await api.call('GET', '/readyz', { key: null });
    expect(ready.status).toBe(200);
    expect(ready.json.checks).toMatchObject({ postgres: 'ok', redis: 'ok' });
    expect(ready.json.checks['config']).toMatch(/^rs_/);
    const doc = await api.call('GET', '/openapi.json', { key: null });
    expect(doc.json.openapi).toBe('3.1.0');
  });
});
