// Bad input: each a precise problem+json answer, and nothing written (row counts before/after).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemResource } from '../../../src/api/resource-schemas.ts';
import { paymentBody, rowCounts, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('api_bad_input', { bodyLimit: '16kb' });
});
afterAll(async () => api?.close());

const cases: [string, unknown, string, string | null][] = [
  // [name, body, code, errors[0].path]
  ['amount as a string', paymentBody({ amount: '5000' }), 'validation_error', 'amount'],
  ['negative amount', paymentBody({ amount: -1 }), 'validation_error', 'amount'],
  // The core refuses a payment of 0 (it used to pass the schema and answer 500).
  ['zero amount', paymentBody({ amount: 0 }), 'validation_error', 'amount'],
  ['fractional amount', paymentBody({ amount: 10.5 }), 'validation_error', 'amount'],
  ['unsafe amount', paymentBody({ amount: 2 ** 53 }), 'validation_error', 'amount'],
  ['unknown currency', paymentBody({ currency: 'XYZ' }), 'validation_error', 'currency'],
  ['lower-case currency', paymentBody({ currency: 'eur' }), 'validation_error', 'currency'],
  ['unknown top-level field', paymentBody({ status: 'captured' }), 'validation_error', 'status'],
  ['unknown nested field', paymentBody({ payment_method: { type: 'card', test_card: '4242424242424242', cvc: '123' } }), 'validation_error', 'payment_method.cvc'],
  ['mass assignment of amount_authorized', paymentBody({ amount_authorized: 1 }), 'validation_error', 'amount_authorized'],
  ['wrong capture_method', paymentBody({ capture_method: 'later' }), 'validation_error', 'capture_method'],
  ['metadata of wrong type', paymentBody({ metadata: { a: 1 } }), 'validation_error', 'metadata.a'],
  ['array body', [paymentBody()], 'validation_error', '(body)'],
  ['missing fields', {}, 'validation_error', 'amount'],
];

describe('bad input', () => {
  it.each(cases)('%s', async (_name, body, code, path) => {
    const before = await rowCounts(api.gw);
    const r = await api.call('POST', '/v1/payments', { body });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = problemResource.parse(r.json);
    expect(problem.code).toBe(code);
    expect(problem.errors?.[0]?.path).toBe(path);
    expect(problem.detail).toContain(path === '(body)' ? '' : path!);
    expect(await rowCounts(api.gw)).toEqual(before);
  });

  it('names the amount problem precisely', async () => {
    const messages = [];
    for (const amount of [-1, 10.5, 2 ** 53, '5']) messages.push((await api.call('POST', '/v1/payments', { body: paymentBody({ amount }) })).json.errors[0]?.message);
    expect(messages[0]).toMatch(/negative/);
    expect(messages[1]).toMatch(/not an integer/);
    expect(messages[2]).toMatch(/safe integer/);
    expect(messages[3]).toMatch(/string/);
  });

  it('malformed JSON is malformed_json; a huge body is payload_too_large (413); nothing written', async () => {
    const before = await rowCounts(api.gw);
    for (const raw of ['{"amount": 5', 'amount=5&currency=EUR', '"just a string"']) {
      const r = await api.call('POST', '/v1/payments', { body: raw });
      expect([r.status, r.json.code]).toEqual([400, 'malformed_json']);
    }
    const huge = await api.call('POST', '/v1/payments', { body: paymentBody({ metadata: { big: 'x'.repeat(500), ...Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, 'y'.repeat(400)])) } }) });
    expect([huge.status, huge.json.code]).toEqual([413, 'payload_too_large']);
    expect(await rowCounts(api.gw)).toEqual(before);
  });

  it('capture and refund bodies are strict too', async () => {
    const p = (await api.call('POST', '/v1/payments', { body: paymentBody() })).json;
    const before = await rowCounts(api.gw);
    const checks: [string, unknown, string][] = [
      [`/v1/payments/${p.id}/capture`, { amount: 0 }, 'amount'],
      [`/v1/payments/${p.id}/capture`, { amount: 100, final: 'yes' }, 'final'],
      [`/v1/payments/${p.id}/capture`, { amount_captured: 100 }, 'amount_captured'],
      [`/v1/payments/${p.id}/refunds`, { amount: 1.5 }, 'amount'],
      [`/v1/payments/${p.id}/refunds`, { amount: 0 }, 'amount'],
      [`/v1/payments/${p.id}/void`, { reason: 'x' }, 'reason'],
    ];
    for (const [path, body, field] of checks) {
      const r = await api.call('POST', path, { body });
      expect([r.status, r.json.code, r.json.errors[0]?.path]).toEqual([400, 'validation_error', field]);
    }
    expect(await rowCounts(api.gw)).toEqual(before);
  });

  it('list query parameters are validated', async () => {
    for (const q of ['limit=0', 'limit=1000', 'limit=abc', 'status=paid', 'starting_after=xyz', 'colour=red']) {
      const r = await api.call('GET', `/v1/payments?${q}`);
      expect([r.status, r.json.code]).toEqual([400, 'validation_error']);
    }
  });

  it('a test card where a candidate is live is refused and nothing is written', async () => {
    const live = `
connectors:
  stripe_a: { type: stripe, endpoint: sandbox, secret_key: sk_test_a, webhook_secrets: [whsec_a] }
  stripe_live: { type: stripe, endpoint: "https://api.stripe.example", secret_key: sk_test_b, webhook_secrets: [whsec_b] }
routing:
  default: { priority: [stripe_a, stripe_live] }
`;
    const mixed = await startApiGateway('api_bad_input_live', {}, live);
    try {
      const before = await rowCounts(mixed.gw);
      const r = await mixed.call('POST', '/v1/payments', { body: paymentBody() });
      expect([r.status, r.json.code, r.json.errors[0]?.path]).toEqual([400, 'validation_error', 'payment_method.test_card']);
      expect(await rowCounts(mixed.gw)).toEqual(before);
      // A live account closes the sandbox control API (issue 42 §5).
      expect((await mixed.call('GET', '/_sandbox')).status).toBe(404);
    } finally {
      await mixed.close();
    }
  });
});
