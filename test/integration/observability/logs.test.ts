// Structured JSON logs: one line per request and one per transition, carrying payment, merchant,
// connector, origin and the request id (kept from X-Request-Id, echoed back); secrets never
// reach a line, whether in the message, a field, or a field that is a secret by its name.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForPayment } from '../../../src/app/payment-service.ts';
import { createLogger, lineLog } from '../../../src/observability/logger.ts';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { jsonLines } from './helpers.ts';

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('obs_logs');
});
afterAll(async () => api?.close());

describe('structured logs', () => {
  it('write one JSON line per request and per transition, tied together by the request id', async () => {
    const created = await api.call('POST', '/v1/payments', { body: paymentBody(), headers: { 'x-request-id': 'req-obs-1' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBe('req-obs-1');
    const id = created.json.id;
    await waitForPayment(api.gw.rt, api.merchantId, id, (p) => p.state === 'authorized', 10_000);
    const generated = await api.call('GET', `/v1/payments/${id}`);
    expect(generated.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    const read = jsonLines(api.logs).find((l) => l.msg === 'request' && l['request_id'] === generated.headers.get('x-request-id'));
    expect(read).toMatchObject({ method: 'GET', route: '/v1/payments/:id', status: 200, payment_id: id });

    const lines = jsonLines(api.logs);
    const request = lines.find((l) => l.msg === 'request' && l['request_id'] === 'req-obs-1');
    expect(request).toMatchObject({ level: 'info', method: 'POST', path: '/v1/payments', route: '/v1/payments', status: 201, merchant_id: api.merchantId, payment_id: id, service: 'switchyard' });
    expect(typeof request?.['duration_ms']).toBe('number');
    expect(typeof request?.['time']).toBe('string');

    const mine = lines.filter((l) => l.msg === 'transition' && l['payment_id'] === id);
    expect(mine[0]).toMatchObject({ merchant_id: api.merchantId, connector: 'stripe_a', origin: 'api', from: 'created', to: 'authorizing', outcome: 'applied', request_id: 'req-obs-1' });
    const byWorker = mine.find((l) => l['to'] === 'authorized');
    expect(byWorker).toMatchObject({ merchant_id: api.merchantId, connector: 'stripe_a', origin: 'worker', from: 'authorizing' });
    // Dispatch at commit: an authorize call run by the process that committed it runs inside the
    // request's context, so its answer's transition is tied to the request that caused it; one the
    // relay handed to a worker (it won the race to the row) is not.
    const call = await api.gw.db.db.execute<{ claimed_by: string }>(sql`SELECT claimed_by FROM outbox WHERE payment_id = ${id} AND kind = 'provider_call' ORDER BY id LIMIT 1`);
    expect(byWorker?.['request_id']).toBe(call.rows[0]!.claimed_by.startsWith('local-') ? 'req-obs-1' : undefined);
    // A request id that is not plain text is replaced, not logged.
    const odd = await api.call('GET', `/v1/payments/${id}`, { headers: { 'x-request-id': 'x'.repeat(300) } });
    expect(odd.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('keep the request id on a transition whose request body arrived after the headers (the body parser does not lose it)', async () => {
    const body = JSON.stringify(paymentBody());
    const half = Math.floor(body.length / 2);
    const slow = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(body.slice(0, half)));
        await new Promise((r) => setTimeout(r, 300));
        controller.enqueue(new TextEncoder().encode(body.slice(half)));
        controller.close();
      },
    });
    const res = await fetch(`${api.url}/v1/payments`, {
      method: 'POST', body: slow, duplex: 'half',
      headers: { authorization: `Bearer ${api.apiKey}`, 'idempotency-key': `slow-${Date.now()}`, 'content-type': 'application/json', 'x-request-id': 'req-obs-slow' },
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const created = jsonLines(api.logs).find((l) => l.msg === 'transition' && l['payment_id'] === id && l['to'] === 'authorizing');
    expect(created).toMatchObject({ origin: 'api', request_id: 'req-obs-slow' });
  });

  it('redact card numbers, API keys, secrets and authorization headers in messages and fields', () => {
    const out: string[] = [];
    const logger = createLogger((l) => out.push(l));
    logger.info(
      {
        headers: { authorization: 'Bearer sk_sy_abcdefghijklmnop', 'content-type': 'application/json' },
        payment_method: { type: 'card', number: '4111111111111111', cvc: '123' },
        api_key: 'sk_sy_zyxwvutsrqponm',
        secret_key: 'sk_test_51abcdef',
        nested: { detail: 'declined card 5555555555554444 with key rk_live_123456', url: 'postgres://me:hunter2@db:5432/x' },
      },
      'charge with 4000000000000002 for whsec_abcdef',
    );
    lineLog(logger)('stripe said: Bearer sk_live_abcdef1234 failed for card 378282246310005');
    const text = out.join('\n');
    for (const secret of ['4111111111111111', '123"', 'sk_sy_abcdefghijklmnop', 'sk_sy_zyxwvutsrqponm', 'sk_test_51abcdef', '5555555555554444', 'rk_live_123456', 'hunter2', '4000000000000002', 'whsec_abcdef', 'sk_live_abcdef1234', '378282246310005']) {
      expect(text).not.toContain(secret);
    }
    const [structured, plain] = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(structured).toMatchObject({ headers: { authorization: '[redacted]', 'content-type': 'application/json' }, payment_method: '[redacted]', api_key: '[redacted]', secret_key: '[redacted]' });
    expect((structured!['nested'] as { detail: string }).detail).toBe('declined card [card] with key [secret]');
    expect(plain).toMatchObject({ level: 'warn', msg: 'stripe said: Bearer [secret] failed for card [card]' });
  });
});
