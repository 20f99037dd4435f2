// The whole loop over HTTP with the shipped config: a merchant's payment routed to Adyen, captured
// (Adyen answers "received"; the sandbox's signed CAPTURE notification comes back through the
// gateway's own intake and completes it), and every state change delivered to the merchant's
// endpoint as a signed event that verifies against the gateway's JWKS.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, flattenedVerify } from 'jose';
import type { JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../src/api/app.ts';
import { listenApi } from '../../../src/api/server.ts';
import type { ApiServer } from '../../../src/api/server.ts';
import { captureResource, paymentResource } from '../../../src/resources/schemas.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { startTestGateway } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

let server: ApiServer;
let gw: TestGateway;
let key: string;
let receiver: Server;
const received: { body: string; signature: string }[] = [];

beforeAll(async () => {
  server = await listenApi(0, '127.0.0.1');
  const base = `http://127.0.0.1:${server.port}`;
  gw = await startTestGateway('e2e_full_loop', readFileSync('config/switchyard.yaml', 'utf8'), { webhookBaseUrl: base });
  server.attach(createApiApp(gw.rt, { log: () => undefined }));
  key = (await createMerchant(gw.rt.database.db, { name: 'loop' })).apiKey;
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ body, signature: String(req.headers['switchyard-signature'] ?? '') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
});
afterAll(async () => {
  receiver?.close();
  await gw?.close();
  await server?.close(0);
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(method === 'POST' ? { 'idempotency-key': `k-${Math.random()}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('full loop', () => {
  it('Adyen capture is completed by its own webhook; the merchant receives verifiable signed events', async () => {
    const port = (receiver.address() as AddressInfo).port;
    const endpoint = await call('POST', '/v1/webhook_endpoints', { url: `http://127.0.0.1:${port}/hooks` });
    expect(endpoint.status).toBe(201);

    const created = await call('POST', '/v1/payments', {
      amount: 150_000, currency: 'EUR', reference: 'loop-1', capture_method: 'manual', payment_method: { type: 'card', test_card: '4242424242424242' },
    });
    expect(created.status).toBe(201);
    expect([created.json['status'], created.json['connector']]).toEqual(['authorized', 'adyen_eu']);
    const id = created.json['id'] as string;

    const captured = await call('POST', `/v1/payments/${id}/capture`, {});
    expect([200, 202]).toContain(captured.status);
    const deadline = Date.now() + 20_000;
    let payment = captured.json;
    while (payment['status'] !== 'captured' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      payment = (await call('GET', `/v1/payments/${id}`)).json;
    }
    expect([payment['status'], payment['amount_captured']]).toEqual(['captured', 150_000]);
    const timeline = await call('GET', `/v1/payments/${id}/timeline`);
    expect(JSON.stringify(timeline.json)).toContain('"origin":"webhook"');

    while (received.filter((r) => r.body.includes(id)).length < 2 && Date.now() < deadline + 10_000) await new Promise((r) => setTimeout(r, 100));
    const jwks = (await (await fetch((endpoint.json['signing'] as { jwks_url: string }).jwks_url)).json()) as JSONWebKeySet;
    const keys = createLocalJWKSet(jwks);
    const types: string[] = [];
    for (const r of received.filter((x) => x.body.includes(id))) {
      const [protectedHeader, , signature] = r.signature.split('.');
      const payload = Buffer.from(r.body).toString('base64url');
      await flattenedVerify({ protected: protectedHeader!, payload, signature: signature! }, keys);
      const event = JSON.parse(r.body) as { type: string; data: { payment: unknown; capture?: unknown } };
      types.push(event.type);
      // The event embeds exactly the API's resources: the same schema parses both, strictly.
      const embedded = paymentResource.parse(event.data.payment);
      if (event.type === 'payment.captured') {
        const { updated_at: _a, ...fromEvent } = embedded;
        const { updated_at: _b, ...fromApi } = paymentResource.parse(payment);
        expect(fromEvent).toEqual(fromApi);
        expect(captureResource.parse(event.data.capture)).toEqual(fromApi.captures[0]);
      }
    }
    expect(types).toEqual(expect.arrayContaining(['payment.authorized', 'payment.captured']));
  });
});
