// Idempotency over HTTP: replay byte-for-byte, reuse with another request, in progress,
// validation failures not stored, per-merchant scope, 20 concurrent requests, resume after a crash.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestFingerprint } from '../../../src/api/idempotent-post.ts';
import { startPayment } from '../../../src/app/payment-service.ts';
import { purgeExpiredIdempotencyRecords, releaseClaim } from '../../../src/store/idempotency.ts';
import { CARD_OK, newKey, paymentBody, rowCounts, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('api_idempotency');
});
afterAll(async () => api?.close());

const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await api.gw.db.pool.query<{ n: string }>(sql, params)).rows[0]!.n);
const paymentsWithReference = async (ref: string) => count('SELECT count(*) AS n FROM payments WHERE reference = $1', [ref]);

describe('idempotency', () => {
  it('replays the stored status and body byte-for-byte, marked Idempotent-Replayed, even with keys in another order', async () => {
    const idem = newKey();
    const body = paymentBody();
    const first = await api.call('POST', '/v1/payments', { idem, body });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await api.call('POST', '/v1/payments', { idem, body: JSON.stringify(reordered, null, 2) });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(again.text).toBe(first.text);
    expect(await paymentsWithReference(body['reference'] as string)).toBe(1);
  });

  it('replays a stored error answer too (an execution result, not a validation failure)', async () => {
    const declined = (await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', test_card: '4000000000000002' } }) })).json;
    const idem = newKey();
    const first = await api.call('POST', `/v1/payments/${declined.id}/capture`, { idem, body: {} });
    expect(first.status).toBe(409);
    const again = await api.call('POST', `/v1/payments/${declined.id}/capture`, { idem, body: {} });
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([409, first.text, 'true']);
  });

  it('the same key with another body, path or method is idempotency_key_reused (422)', async () => {
    const idem = newKey();
    const body = paymentBody();
    expect((await api.call('POST', '/v1/payments', { idem, body })).status).toBe(201);
    const other = await api.call('POST', '/v1/payments', { idem, body: { ...body, amount: 5001 } });
    expect(other.status).toBe(422);
    expect(other.json).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
    const otherPath = await api.call('POST', '/v1/payments/pay_0000000000000000000000000/void', { idem });
    expect(otherPath.json.code).toBe('idempotency_key_reused');
    expect(await paymentsWithReference(body['reference'] as string)).toBe(1);
  });

  it('missing key is 400 idempotency_key_missing; longer than 255 is idempotency_key_invalid; nothing written', async () => {
    const before = await rowCounts(api.gw);
    const missing = await api.call('POST', '/v1/payments', { idem: null, body: paymentBody() });
    expect([missing.status, missing.json.code]).toEqual([400, 'idempotency_key_missing']);
    const long = await api.call('POST', '/v1/payments', { idem: 'k'.repeat(256), body: paymentBody() });
    expect([long.status, long.json.code]).toEqual([400, 'idempotency_key_invalid']);
    expect((await api.call('POST', '/v1/payments', { idem: 'k'.repeat(255), body: paymentBody() })).status).toBe(201);
    const after = await rowCounts(api.gw);
    expect(after.payments).toBe(before.payments! + 1);
  });

  it('a validation failure is not stored: the same key then works with a valid body', async () => {
    const idem = newKey();
    const bad = await api.call('POST', '/v1/payments', { idem, body: paymentBody({ amount: -1 }) });
    expect(bad.status).toBe(400);
    expect(await count('SELECT count(*) AS n FROM idempotency_records WHERE key = $1', [idem])).toBe(0);
    expect((await api.call('POST', '/v1/payments', { idem, body: paymentBody() })).status).toBe(201);
  });

  it('keys are scoped per merchant', async () => {
    const other = await api.newMerchant('idem-other');
    const idem = newKey();
    const a = await api.call('POST', '/v1/payments', { idem, body: paymentBody() });
    const b = await api.call('POST', '/v1/payments', { idem, key: other.apiKey, body: paymentBody({ amount: 77 }) });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.json.id).not.toBe(a.json.id);
  });

  it('while the first request executes, the same key answers 409 with Retry-After', async () => {
    const slow = api.gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
    await slow.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 1200, count: 1 });
    const idem = newKey();
    const body = paymentBody();
    const first = api.call('POST', '/v1/payments', { idem, body });
    await new Promise((r) => setTimeout(r, 300));
    const second = await api.call('POST', '/v1/payments', { idem, body });
    expect(second.status).toBe(409);
    expect(second.json.code).toBe('idempotency_request_in_progress');
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await first).status).toBe(201);
  });

  it('20 concurrent identical requests create one payment: one 201/202, the rest 409 or byte-identical replays', async () => {
    const idem = newKey();
    const body = paymentBody();
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.call('POST', '/v1/payments', { idem, body })));
    const executed = answers.filter((a) => (a.status === 201 || a.status === 202) && a.headers.get('idempotent-replayed') === null);
    expect(executed).toHaveLength(1);
    for (const a of answers) {
      if (a === executed[0]) continue;
      if (a.status === 409) expect(a.json.code).toBe('idempotency_request_in_progress');
      else expect([a.headers.get('idempotent-replayed'), a.text]).toEqual(['true', executed[0]!.text]);
    }
    expect(await paymentsWithReference(body['reference'] as string)).toBe(1);
  });

  it('a retry after the serving process died mid-request resumes the committed payment and stores the answer', async () => {
    // What a killed process leaves behind: the payment committed with the key, the lease expired, no answer.
    const idem = newKey();
    const body = paymentBody();
    const fingerprint = requestFingerprint('POST', '/v1/payments', body, 'test');
    await api.gw.db.pool.query(
      `INSERT INTO idempotency_records (merchant_id, key, fingerprint, status, locked_until, expires_at) VALUES ($1, $2, $3, 'in_progress', now() + interval '1 hour', now() + interval '7 days')`,
      [api.merchantId, idem, fingerprint],
    );
    const started = await startPayment(api.gw.rt, api.merchantId, {
      amount: 5000, currency: 'EUR', reference: body['reference'] as string, captureMethod: 'manual', allowPartialAuthorization: false,
      paymentMethod: { test_card: CARD_OK }, metadata: {},
    }, { inTransaction: async (tx, id) => void (await tx.execute(sql`UPDATE idempotency_records SET payment_id = ${id} WHERE key = ${idem}`)) });
    if (!started.ok) throw new Error(started.message);

    const whileLeased = await api.call('POST', '/v1/payments', { idem, body });
    expect(whileLeased.status).toBe(409);
    await api.gw.db.pool.query(`UPDATE idempotency_records SET locked_until = now() - interval '1 second' WHERE key = $1`, [idem]);

    const resumed = await api.call('POST', '/v1/payments', { idem, body });
    expect(resumed.status).toBe(201);
    expect(resumed.json).toMatchObject({ id: started.payment.id, status: 'authorized' });
    expect(await paymentsWithReference(body['reference'] as string)).toBe(1);
    const replay = await api.call('POST', '/v1/payments', { idem, body });
    expect([replay.headers.get('idempotent-replayed'), replay.text]).toEqual(['true', resumed.text]);
  });

  it('a capture retried after its process died does not capture twice', async () => {
    const p = (await api.call('POST', '/v1/payments', { body: paymentBody({ amount: 3000 }) })).json;
    const idem = newKey();
    const first = await api.call('POST', `/v1/payments/${p.id}/capture`, { idem, body: { amount: 1000, final: false } });
    expect(first.status).toBe(200);
    // Pretend the answer was never stored: the record is back in progress with a dead lease.
    await api.gw.db.pool.query(`UPDATE idempotency_records SET status = 'in_progress', response_status = NULL, response_body = NULL, locked_until = now() - interval '1 second' WHERE key = $1`, [idem]);
    const retry = await api.call('POST', `/v1/payments/${p.id}/capture`, { idem, body: { amount: 1000, final: false } });
    expect(retry.status).toBe(200);
    expect(retry.json.amount_captured).toBe(1000);
    expect(await count('SELECT count(*) AS n FROM captures WHERE payment_id = $1', [p.id])).toBe(1);
  });

  it('a refund whose execution failed after it committed is not requested again by the retry', async () => {
    const p = (await api.call('POST', '/v1/payments', { body: paymentBody({ amount: 3000, capture_method: 'automatic' }) })).json;
    const idem = newKey();
    const first = await api.call('POST', `/v1/payments/${p.id}/refunds`, { idem, body: { amount: 1000 } });
    expect(first.status).toBe(201);
    // What the handler's failure path leaves when execution throws after the refund committed (a
    // connection cut while it waited): the record in progress under its lease, then releaseClaim.
    const rec = (
      await api.gw.db.pool.query<{ locked_until: Date; created_at: Date; payment_id: string | null }>(
        `UPDATE idempotency_records SET status = 'in_progress', response_status = NULL, response_body = NULL, locked_until = $2
          WHERE key = $1 RETURNING locked_until, created_at, payment_id`,
        [idem, new Date(Date.now() + 60_000)],
      )
    ).rows[0]!;
    await releaseClaim(api.gw.db.db, { merchantId: api.merchantId, key: idem, fingerprint: '', lease: rec.locked_until, createdAt: rec.created_at, paymentId: rec.payment_id, resumed: false }, new Date());
    const retry = await api.call('POST', `/v1/payments/${p.id}/refunds`, { idem, body: { amount: 1000 } });
    expect(retry.status).toBe(201);
    expect(retry.json.id).toBe(first.json.id);
    expect(await count('SELECT count(*) AS n FROM refunds WHERE payment_id = $1', [p.id])).toBe(1);
  });

  it('records past retention are purged, and an expired key is free again', async () => {
    const idem = newKey();
    const body = paymentBody();
    const first = await api.call('POST', '/v1/payments', { idem, body });
    await api.gw.db.pool.query(`UPDATE idempotency_records SET expires_at = now() - interval '1 second' WHERE key = $1`, [idem]);
    const fresh = await api.call('POST', '/v1/payments', { idem, body: { ...body, amount: 4321 } });
    expect(fresh.status).toBe(201);
    expect(fresh.json.id).not.toBe(first.json.id);
    await api.gw.db.pool.query(`UPDATE idempotency_records SET expires_at = now() - interval '1 second' WHERE key = $1`, [idem]);
    expect(await purgeExpiredIdempotencyRecords(api.gw.rt.database.db, new Date())).toBeGreaterThanOrEqual(1);
    expect(await count('SELECT count(*) AS n FROM idempotency_records WHERE key = $1', [idem])).toBe(0);
  });
});
