// Merchant webhook endpoints cannot reach internal addresses: refused at registration (400 naming
// `url`, and the host, never the address it resolved to: that goes to our log) and at delivery on
// the address actually dialled; redirects are not followed; the SWITCHYARD_WEBHOOK_ALLOW setting lets
// named hosts and ranges through for local development, and only there may an endpoint be plain http.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../../src/webhooks/outbound/address-policy.ts';
import { postToEndpoint } from '../../../src/webhooks/outbound/delivery-worker.ts';
import { startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';

const strict = new AddressPolicy([]);
let api: ApiGateway;
let receiver: Server;
let received = 0;
let port = 0;

beforeAll(async () => {
  api = await startApiGateway('wh_address_policy', {}, undefined, { webhooks: { addressPolicy: strict } });
  receiver = createServer((req, res) => {
    received += 1;
    if (req.url === '/redirect') res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
    else res.writeHead(200).end('ok');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  port = (receiver.address() as AddressInfo).port;
});
afterAll(async () => {
  receiver?.close();
  await api?.close();
});

describe('AddressPolicy', () => {
  it('refuses loopback, private, link-local, unique-local and metadata addresses in every form', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '0:0:0:0:0:ffff:a01:203']) {
      expect(strict.refusal(a, a)?.reason, a).toBe(`${a} is an internal address`);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(strict.refusal(a, a), a).toBeNull();
  });

  it('SWITCHYARD_WEBHOOK_ALLOW lets named hosts and ranges through, and refuses a bad entry in one line', () => {
    const dev = AddressPolicy.fromEnv({ SWITCHYARD_WEBHOOK_ALLOW: '10.0.0.0/8, hooks.internal, ::1' });
    expect(dev.refusal('10.9.9.9', '10.9.9.9')).toBeNull();
    expect(dev.refusal('192.168.1.1', 'hooks.internal')).toBeNull();
    expect(dev.refusal('::1', '::1')).toBeNull();
    expect(dev.refusal('127.0.0.1', 'other.internal')).toEqual({ reason: 'other.internal resolves to an internal address', address: '127.0.0.1' });
    expect(() => AddressPolicy.fromEnv({ SWITCHYARD_WEBHOOK_ALLOW: '10.0.0.0/99' })).toThrow('SWITCHYARD_WEBHOOK_ALLOW: 10.0.0.0/99 is not a host name, an address or a CIDR range');
  });
});

describe('registration', () => {
  it.each(['http://127.0.0.1:9/hook', 'http://[::1]:9/hook', 'http://[::ffff:127.0.0.1]/hook', 'http://169.254.169.254/latest/meta-data', 'http://10.0.0.5/hook', 'http://localhost:9/hook'])('refuses %s with 400 naming url, and stores nothing', async (url) => {
    const r = await api.call('POST', '/v1/webhook_endpoints', { body: { url } });
    expect([r.status, r.json.code, r.json.errors[0]?.path]).toEqual([400, 'validation_error', 'url']);
    expect(r.json.errors[0]?.message).toMatch(/internal address/);
    const rows = await api.gw.db.pool.query('SELECT 1 FROM webhook_endpoints WHERE url = $1', [url]);
    expect(rows.rowCount).toBe(0);
  });
});

describe('the refusal answer', () => {
  it('names the host, never the internal address it resolved to; the address is logged server-side', async () => {
    const r = await api.call('POST', '/v1/webhook_endpoints', { body: { url: 'https://localhost:9/hook' } });
    expect([r.status, r.json.errors]).toEqual([400, [{ path: 'url', message: 'localhost resolves to an internal address' }]]);
    expect(r.text).not.toMatch(/127\.0\.0\.1|::1/);
    expect(api.logs.join('\n')).toMatch(/localhost:9 resolved to the internal address (127\.0\.0\.1|::1)/);
  });
});

describe('plain http', () => {
  it.each(['http://8.8.8.8/hook', 'http://[2606:4700:4700::1111]/hook', 'http://hooks.example.invalid/hook'])('%s outside the allow list: 400 naming url, nothing stored', async (url) => {
    const r = await api.call('POST', '/v1/webhook_endpoints', { body: { url } });
    expect([r.status, r.json.code, r.json.errors]).toEqual([400, 'validation_error', [{ path: 'url', message: 'must be an https URL (plain http only to hosts SWITCHYARD_WEBHOOK_ALLOW lets through)' }]]);
    expect((await api.gw.db.pool.query('SELECT 1 FROM webhook_endpoints WHERE url = $1', [url])).rowCount).toBe(0);
  });

  it('https anywhere public; http only to a host the allow list names or whose every address it allows', async () => {
    expect(await strict.urlRefusal('https://8.8.8.8/hook')).toBeNull();
    const ok = await api.call('POST', '/v1/webhook_endpoints', { body: { url: 'https://8.8.8.8/hook' } });
    expect(ok.status).toBe(201);
    const dev = new AddressPolicy(['localhost', '10.0.0.0/8', 'hooks.internal']);
    expect(await dev.urlRefusal('http://localhost:9/hook')).toBeNull();
    expect(await dev.urlRefusal('http://10.1.2.3/hook')).toBeNull();
    expect(await dev.urlRefusal('http://hooks.internal/hook')).toBeNull();
    expect((await dev.urlRefusal('http://8.8.8.8/hook'))?.reason).toMatch(/^must be an https URL/);
    expect((await dev.urlRefusal('http://127.0.0.1:9/hook'))?.reason).toBe('127.0.0.1 is an internal address');
  });
});

describe('delivery', () => {
  it('checks the address dialled: a name resolving to loopback is refused without a connection', async () => {
    const before = received;
    const r = await postToEndpoint(`http://localhost:${port}/hook`, Buffer.from('{}'), {}, 2_000, strict);
    expect(r.statusCode).toBeNull();
    // The merchant reads this error (GET /v1/events/{id}): the host, not where it resolved.
    expect(r.error).toBe('refused: localhost resolves to an internal address');
    expect(r.refusedAddress).toMatch(/^(127\.0\.0\.1|::1)$/);
    const literal = await postToEndpoint(`http://127.0.0.1:${port}/hook`, Buffer.from('{}'), {}, 2_000, strict);
    expect([literal.error, literal.refusedAddress]).toEqual(['refused: 127.0.0.1 is an internal address', '127.0.0.1']);
    expect(received).toBe(before);
  });

  it('with the host allowed it delivers, and a redirect is an answer, not followed', async () => {
    const dev = new AddressPolicy(['localhost', '127.0.0.0/8']);
    const before = received;
    expect(await postToEndpoint(`http://localhost:${port}/hook`, Buffer.from('{}'), {}, 2_000, dev)).toMatchObject({ statusCode: 200, error: null });
    expect(await postToEndpoint(`http://127.0.0.1:${port}/redirect`, Buffer.from('{}'), {}, 2_000, dev)).toMatchObject({ statusCode: 302, error: 'HTTP 302' });
    expect(received).toBe(before + 2);
  });
});
