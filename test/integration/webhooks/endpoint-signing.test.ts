// Each endpoint's deliveries verify only against that endpoint's pinned JWKS (docs/webhooks.md,
// "Verifying a delivery"): merchant A's signed event replayed to merchant B's endpoint fails B's
// verification. The body names its merchant and endpoint. An endpoint from before per-endpoint
// keys keeps the global signature beside its own until it rotates; a rotation keeps the previous
// key published for the grace period.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { compactVerify, createRemoteJWKSet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';

// ---- the verification code of docs/webhooks.md, as a merchant runs it -------------------------

async function verifySwitchyard(rawBody: Buffer, signatureHeader: string, jwksUrl: string): Promise<{ type: string; merchant_id: string; endpoint_id: string }> {
  const jwks = createRemoteJWKSet(new URL(jwksUrl));
  const [header, , signature] = signatureHeader.split('.');
  const jws = `${header}.${rawBody.toString('base64url')}.${signature}`;
  const { protectedHeader } = await compactVerify(jws, jwks, { algorithms: ['ES256'] });
  if (Math.abs(Date.now() / 1000 - (protectedHeader.iat as number)) > 300) throw new Error('stale signature');
  return JSON.parse(rawBody.toString('utf8')) as { type: string; merchant_id: string; endpoint_id: string };
}

// ---- a merchant's receiver -----------------------------------------------------------------------

interface Received {
  readonly body: Buffer;
  readonly headers: Record<string, string | string[] | undefined>;
}

async function receiver(): Promise<{ server: Server; url: string; got: Received[] }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ body: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, got };
}

let api: ApiGateway;
const servers: Server[] = [];
beforeAll(async () => {
  api = await startApiGateway('wh_endpoint_keys');
});
afterAll(async () => {
  for (const s of servers) s.close();
  await api?.close();
});

interface Endpoint {
  readonly id: string;
  readonly signing: { readonly jwks_url: string; readonly jwks_path: string; readonly kid: string; readonly global_signature: boolean };
}

async function merchantWithEndpoint(key: string) {
  const r = await receiver();
  servers.push(r.server);
  const created = await api.call('POST', '/v1/webhook_endpoints', { key, body: { url: r.url, events: ['payment.authorized'] } });
  expect(created.status).toBe(201);
  return { ...r, endpoint: created.json as unknown as Endpoint };
}

async function firstDelivery(got: Received[], ms = 15_000): Promise<Received> {
  const end = Date.now() + ms;
  while (got.length === 0 && Date.now() < end) await sleep(50);
  expect(got.length).toBeGreaterThan(0);
  return got[got.length - 1]!;
}

describe('per-endpoint signing keys', () => {
  it("an endpoint's delivery verifies at its pinned JWKS; replayed to another merchant's endpoint it fails there", async () => {
    const a = await merchantWithEndpoint(api.apiKey);
    const other = await api.newMerchant('merchant-b');
    const b = await merchantWithEndpoint(other.apiKey);
    expect(a.endpoint.signing).toMatchObject({ kid: `${a.endpoint.id}.v1`, global_signature: false });
    expect(a.endpoint.signing.jwks_url).toBe(`${api.url}/.well-known/webhook-endpoints/${a.endpoint.id}/jwks.json`);

    expect((await api.call('POST', '/v1/payments', { body: paymentBody() })).status).toBe(201);
    const delivered = await firstDelivery(a.got);
    const signature = String(delivered.headers['switchyard-signature']);
    const event = await verifySwitchyard(delivered.body, signature, a.endpoint.signing.jwks_url);
    expect(event).toMatchObject({ type: 'payment.authorized', merchant_id: api.merchantId, endpoint_id: a.endpoint.id });
    expect(delivered.headers['switchyard-signature-endpoint']).toBeUndefined();

    // A replays its own signed event to B (same bytes, same header): B's verifier refuses it, with
    // the documented code unchanged.
    await expect(verifySwitchyard(delivered.body, signature, b.endpoint.signing.jwks_url)).rejects.toThrow();
    // The global key set no longer verifies a new endpoint's delivery either.
    await expect(verifySwitchyard(delivered.body, signature, `${api.url}/.well-known/jwks.json`)).rejects.toThrow();
  });

  it('an endpoint from before keeps the global signature beside its own until it rotates; the old key stays published after', async () => {
    const e = await merchantWithEndpoint(api.apiKey);
    // What the migration leaves on endpoints that existed before it.
    await api.gw.db.pool.query('UPDATE webhook_endpoints SET global_signature = true WHERE id = $1', [e.endpoint.id]);
    expect((await api.call('POST', '/v1/payments', { body: paymentBody() })).status).toBe(201);
    const legacy = await firstDelivery(e.got);
    const global = String(legacy.headers['switchyard-signature']);
    await verifySwitchyard(legacy.body, global, `${api.url}/.well-known/jwks.json`);
    await verifySwitchyard(legacy.body, String(legacy.headers['switchyard-signature-endpoint']), e.endpoint.signing.jwks_url);
    await expect(verifySwitchyard(legacy.body, global, e.endpoint.signing.jwks_url)).rejects.toThrow();

    const rotated = await api.call('POST', `/v1/webhook_endpoints/${e.endpoint.id}/rotate_signing_key`, { body: {} });
    expect(rotated.status).toBe(200);
    // The next key is announced first; the endpoint's own current key signs until it takes over (key-rotation.test.ts).
    expect((rotated.json as unknown as Endpoint).signing).toMatchObject({ kid: `${e.endpoint.id}.v1`, next_kid: `${e.endpoint.id}.v2`, global_signature: false });
    const published = (await (await fetch(e.endpoint.signing.jwks_url)).json()) as { keys: { kid: string }[] };
    expect(published.keys.map((k) => k.kid)).toEqual([`${e.endpoint.id}.v2`, `${e.endpoint.id}.v1`]);

    e.got.length = 0;
    expect((await api.call('POST', '/v1/payments', { body: paymentBody() })).status).toBe(201);
    const after = await firstDelivery(e.got);
    expect(after.headers['switchyard-signature-endpoint']).toBeUndefined();
    await verifySwitchyard(after.body, String(after.headers['switchyard-signature']), e.endpoint.signing.jwks_url);
    await expect(verifySwitchyard(after.body, String(after.headers['switchyard-signature']), `${api.url}/.well-known/jwks.json`)).rejects.toThrow();

    // Past the grace only the current key is published.
    await api.gw.db.pool.query(`UPDATE webhook_endpoints SET signing_rotated_at = now() - interval '1 hour' WHERE id = $1`, [e.endpoint.id]);
    const later = (await (await fetch(e.endpoint.signing.jwks_url)).json()) as { keys: { kid: string }[] };
    expect(later.keys.map((k) => k.kid)).toEqual([`${e.endpoint.id}.v2`]);
  });

  it("another merchant cannot rotate an endpoint's key; an unknown endpoint has no key set", async () => {
    const e = await merchantWithEndpoint(api.apiKey);
    const other = await api.newMerchant('merchant-c');
    expect((await api.call('POST', `/v1/webhook_endpoints/${e.endpoint.id}/rotate_signing_key`, { key: other.apiKey, body: {} })).status).toBe(404);
    expect((await fetch(`${api.url}/.well-known/webhook-endpoints/ep_nope/jwks.json`)).status).toBe(404);
  });
});
