// Authentication (missing, wrong, rotated keys) and tenant isolation: another merchant's
// payment or refund is not found, for reads and for writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemResource } from '../../../src/api/resource-schemas.ts';
import { rotateMerchantKey } from '../../../src/store/merchants.ts';
import { paymentBody, rowCounts, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('api_isolation');
});
afterAll(async () => api?.close());

describe('authentication', () => {
  it('missing, malformed and wrong keys are 401 problems and write nothing', async () => {
    const before = await rowCounts(api.gw);
    for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer sk_sy_not-a-real-key' }, { authorization: `Bearer ${api.apiKey}x` }]) {
      const r = await api.call('POST', '/v1/payments', { key: null, headers, body: paymentBody() });
      expect(r.status).toBe(401);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(problemResource.parse(r.json)).toMatchObject({ code: 'unauthorized', status: 401 });
    }
    expect((await api.call('GET', '/v1/payments', { key: null })).status).toBe(401);
    expect(await rowCounts(api.gw)).toEqual(before);
  });

  it('a rotated key stops working at once; the new one works', async () => {
    const m = await api.newMerchant('rotating');
    expect((await api.call('GET', '/v1/payments', { key: m.apiKey })).status).toBe(200);
    const fresh = await rotateMerchantKey(api.gw.rt.database.db, m.id);
    expect((await api.call('GET', '/v1/payments', { key: m.apiKey })).status).toBe(401);
    expect((await api.call('GET', '/v1/payments', { key: fresh! })).status).toBe(200);
  });
});

describe('tenant isolation', () => {
  it("another merchant's payment and refund are 404 for reads and writes, and nothing changes", async () => {
    const p = (await api.call('POST', '/v1/payments', { body: paymentBody({ capture_method: 'automatic' }) })).json;
    const refund = (await api.call('POST', `/v1/payments/${p.id}/refunds`, { body: { amount: 100 } })).json;
    const intruder = await api.newMerchant('intruder');
    const before = await rowCounts(api.gw);
    const attempts = [
      await api.call('GET', `/v1/payments/${p.id}`, { key: intruder.apiKey }),
      await api.call('GET', `/v1/payments/${p.id}/timeline`, { key: intruder.apiKey }),
      await api.call('GET', `/v1/refunds/${refund.id}`, { key: intruder.apiKey }),
      await api.call('POST', `/v1/payments/${p.id}/capture`, { key: intruder.apiKey, body: {} }),
      await api.call('POST', `/v1/payments/${p.id}/void`, { key: intruder.apiKey }),
      await api.call('POST', `/v1/payments/${p.id}/refunds`, { key: intruder.apiKey, body: { amount: 1 } }),
    ];
    for (const r of attempts) expect([r.status, r.json.code]).toEqual([404, 'not_found']);
    const after = await rowCounts(api.gw);
    // Only the intruder's stored 404 answers (idempotency records) were written.
    expect({ ...after, idempotency_records: 0 }).toEqual({ ...before, idempotency_records: 0 });
    const list = await api.call('GET', '/v1/payments', { key: intruder.apiKey });
    expect(list.json.data).toEqual([]);
    // The owner still sees its payment unchanged.
    expect((await api.call('GET', `/v1/payments/${p.id}`)).json).toMatchObject({ amount_refunded: 100 });
  });

  it('an unknown id is the same 404', async () => {
    const r = await api.call('GET', '/v1/payments/pay_00000000000000000000000000');
    expect([r.status, r.json.code]).toEqual([404, 'not_found']);
    expect((await api.call('GET', '/v1/nothing-here')).json.code).toBe('not_found');
  });
});
