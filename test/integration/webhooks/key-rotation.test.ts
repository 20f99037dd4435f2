// rotate_signing_key against the verifier docs/webhooks.md documents: one long-lived jose
// createRemoteJWKSet per endpoint, which refetches the key set for an unknown kid only 30 s after
// its last fetch (cooldownDuration). The next key is published at once and signs only after
// KEY_ANNOUNCE_MS (45 s, gateway clock), so no delivery around a rotation is rejected.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { compactVerify, createRemoteJWKSet } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KEY_ANNOUNCE_MS } from '../../../src/webhooks/outbound/delivery-signature.ts';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';

interface Received {
  readonly body: Buffer;
  readonly signature: string;
}

let api: ApiGateway;
let server: Server;
let offsetMs = 0;
const got: Received[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ body: Buffer.concat(chunks), signature: String(req.headers['switchyard-signature']) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  api = await startApiGateway('wh_key_rotation', {}, undefined, { now: () => new Date(Date.now() + offsetMs) });
});
afterAll(async () => {
  server?.close();
  await api?.close();
});

async function nextDelivery(): Promise<Received> {
  const before = got.length;
  expect((await api.call('POST', '/v1/payments', { body: paymentBody() })).status).toBe(201);
  const end = Date.now() + 15_000;
  while (got.length === before && Date.now() < end) await sleep(50);
  expect(got.length).toBeGreaterThan(before);
  return got[got.length - 1]!;
}

it('a rotation announces the next key first: the same remote JWKS verifier accepts every delivery before, during and after it', async () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const created = await api.call('POST', '/v1/webhook_endpoints', { body: { url, events: ['payment.authorized'] } });
  expect(created.status).toBe(201);
  const endpoint = created.json as unknown as { id: string; signing: { jwks_url: string; kid: string } };
  // The merchant's verifier, kept for the life of its process (jose's defaults: 30 s cooldown).
  const jwks = createRemoteJWKSet(new URL(endpoint.signing.jwks_url));
  const verify = async (r: Received): Promise<string> => {
    const [header, , signature] = r.signature.split('.');
    const { protectedHeader } = await compactVerify(`${header}.${r.body.toString('base64url')}.${signature}`, jwks, { algorithms: ['ES256'] });
    return protectedHeader.kid ?? '';
  };

  expect(await verify(await nextDelivery())).toBe(`${endpoint.id}.v1`);
  const lastFetch = Date.now(); // the verifier fetched the key set just now

  const rotated = await api.call('POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_signing_key`, { body: {} });
  expect(rotated.status, rotated.text).toBe(200);
  // Right after the rotation: still the previous key, which the verifier holds (a new kid here would be refused for 30 s).
  expect(await verify(await nextDelivery())).toBe(`${endpoint.id}.v1`);
  const signing = (rotated.json as unknown as { signing: Record<string, string> }).signing;
  expect(signing).toMatchObject({ kid: `${endpoint.id}.v1`, next_kid: `${endpoint.id}.v2` });
  expect(Date.parse(signing['next_kid_signs_at']!) - Date.now() - offsetMs).toBeGreaterThan(30_000);
  const published = (await (await fetch(endpoint.signing.jwks_url)).json()) as { keys: { kid: string }[] };
  expect(published.keys.map((k) => k.kid)).toEqual([`${endpoint.id}.v2`, `${endpoint.id}.v1`]);
  // Rotating again before the announced key signs would drop a key that may still be signing.
  const again = await api.call('POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_signing_key`, { body: {} });
  expect([again.status, again.json['code']]).toEqual([409, 'signing_key_rotation_pending']);

  // Past the announcement (gateway clock) and past the verifier's cooldown (its own clock): the new
  // key signs, and the verifier's refetch for it finds it published.
  offsetMs += KEY_ANNOUNCE_MS + 1_000;
  await sleep(Math.max(0, lastFetch + 31_000 - Date.now()));
  expect(await verify(await nextDelivery())).toBe(`${endpoint.id}.v2`);
  const attempts = await api.gw.db.pool.query<{ kid: string }>('SELECT a.kid FROM event_delivery_attempts a JOIN event_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1 ORDER BY a.at', [endpoint.id]);
  expect(attempts.rows.map((r) => r.kid)).toEqual([`${endpoint.id}.v1`, `${endpoint.id}.v1`, `${endpoint.id}.v2`]);
}, 90_000);
