// Issue 48: API versions by date. Every /v1 answer names its version (Switchyard-Version), a 401
// and a 404 included; a request may name one, an unknown one is a 400 naming the header with nothing
// written; `switchyard merchants set-version` pins a merchant's default (audited); merchant events
// carry the merchant's pinned version.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSIONS, LATEST_API_VERSION } from '../../../src/resources/api-version.ts';
import { OPERATOR_ENV, runCli } from '../helpers/cli.ts';
import { paymentBody, rowCounts, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('api_versions', { authorizationWaitMs: 8000 });
});
afterAll(async () => api?.close());

describe('Switchyard-Version', () => {
  it('every answer names its version: 200, 201, 401, 404', async () => {
    expect((await api.call('GET', '/v1/payments')).headers.get('switchyard-version')).toBe(LATEST_API_VERSION);
    expect((await api.call('POST', '/v1/payments', { body: paymentBody() })).headers.get('switchyard-version')).toBe(LATEST_API_VERSION);
    expect((await api.call('GET', '/v1/payments', { key: null })).headers.get('switchyard-version')).toBe(LATEST_API_VERSION);
    expect((await api.call('GET', '/v1/payments/pay_nope')).headers.get('switchyard-version')).toBe(LATEST_API_VERSION);
    expect((await api.call('GET', '/v1/payments', { headers: { 'switchyard-version': API_VERSIONS[0] } })).headers.get('switchyard-version')).toBe(API_VERSIONS[0]);
  });

  it('an unknown version is a 400 naming the header, and nothing is written', async () => {
    const before = await rowCounts(api.gw);
    const a = await api.call('POST', '/v1/payments', { body: paymentBody(), headers: { 'switchyard-version': '2019-01-01' } });
    expect(a.status).toBe(400);
    expect(a.json.errors).toEqual([{ path: 'Switchyard-Version', message: expect.stringContaining(`known: ${API_VERSIONS.join(', ')}`) as unknown }]);
    expect(await rowCounts(api.gw)).toEqual(before);
  });

  it('set-version pins the merchant (audited): answers without the header and its events use it; --latest unpins', async () => {
    const env = { DATABASE_URL: api.gw.db.url, ...OPERATOR_ENV.alice };
    const pinned = await runCli(['merchants', 'set-version', api.merchantId, API_VERSIONS[0]], env);
    expect(pinned.code, pinned.stderr).toBe(0);
    expect(JSON.parse(pinned.stdout)).toEqual({ id: api.merchantId, api_version: API_VERSIONS[0], pinned: true });
    const audit = await api.gw.db.pool.query<{ action: string }>("SELECT action FROM operator_audit WHERE target = $1 AND action = 'merchant.set_version'", [api.merchantId]);
    expect(audit.rowCount).toBe(1);
    const a = await api.call('POST', '/v1/payments', { body: paymentBody() });
    expect(a.headers.get('switchyard-version')).toBe(API_VERSIONS[0]);
    const events = await api.gw.db.pool.query<{ v: string | null }>("SELECT payload->>'api_version' AS v FROM merchant_events WHERE payment_id = $1", [a.json.id]);
    expect(events.rows.length).toBeGreaterThan(0);
    expect(new Set(events.rows.map((e) => e.v))).toEqual(new Set([API_VERSIONS[0]]));
    const bad = await runCli(['merchants', 'set-version', api.merchantId, '2019-01-01'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim().split('\n')).toEqual([expect.stringContaining('is not an API version') as unknown]);
    const unpinned = await runCli(['merchants', 'set-version', api.merchantId, '--latest'], env);
    expect(JSON.parse(unpinned.stdout)).toMatchObject({ pinned: false, api_version: LATEST_API_VERSION });
  });
});
