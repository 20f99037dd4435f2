// No card numbers, API keys or provider secrets in logs, for a sample flow (create, capture,
// refund, a decline, a bad request, a failover), whatever writes them: the API's and the
// runtime's log functions, console, or the process streams.
import { captureStdio } from '../helpers/capture-stdio.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { paymentBody, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

let api: ApiGateway;
const written: string[] = [];
beforeAll(async () => {
  captureStdio(written);
  api = await startApiGateway('api_logs');
});
afterAll(async () => {
  vi.restoreAllMocks();
  await api?.close();
});

describe('logs', () => {
  it('carry no card number, API key or secret', async () => {
    const cards = ['4242424242424242', '4000000000000002'];
    const p = (await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: cards[0] } }) })).json;
    await api.call('POST', `/v1/payments/${p.id}/capture`, { body: {} });
    await api.call('POST', `/v1/payments/${p.id}/refunds`, { body: { amount: 10 } });
    await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: cards[1] } }) });
    await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: cards[0], cvc: '123' } }) });
    await api.call('GET', '/v1/payments', { key: 'sk_sy_wrongwrongwrong' });
    await api.gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!.outage(5);
    await api.call('POST', '/v1/payments', { body: paymentBody() });
    await api.gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!.outage(0);

    const everything = [...api.logs, ...written].join('\n');
    // The request lines are structured JSON (src/observability): the check above covers them too.
    expect(api.logs.some((l) => l.includes('"msg":"request"') && l.includes('"path":"/v1/payments"') && l.includes('"status":201'))).toBe(true);
    for (const secret of [...cards, api.apiKey, 'sk_sy_wrongwrongwrong', 'sk_test_a', 'sk_test_b', 'whsec_a', 'whsec_b']) expect(everything).not.toContain(secret);
  });
});
