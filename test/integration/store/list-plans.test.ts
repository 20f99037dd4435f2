// Every filter of the merchant API's lists is an index scan: on a database filled with 100k
// payments (and 27k refunds, 50k events) by one INSERT … SELECT generate_series each, the
// statements the list functions really send (captured from drizzle's logger) are EXPLAINed with
// their parameters, for every combination of filters, with no cursor, starting_after and
// ending_before, for a merchant holding 90% of the rows and one holding 10%, for a key of either
// mode and a legacy key of both. No plan may read the
// listed table with a Seq Scan, and each must read it through an index.

import { drizzle } from 'drizzle-orm/node-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/store/db.ts';
import type { PageRequest } from '../../../src/store/keyset-page.ts';
import { listMerchantEvents } from '../../../src/store/merchant-event-queries.ts';
import type { EventFilters } from '../../../src/store/merchant-event-queries.ts';
import { listPayments } from '../../../src/store/payment-queries.ts';
import type { PaymentFilters } from '../../../src/store/payment-queries.ts';
import { listRefunds } from '../../../src/store/refund-queries.ts';
import type { RefundFilters } from '../../../src/store/refund-queries.ts';
import * as schema from '../../../src/store/schema.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

const BIG = 'mer_big';
const SMALL = 'mer_small';
const NOW = Date.parse('2026-12-01T00:00:00Z');
/** The key's mode: a legacy key's (both), and test, the minority mode of the fill (a quarter of the payments). */
const MODES = [null, false] as const;

let t: TestDatabase;
let db: Db;
const logged: { sql: string; params: unknown[] }[] = [];

beforeAll(async () => {
  t = await createTestDatabase('store_list_plans');
  db = drizzle({ client: t.pool, schema, logger: { logQuery: (sql, params) => logged.push({ sql, params }) } });
  const c = await t.pool.connect();
  try {
    await c.query('BEGIN');
    // The fill skips triggers (the edge guard admits only a new payment's states) and foreign-key
    // checks: it writes the rows a long history would have left, not a history.
    await c.query(`SET LOCAL session_replication_role = replica`);
    await c.query(`INSERT INTO merchants (id, name) VALUES ('${BIG}', 'big'), ('${SMALL}', 'small')`);
    // One row a minute back from NOW; every tenth is the small merchant's. Filter values spread
    // independently (different moduli), as a real mix would be.
    await c.query(`
      INSERT INTO payments (id, merchant_id, reference, amount, currency, state, capture_method, allow_partial, routing, routing_snapshot,
                            version, created_at, updated_at, deadline_at, connector, livemode)
      SELECT 'pay_' || lpad(to_hex(g), 26, '0'),
             CASE WHEN g % 10 = 0 THEN '${SMALL}' ELSE '${BIG}' END,
             'order-' || (g % 40000),
             ((g * 7919) % 200000) + 1,
             (ARRAY['EUR', 'EUR', 'USD', 'GBP', 'JPY'])[g % 5 + 1],
             (ARRAY['captured', 'captured', 'captured', 'authorized', 'declined', 'failed', 'voided', 'expired', 'needs_review', 'authorizing', 'requires_action'])[(g / 7) % 11 + 1],
             'manual', false, '{}'::jsonb, 'fill', 1,
             to_timestamp(${NOW / 1000}) - g * interval '1 minute', to_timestamp(${NOW / 1000}), to_timestamp(${NOW / 1000}) + interval '3 days',
             (ARRAY['stripe_eu', 'adyen_eu', 'stripe_us'])[(g / 3) % 3 + 1],
             (g / 11) % 4 <> 0
        FROM generate_series(1, 100000) g`);
    await c.query(`
      INSERT INTO refunds (id, payment_id, merchant_id, no, amount, status, provider_key, calls, created_at, updated_at)
      SELECT 'rfd_' || substr(p.id, 5), p.id, p.merchant_id, 1, 100, (ARRAY['succeeded', 'succeeded', 'failed', 'pending', 'reversed'])[(hashtext(p.id) & 7) % 5 + 1],
             p.id || ':refund:1', 1, p.created_at + interval '1 hour', p.created_at + interval '1 hour'
        FROM payments p WHERE p.state = 'captured'`);
    await c.query(`
      INSERT INTO merchant_events (id, merchant_id, payment_id, type, payload, created_at)
      SELECT 'evt_' || lpad(to_hex(g), 26, '0'), CASE WHEN (g * 2) % 10 = 0 THEN '${SMALL}' ELSE '${BIG}' END,
             CASE WHEN g % 7 = 0 THEN NULL ELSE 'pay_' || lpad(to_hex(g * 2), 26, '0') END,
             (ARRAY['payment.authorized', 'payment.captured', 'payment.declined', 'refund.succeeded', 'refund.failed', 'dispute.opened'])[g % 6 + 1],
             '{}'::jsonb, to_timestamp(${NOW / 1000}) - g * interval '1 minute'
        FROM generate_series(1, 50000) g`);
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK');
    throw err;
  } finally {
    c.release();
  }
  await t.pool.query('ANALYZE payments, refunds, merchant_events');
}, 120_000);
afterAll(async () => t?.drop());

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

function nodes(n: PlanNode): PlanNode[] {
  return [n, ...(n.Plans ?? []).flatMap(nodes)];
}

/** Every subset of the filters. */
function subsets<T extends object>(all: T): Partial<T>[] {
  const entries = Object.entries(all);
  return Array.from({ length: 2 ** entries.length }, (_, mask) => Object.fromEntries(entries.filter((_e, i) => (mask >> i) & 1)) as Partial<T>);
}

/** A row of `table` well inside the merchant's list, as a cursor: one of a test payment, so a test key may page from it too. */
async function middleId(table: string, merchantId: string): Promise<string> {
  const r = await t.pool.query<{ id: string }>(
    `SELECT x.id FROM ${table} x JOIN payments p ON p.id = ${table === 'payments' ? 'x.id' : 'x.payment_id'}
      WHERE x.merchant_id = $1 AND NOT p.livemode ORDER BY x.created_at DESC, x.id DESC OFFSET 300 LIMIT 1`, [merchantId]);
  return r.rows[0]!.id;
}

/**
 * Runs the list, finds the page statement it sent (the one ordered and limited on `table`), and
 * checks its plan. Answers the plan's index names, for the report of what the combinations use.
 */
async function checkPlan(table: string, run: () => Promise<unknown>, label: string): Promise<string[]> {
  logged.length = 0;
  await run();
  const page = logged.filter((q) => q.sql.startsWith('select') && q.sql.includes(`from "${table}"`) && / order by .* limit \$\d+$/.test(q.sql));
  expect(page, `${label}: one page statement`).toHaveLength(1);
  const r = await t.pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${page[0]!.sql}`, page[0]!.params);
  const all = nodes(r.rows[0]!['QUERY PLAN'][0].Plan);
  const onTable = all.filter((n) => n['Relation Name'] === table);
  expect(onTable.filter((n) => n['Node Type'] === 'Seq Scan'), `${label}: no Seq Scan on ${table}`).toEqual([]);
  expect(onTable.length + all.filter((n) => n['Node Type'] === 'Bitmap Index Scan').length, `${label}: reads ${table}`).toBeGreaterThan(0);
  expect(all.some((n) => /Index/.test(n['Node Type']) && (n['Index Name'] ?? '').length > 0), `${label}: through an index`).toBe(true);
  return all.flatMap((n) => (n['Index Name'] === undefined ? [] : [n['Index Name']]));
}

async function pages(table: string, merchantId: string): Promise<PageRequest[]> {
  const middle = await middleId(table, merchantId);
  return [{ limit: 11 }, { limit: 11, cursor: { after: middle } }, { limit: 100, cursor: { before: middle } }];
}

describe('list plans on 100k payments', () => {
  it('every combination of payment filters, each cursor, both merchants: an index scan', async () => {
    const filters: Required<PaymentFilters> = {
      status: ['authorized', 'needs_review'],
      created: { gte: '2026-11-20T00:00:00Z', lt: '2026-11-28T00:00:00Z' },
      connector: 'adyen_eu',
      currency: 'GBP',
      amount: { gte: 1000, lte: 50000 },
      reference: 'order-1234',
    };
    const used = new Set<string>();
    for (const merchantId of [BIG, SMALL]) {
      for (const page of await pages('payments', merchantId)) {
        for (const f of [...subsets(filters), { status: ['captured'] as const }]) {
          for (const mode of MODES) {
            const label = `${merchantId} ${mode} ${JSON.stringify(f)} ${JSON.stringify(page.cursor ?? null)}`;
            for (const i of await checkPlan('payments', () => listPayments(db, merchantId, mode, f, page), label)) used.add(i);
          }
        }
      }
    }
    // The filters' own indexes are what the planner picked somewhere (not only the list order's).
    expect([...used].filter((i) => i.startsWith('payments_merchant_')).sort()).toEqual(expect.arrayContaining([
      'payments_merchant_created_idx', 'payments_merchant_reference_created_idx', 'payments_merchant_state_created_idx',
    ]));
  }, 120_000);

  it('every combination of refund filters and of event filters: an index scan', async () => {
    const payment = (await t.pool.query<{ payment_id: string }>(`SELECT payment_id FROM refunds WHERE merchant_id = $1 LIMIT 1`, [BIG])).rows[0]!.payment_id;
    const refundFilters: Required<RefundFilters> = { payment, status: ['failed'], created: { gte: '2026-11-01T00:00:00Z' } };
    const eventFilters: Required<Omit<EventFilters, 'notBefore'>> = { types: ['refund.failed', 'dispute.opened'], created: { lte: '2026-11-25T00:00:00Z' } };
    for (const merchantId of [BIG, SMALL]) {
      for (const page of await pages('refunds', merchantId)) {
        for (const f of subsets(refundFilters)) {
          for (const mode of MODES) await checkPlan('refunds', () => listRefunds(db, merchantId, mode, f, page), `refunds ${merchantId} ${mode} ${JSON.stringify(f)} ${JSON.stringify(page.cursor ?? null)}`);
        }
      }
      for (const page of await pages('merchant_events', merchantId)) {
        for (const f of subsets(eventFilters)) {
          const withWindow = { ...f, notBefore: new Date(NOW - 30 * 86_400_000) };
          for (const mode of MODES) await checkPlan('merchant_events', () => listMerchantEvents(db, merchantId, mode, withWindow, page), `events ${merchantId} ${mode} ${JSON.stringify(f)} ${JSON.stringify(page.cursor ?? null)}`);
        }
      }
    }
  }, 120_000);
});
