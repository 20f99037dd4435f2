// The admission bound (src/api/admission.ts, docs/api.md "Overload"): with the bound full, the next
// request is answered at once with 503 overloaded + Retry-After as problem+json, and nothing is
// written for it — no payment, no idempotency record — so the same key works once there is room.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey, paymentBody, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

// One Stripe account whose client waits long enough for the sandbox's injected latency.
const config = `
connectors:
  stripe_a: { type: stripe, secret_key: sk_test_a, webhook_secrets: [whsec_a], timeout_ms: 8000 }
routing:
  default: { priority: [stripe_a] }
`;

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('api_admission', { admission: { maxInFlight: 2, retryAfterS: 2 } }, config);
});
afterAll(async () => api?.close());

const count = async (q: string, params: unknown[]): Promise<number> => Number((await api.gw.db.pool.query<{ n: string }>(q, params)).rows[0]!.n);

describe('admission: a bounded number of requests in flight per process', () => {
  it('sheds the request past the bound with 503 + Retry-After before writing anything, and takes the same key once there is room', async () => {
    const sandbox = api.gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
    // Each held create's confirm waits 2.5 s at the provider: two creates fill the bound of 2.
    await sandbox.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 2_500, process: 'after', count: 2 });
    const held = [paymentBody(), paymentBody()];
    const answers = held.map((body) => api.call('POST', '/v1/payments', { body }));
    const deadline = Date.now() + 5_000;
    // Both are in flight once both payments exist (created, waiting for the provider's answer).
    while ((await count('SELECT count(*) AS n FROM payments WHERE reference = ANY($1::text[])', [held.map((b) => b['reference'])])) < 2) {
      if (Date.now() > deadline) throw new Error('the held creates did not start');
      await sleep(20);
    }

    const idem = newKey();
    const body = paymentBody({ reference: `shed-${randomBytes(3).toString('hex')}` });
    const started = performance.now();
    const shed = await api.call('POST', '/v1/payments', { idem, body });
    const shedMs = performance.now() - started;
    expect(shed.status).toBe(503);
    expect(shed.headers.get('retry-after')).toBe('2');
    expect(shed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(shed.json).toMatchObject({ status: 503, code: 'overloaded' });
    // At once: not after the held requests' 2.5 s.
    expect(shedMs).toBeLessThan(2_000);
    // A read is shed the same way.
    expect((await api.call('GET', '/v1/payments')).status).toBe(503);
    // Nothing written for the shed request.
    expect(await count('SELECT count(*) AS n FROM payments WHERE reference = $1', [body['reference']])).toBe(0);
    expect(await count('SELECT count(*) AS n FROM idempotency_records WHERE key = $1', [idem])).toBe(0);

    const done = await Promise.all(answers);
    expect(done.map((a) => a.status)).toEqual([201, 201]);
    // Room again: the retry with the same key is a first request, not a replay.
    const retried = await api.call('POST', '/v1/payments', { idem, body });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(await count('SELECT count(*) AS n FROM payments WHERE reference = $1', [body['reference']])).toBe(1);
  }, 20_000);
});
