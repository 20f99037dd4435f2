// Issue 34, part 2: a merchant's number of enabled webhook endpoints is capped (maxEndpointsPerMerchant,
// 3 here). One more is refused with a 409 endpoint_limit_reached problem+json and writes nothing —
// no endpoint, no idempotency record (the same key succeeds once an endpoint is deleted); another
// merchant is not affected; concurrent creations do not overshoot the cap. Through the API (/v1,
// idempotent POST) and through the webhooks module's own router.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { twoStripeConfig } from '../helpers/runtime.ts';
import { startWebhookGateway } from './helpers.ts';
import type { WebhookGateway } from './helpers.ts';

const LIMIT = 3;
let api: ApiGateway;
let gw: WebhookGateway;

beforeAll(async () => {
  api = await startApiGateway('wh_endpoint_limit', {}, twoStripeConfig(), { webhooks: { maxEndpointsPerMerchant: LIMIT } });
  gw = await startWebhookGateway('wh_endpoint_limit_mod', twoStripeConfig(), { webhooks: { maxEndpointsPerMerchant: LIMIT } });
});
afterAll(async () => {
  await api?.close();
  await gw?.close();
});

const count = async (pool: ApiGateway['gw']['db']['pool'], table: string): Promise<number> =>
  Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);

describe('endpoints per merchant', () => {
  it('refuses one over the cap with a precise problem and writes nothing; a deletion frees a place for the same key', async () => {
    const ids: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const r = await api.call('POST', '/v1/webhook_endpoints', { body: { url: `https://example.com/hook${i}` } });
      expect(r.status).toBe(201);
      ids.push(String(r.json.id));
    }
    const endpoints = await count(api.gw.db.pool, 'webhook_endpoints');
    const records = await count(api.gw.db.pool, 'idempotency_records');
    const key = newKey();
    const over = await api.call('POST', '/v1/webhook_endpoints', { idem: key, body: { url: 'https://example.com/one-more' } });
    expect(over.status).toBe(409);
    expect(over.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(over.json).toMatchObject({ code: 'endpoint_limit_reached', status: 409, type: 'https://switchyard.dev/problems/endpoint_limit_reached' });
    expect(String(over.json.detail)).toContain(`${LIMIT} enabled webhook endpoints`);
    expect(await count(api.gw.db.pool, 'webhook_endpoints')).toBe(endpoints);
    expect(await count(api.gw.db.pool, 'idempotency_records')).toBe(records);

    // Another merchant has its own allowance.
    const other = await api.newMerchant('limit-other');
    expect((await api.call('POST', '/v1/webhook_endpoints', { key: other.apiKey, body: { url: 'https://example.com/b' } })).status).toBe(201);

    // A deleted endpoint no longer counts: the refused request, retried with its key, now succeeds.
    expect((await api.call('DELETE', `/v1/webhook_endpoints/${ids[0]!}`)).status).toBe(200);
    const retried = await api.call('POST', '/v1/webhook_endpoints', { idem: key, body: { url: 'https://example.com/one-more' } });
    expect(retried.status).toBe(201);
  });

  it('concurrent creations stop at the cap (the webhooks router, without idempotency)', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => gw.api('POST', '/v1/webhook_endpoints', { url: `https://example.com/c${i}` })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array.from({ length: LIMIT }, () => 201), ...Array.from({ length: 8 - LIMIT }, () => 409)]);
    const refused = answers.find((a) => a.status === 409)!;
    expect(refused.contentType).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ code: 'endpoint_limit_reached', status: 409 });
    const listed = await gw.api('GET', '/v1/webhook_endpoints');
    expect(listed.body['data']).toHaveLength(LIMIT);
  });
});
