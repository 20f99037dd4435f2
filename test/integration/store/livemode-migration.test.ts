// Migration 0024 gives the payments made before modes their livemode, by the rule a legacy key's
// payment gets now (src/routing/select.ts paymentLivemode): live when a candidate account is live
// (none: when an account its route named is), each account's mode read from the routing snapshot
// the payment was routed with. Those snapshots carry no mode (and no secrets): a sandbox is test,
// any other account live. A payment whose snapshot is gone is live.
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS_DIR } from '../../../src/store/migrate.ts';
import { listPayments, loadPayment } from '../../../src/store/payment-queries.ts';
import { RoutingSnapshotStore } from '../../../src/store/routing-snapshots.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

/** A snapshot as buildSnapshot wrote it before modes: each account's type, sandbox flag and retention. */
const OLD_SNAPSHOT = {
  version: 'rs_before_modes',
  connectors: { stripe_sb: { type: 'stripe', sandbox: true, retentionMs: null }, stripe_live: { type: 'stripe', sandbox: false, retentionMs: null } },
  rules: [], default: { priority: ['stripe_live', 'stripe_sb'] }, maxAttempts: 3, declines: {},
};

const skip = (connector: string) => ({ connector, reason: 'no payment method token for this connector' });

/** Payment id -> its routing decision (and snapshot), and the livemode the migration must give it. */
const CASES: Record<string, { candidates: string[]; skipped: { connector: string; reason: string }[]; snapshot?: string; live: boolean }> = {
  pay_test_only: { candidates: ['stripe_sb'], skipped: [skip('stripe_live')], live: false },
  pay_live_first: { candidates: ['stripe_live', 'stripe_sb'], skipped: [], live: true },
  pay_live_second: { candidates: ['stripe_sb', 'stripe_live'], skipped: [], live: true },
  pay_none_named_live: { candidates: [], skipped: [skip('stripe_live')], live: true },
  pay_none_named_test: { candidates: [], skipped: [skip('stripe_sb')], live: false },
  pay_account_gone: { candidates: ['stripe_gone'], skipped: [], live: false },
  pay_snapshot_gone: { candidates: ['stripe_sb'], skipped: [], snapshot: 'rs_never_stored', live: true },
};

describe('migration 0024: payments get their livemode', () => {
  let t: TestDatabase;

  beforeAll(async () => {
    t = await createTestDatabase('store_livemode_migration', { migrate: false });
    const before = mkdtempSync(join(tmpdir(), 'sy-livemode-migrations-'));
    for (const f of readdirSync(MIGRATIONS_DIR)) if (f < '0024') copyFileSync(join(MIGRATIONS_DIR, f), join(before, f));
    await migrate(t.url, { dir: before });
    await t.pool.query(`INSERT INTO merchants (id, name) VALUES ('mer_old', 'Old shop')`);
    await t.pool.query(`INSERT INTO routing_snapshots (version, content) VALUES ($1, $2)`, [OLD_SNAPSHOT.version, JSON.stringify(OLD_SNAPSHOT)]);
    for (const [id, c] of Object.entries(CASES)) {
      const snapshot = c.snapshot ?? OLD_SNAPSHOT.version;
      await t.pool.query(
        `INSERT INTO payments (id, merchant_id, reference, amount, currency, state, capture_method, allow_partial, routing, routing_snapshot, version, created_at, updated_at, deadline_at)
         VALUES ($1, 'mer_old', $1, 1000, 'EUR', 'created', 'manual', false, $2, $3, 0, now(), now(), now() + interval '3 days')`,
        [id, JSON.stringify({ snapshot, rule: 'default', candidates: c.candidates, skipped: c.skipped }), snapshot],
      );
    }
    expect((await migrate(t.url)).applied).toContain('0024_payment_livemode');
  });
  afterAll(async () => t?.drop());

  it('each payment is live or test by its accounts as its snapshot saw them; the column is required from now on', async () => {
    const rows = await t.pool.query<{ id: string; livemode: boolean }>(`SELECT id, livemode FROM payments ORDER BY id`);
    expect(Object.fromEntries(rows.rows.map((r) => [r.id, r.livemode]))).toEqual(Object.fromEntries(Object.entries(CASES).map(([id, c]) => [id, c.live])));
    const column = await t.pool.query<{ is_nullable: string }>(`SELECT is_nullable FROM information_schema.columns WHERE table_name = 'payments' AND column_name = 'livemode'`);
    expect(column.rows[0]?.is_nullable).toBe('NO');
  });

  it('the migrated payments are found by mode, and the old snapshot reads with the same modes', async () => {
    expect((await loadPayment(t.db, 'mer_old', 'pay_live_first', false))).toBeNull();
    expect((await loadPayment(t.db, 'mer_old', 'pay_live_first', true))?.livemode).toBe(true);
    expect((await loadPayment(t.db, 'mer_old', 'pay_test_only', null))?.livemode).toBe(false);
    const live = await listPayments(t.db, 'mer_old', true, {}, { limit: 100 });
    expect(live.data.map((p) => p.id).sort()).toEqual(Object.keys(CASES).filter((id) => CASES[id]!.live).sort());
    const snapshot = await new RoutingSnapshotStore().load(t.db, OLD_SNAPSHOT.version);
    expect(Object.fromEntries(Object.entries(snapshot!.connectors).map(([n, c]) => [n, c.mode]))).toEqual({ stripe_sb: 'test', stripe_live: 'live' });
  });
});
