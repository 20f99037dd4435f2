// The fleet-wide take of due deliveries (src/webhooks/outbound/delivery-take.ts), on a real
// database with an injected clock: two holders (processes) together never exceed an endpoint's
// limit; a delivery left waiting is not written to; capacity goes to the merchant holding least,
// then to its endpoint holding least; a lease nobody renews expires (a dead worker blocks nothing
// for long); a renewed one does not; a deleted endpoint's pending deliveries end with it.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Payment } from '../../../src/core/payment.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { recordMerchantEvent } from '../../../src/store/merchant-event-record.ts';
import { loadPayment } from '../../../src/store/payment-queries.ts';
import { releaseLease, renewLeases, takeDueDeliveries } from '../../../src/webhooks/outbound/delivery-take.ts';
import type { TakeLimits } from '../../../src/webhooks/outbound/delivery-take.ts';
import { createEndpoint, deleteEndpoint } from '../../../src/webhooks/outbound/endpoint-store.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { insertPaymentRow } from '../store/fixtures.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('wh_take');
});
afterAll(async () => db?.drop());
beforeEach(async () => {
  await db.pool.query('TRUNCATE webhook_endpoint_leases, event_delivery_attempts, event_deliveries, merchant_events, outbox, webhook_endpoints CASCADE');
});

const T0 = new Date('2026-12-01T10:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const LIMITS: TakeLimits = { slots: 32, perEndpoint: 4, perMerchant: 16, leaseMs: 10_000 };

async function merchantWith(endpoints: number): Promise<{ id: string; endpoints: string[]; payment: Payment }> {
  const { merchant } = await createMerchant(db.db, { name: `m${Math.random()}` });
  const ids: string[] = [];
  for (let i = 0; i < endpoints; i++) ids.push((await createEndpoint(db.db, merchant.id, `https://example.com/${merchant.id}/${i}`, undefined, T0)).id);
  const pid = await insertPaymentRow(db.pool, merchant.id);
  const p = (await loadPayment(db.db, merchant.id, pid))!;
  return { id: merchant.id, endpoints: ids, payment: { ...p, routing: { snapshot: 'v1', rule: 'default', candidates: ['stripe_a'], skipped: [] } } };
}

async function events(m: { payment: Payment }, n: number, now = T0): Promise<void> {
  for (let i = 0; i < n; i++) await db.db.transaction((tx) => recordMerchantEvent(tx, { type: 'merchant_event', event: 'payment.authorized', payment: m.payment }, now));
}

const outboxSnapshot = async (): Promise<unknown[]> => (await db.pool.query<Record<string, unknown>>('SELECT id, claimed_until, claimed_by, attempts, run_at FROM outbox ORDER BY id')).rows;

describe('takeDueDeliveries', () => {
  it('two holders together take at most the limit per endpoint, and leave the waiting rows untouched', async () => {
    const m = await merchantWith(2);
    await events(m, 10); // 10 deliveries per endpoint
    const a = await takeDueDeliveries(db.db, 'host-a', T0, { ...LIMITS, slots: 3 });
    const b = await takeDueDeliveries(db.db, 'host-b', at(10), LIMITS);
    const all = [...a, ...b];
    const per = (e: string) => all.filter((t) => t.endpointId === e).length;
    expect(a).toHaveLength(3);
    expect([per(m.endpoints[0]!), per(m.endpoints[1]!)]).toEqual([4, 4]);
    expect(new Set(all.map((t) => t.outboxId)).size).toBe(8);
    const before = await outboxSnapshot();
    expect(await takeDueDeliveries(db.db, 'host-c', at(20), LIMITS)).toEqual([]);
    // Waiting wrote nothing: no new outbox row, no row changed.
    expect(await outboxSnapshot()).toEqual(before);
    expect(before).toHaveLength(20);
    // A slot freed (the attempt recorded) is taken again, by anyone.
    await releaseLease(db.db, a[0]!.outboxId, a[0]!.token);
    expect(await takeDueDeliveries(db.db, 'host-c', at(30), LIMITS)).toHaveLength(1);
  });

  it('gives capacity to the merchant holding least, then to its endpoint holding least', async () => {
    const big = await merchantWith(8);
    const small = await merchantWith(1);
    await events(big, 10);
    // The big merchant takes four slots while it is alone.
    const first = await takeDueDeliveries(db.db, 'host-a', at(2_000), { ...LIMITS, slots: 4 });
    expect(first.map((t) => t.merchantId)).toEqual(Array.from({ length: 4 }, () => big.id));
    await events(small, 10, at(1_000)); // due later than the big backlog: oldest-first would starve it
    const next = await takeDueDeliveries(db.db, 'host-a', at(2_010), { ...LIMITS, slots: 6 });
    const byMerchant = (ts: typeof next, id: string) => ts.filter((t) => t.merchantId === id).length;
    // Four for the small merchant (its endpoint's limit) before the big one gets more than its share.
    expect(byMerchant(next, small.id)).toBe(4);
    expect(byMerchant([...first, ...next], big.id)).toBe(6);
    // Within the big merchant, one endpoint each before any endpoint gets a second.
    const bigEndpoints = [...first, ...next].filter((t) => t.merchantId === big.id).map((t) => t.endpointId);
    expect(new Set(bigEndpoints).size).toBe(6);
  });

  it('caps a merchant fleet-wide', async () => {
    const m = await merchantWith(8);
    await events(m, 10);
    const taken = [
      ...(await takeDueDeliveries(db.db, 'host-a', T0, { ...LIMITS, perMerchant: 10 })),
      ...(await takeDueDeliveries(db.db, 'host-b', T0, { ...LIMITS, perMerchant: 10 })),
    ];
    expect(taken).toHaveLength(10);
  });

  it("a dead holder's leases expire; a live holder's renewal keeps them", async () => {
    const m = await merchantWith(1);
    await events(m, 10);
    const dead = await takeDueDeliveries(db.db, 'host-dead', T0, LIMITS);
    expect(dead).toHaveLength(4);
    expect(await takeDueDeliveries(db.db, 'host-b', at(9_000), LIMITS)).toEqual([]);
    // Past the lease: the endpoint's slots are free again, and the dead holder's rows are due again too.
    const after = await takeDueDeliveries(db.db, 'host-b', at(10_001), LIMITS);
    expect(after).toHaveLength(4);
    const retaken = new Set(dead.map((t) => t.outboxId));
    expect(after.every((t) => retaken.has(t.outboxId))).toBe(true);
    expect(after.every((t) => t.executions === 2)).toBe(true);

    // host-b renews at 15 s; at 21 s (past the first lease, within the renewed one) nobody else gets in.
    const held = await renewLeases(db.db, after, at(15_000), LIMITS.leaseMs);
    expect(held.size).toBe(4);
    expect(await takeDueDeliveries(db.db, 'host-c', at(21_000), LIMITS)).toEqual([]);
    // A token that lost its row renews nothing.
    expect((await renewLeases(db.db, dead, at(15_000), LIMITS.leaseMs)).size).toBe(0);
    const leases = await db.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_endpoint_leases`);
    expect(leases.rows[0]!.n).toBe(4);
  });

  it("deleting an endpoint ends its pending deliveries and their rows (nothing would take them), not other endpoints'", async () => {
    const m = await merchantWith(2);
    await events(m, 3);
    expect(await deleteEndpoint(db.db, m.id, m.endpoints[0]!, at(5))).toBe(true);
    const d = await db.db.execute<{ endpoint_id: string; status: string; last_error: string | null }>(sql`
      SELECT DISTINCT endpoint_id, status, last_error FROM event_deliveries ORDER BY endpoint_id`);
    expect(new Set(d.rows.map((r) => `${r.endpoint_id === m.endpoints[0] ? 'deleted' : 'kept'}:${r.status}:${r.last_error}`))).toEqual(new Set(['deleted:failed:endpoint deleted', 'kept:pending:null']));
    const rows = await db.db.execute<{ status: string; n: number }>(sql`SELECT status, count(*)::int AS n FROM outbox GROUP BY status ORDER BY status`);
    expect(rows.rows).toEqual([{ status: 'done', n: 3 }, { status: 'pending', n: 3 }]);
    const taken = await takeDueDeliveries(db.db, 'host-a', at(10), LIMITS);
    expect(taken.map((t) => t.endpointId)).toEqual([m.endpoints[1], m.endpoints[1], m.endpoints[1]]);
  });
});
