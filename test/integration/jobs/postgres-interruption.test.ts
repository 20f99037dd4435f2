// Postgres connections of this test's database are terminated mid-run (a failover, a restart of
// a pooler): workers back off through their infrastructure retries and resume; every payment ends
// authorized with one authorization at the provider, and nothing is left pending.
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import type { Payment } from '../../../src/core/payment.ts';
import { withDatabase } from '../../../src/store/database-url.ts';
import { settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

let gw: TestGateway;
let a: SandboxControl;

beforeAll(async () => {
  gw = await startTestGateway('jobs_pg_interruption', twoStripeConfig(), { jobBackoffMs: 200, relayRepublishMs: 1_000 });
  a = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
});
afterAll(async () => gw?.close(), 60_000);

/** The test's own reads may meet a terminated connection too: read again. */
async function waitSettled(id: string): Promise<Payment> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await gw.waitFor(id, settled, Math.max(1, deadline - Date.now()));
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Terminates every backend of this test's database only (never another test file's). */
async function terminateOwnConnections(): Promise<number> {
  const admin = new pg.Client({ connectionString: withDatabase(gw.db.url, 'postgres') });
  await admin.connect();
  try {
    const r = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [gw.db.name]);
    return r.rowCount ?? 0;
  } finally {
    await admin.end();
  }
}

describe('Postgres connections lost mid-run', () => {
  it('workers back off and resume; nothing lost, nothing doubled', async () => {
    await a.scheduleFault({ op: 'any', mode: 'latency', latencyMs: 100, count: 1_000 });
    const created = await Promise.all(Array.from({ length: 20 }, () => gw.pay()));
    let terminated = 0;
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 150));
      terminated += await terminateOwnConnections();
    }
    expect(terminated).toBeGreaterThan(0);
    const done = await Promise.all(created.map((p) => waitSettled(p.id)));
    expect(done.map((p) => p.state)).toEqual(done.map(() => 'authorized'));
    for (const p of done) expect((await a.ledger()).filter((e) => e.reference === p.attempts[0]!.id && e.authorized > 0)).toHaveLength(1);
    const pending = await gw.rt.database.db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM outbox WHERE status <> 'done' AND kind = 'provider_call'`);
    expect(Number(pending.rows[0]!.n)).toBe(0);
  }, 90_000);
});
