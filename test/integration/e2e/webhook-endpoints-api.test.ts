// Webhook endpoint registration is a POST under /v1 like any other: idempotent, validated,
// merchant-scoped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deletedWebhookEndpoint, webhookEndpointList, webhookEndpointResource } from '../../../src/webhooks/outbound/endpoint-schemas.ts';
import { startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('e2e_endpoints');
});
afterAll(async () => api?.close());

describe('POST /v1/webhook_endpoints', () => {
  it('a retry with the same key replays the first answer and registers one endpoint', async () => {
    const body = { url: 'https://merchant.example/hooks', events: ['payment.captured'] };
    const first = await api.call('POST', '/v1/webhook_endpoints', { idem: 'endpoint-1', body });
    const again = await api.call('POST', '/v1/webhook_endpoints', { idem: 'endpoint-1', body });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const list = await api.call('GET', '/v1/webhook_endpoints');
    expect(list.json.data).toHaveLength(1);
    const other = await api.call('POST', '/v1/webhook_endpoints', { idem: 'endpoint-1', body: { url: 'https://other.example/' } });
    expect([other.status, other.json.code]).toEqual([422, 'idempotency_key_reused']);
  });

  it('needs a key, a valid URL, known event types; another merchant sees nothing', async () => {
    expect((await api.call('POST', '/v1/webhook_endpoints', { idem: null, body: { url: 'https://x.example/' } })).json.code).toBe('idempotency_key_missing');
    const bad = await api.call('POST', '/v1/webhook_endpoints', { body: { url: 'ftp://x', events: ['payment.nope'] } });
    expect([bad.status, bad.json.code]).toEqual([400, 'validation_error']);
    expect(bad.json.errors.map((e) => e.path)).toEqual(expect.arrayContaining(['url', 'events.0']));
    const other = await api.newMerchant('other');
    const theirs = await api.call('GET', '/v1/webhook_endpoints', { key: other.apiKey });
    expect(theirs.json.data).toHaveLength(0);
  });
});

describe('the endpoint answers have the shape the OpenAPI document gives them', () => {
  it('create, list, rotate and delete parse with their schemas: object, id, created_at on each', async () => {
    const created = await api.call('POST', '/v1/webhook_endpoints', { body: { url: 'https://merchant.example/shapes' } });
    const endpoint = webhookEndpointResource.parse(created.json);
    expect(endpoint.created_at).toBe(endpoint.created);
    webhookEndpointList.parse((await api.call('GET', '/v1/webhook_endpoints')).json);
    webhookEndpointResource.parse((await api.call('POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_signing_key`, { body: {} })).json);
    expect(deletedWebhookEndpoint.parse((await api.call('DELETE', `/v1/webhook_endpoints/${endpoint.id}`)).json)).toEqual({ id: endpoint.id, object: 'webhook_endpoint', deleted: true });
  });
});
