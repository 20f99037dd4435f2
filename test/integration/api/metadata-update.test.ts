// Issue 48: POST /v1/payments/{id} {metadata} changes the metadata — a key set, a key removed with
// null, the creation limits (50 keys after the change, 40-character keys, 500-character values, no
// card numbers) — through one transition with the state unchanged and a payment.updated event;
// idempotent like every POST; another merchant's payment is not found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveredEvent, eventWithDeliveries } from '../../../src/api/resource-schemas.ts';
import { paymentBody, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

let api: ApiGateway;
beforeAll(async () => {
  api = await startApiGateway('metadata_update', { authorizationWaitMs: 8000 });
});
afterAll(async () => api?.close());

async function authorizedPayment(metadata: Record<string, string> = { order: 'A-1', channel: 'web' }): Promise<string> {
  const a = await api.call('POST', '/v1/payments', { body: paymentBody({ metadata }) });
  expect(a.status, a.text).toBe(201);
  return a.json.id;
}

describe('POST /v1/payments/{id} {metadata}', () => {
  it('sets and removes keys, keeps the state, writes one history row and a payment.updated event', async () => {
    const id = await authorizedPayment();
    const before = (await api.call('GET', `/v1/payments/${id}/timeline`)).json.data.length;
    const a = await api.call('POST', `/v1/payments/${id}`, { body: { metadata: { channel: null, shipped: 'yes' } } });
    expect(a.status, a.text).toBe(200);
    expect(a.json['metadata']).toEqual({ order: 'A-1', shipped: 'yes' });
    expect(a.json.status).toBe('authorized');
    const timeline = (await api.call('GET', `/v1/payments/${id}/timeline`)).json.data;
    expect(timeline.length).toBe(before + 1);
    const events = await api.gw.db.pool.query<{ id: string; type: string; payload: unknown }>('SELECT id, type, payload FROM merchant_events WHERE payment_id = $1 ORDER BY created_at', [id]);
    expect(events.rows.map((e) => e.type)).toContain('payment.updated');
    // The bodies an endpoint receives have the shape the OpenAPI's webhooks section gives them; the event read back too.
    for (const e of events.rows) deliveredEvent.parse(e.payload);
    const updatedEvent = events.rows.find((e) => e.type === 'payment.updated')!;
    expect(deliveredEvent.parse(updatedEvent.payload).data.payment.metadata).toEqual({ order: 'A-1', shipped: 'yes' });
    eventWithDeliveries.parse((await api.call('GET', `/v1/events/${updatedEvent.id}`)).json);
    // The same change again changes nothing: the metadata and the version stay, and no second event.
    const again = await api.call('POST', `/v1/payments/${id}`, { body: { metadata: { channel: null, shipped: 'yes' } } });
    expect(again.status).toBe(200);
    expect(again.json['metadata']).toEqual({ order: 'A-1', shipped: 'yes' });
    const updated = await api.gw.db.pool.query("SELECT 1 FROM merchant_events WHERE payment_id = $1 AND type = 'payment.updated'", [id]);
    expect(updated.rowCount).toBe(1);
  });

  it('replays a retried request with the same key, and refuses the key reused for another payment', async () => {
    const id = await authorizedPayment();
    const other = await authorizedPayment();
    const first = await api.call('POST', `/v1/payments/${id}`, { idem: 'meta-1', body: { metadata: { step: '1' } } });
    const replay = await api.call('POST', `/v1/payments/${id}`, { idem: 'meta-1', body: { metadata: { step: '1' } } });
    expect(replay.status).toBe(first.status);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await api.call('POST', `/v1/payments/${other}`, { idem: 'meta-1', body: { metadata: { step: '1' } } })).status).toBe(422);
  });

  it('keeps the limits: at most 50 keys after the change, no card numbers, at least one key; nothing written when refused', async () => {
    const id = await authorizedPayment(Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`k${i}`, 'v'])));
    const ok = await api.call('POST', `/v1/payments/${id}`, { body: { metadata: { k49: 'v' } } });
    expect(ok.status, ok.text).toBe(200);
    const over = await api.call('POST', `/v1/payments/${id}`, { body: { metadata: { k50: 'v' } } });
    expect(over.status).toBe(400);
    expect(over.json.errors).toEqual([{ path: 'metadata', message: 'the change would leave 51 metadata keys; at most 50' }]);
    // Removing one and adding one in the same change is fine.
    expect((await api.call('POST', `/v1/payments/${id}`, { body: { metadata: { k0: null, k50: 'v' } } })).status).toBe(200);
    const card = await api.call('POST', `/v1/payments/${id}`, { body: { metadata: { note: 'card 4242 4242 4242 4242' } } });
    expect(card.status).toBe(400);
    expect(card.text).not.toContain('4242 4242 4242 4242');
    expect((await api.call('POST', `/v1/payments/${id}`, { body: { metadata: {} } })).status).toBe(400);
    expect((await api.call('POST', `/v1/payments/${id}`, { body: { metadata: { ['x'.repeat(41)]: 'v' } } })).status).toBe(400);
    expect((await api.call('GET', `/v1/payments/${id}`)).json['metadata']).toHaveProperty('k50', 'v');
  });

  it("another merchant's payment is not found", async () => {
    const id = await authorizedPayment();
    const other = await api.newMerchant('other');
    const a = await api.call('POST', `/v1/payments/${id}`, { key: other.apiKey, body: { metadata: { x: 'y' } } });
    expect(a.status).toBe(404);
    expect((await api.call('GET', `/v1/payments/${id}`)).json['metadata']).toEqual({ order: 'A-1', channel: 'web' });
  });
});
