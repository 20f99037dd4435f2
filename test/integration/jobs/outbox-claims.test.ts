// The claim token: one execution at a time holds an outbox row. A live lease is never taken, not
// even by a job with the same id; an expired one is; only the holder renews or gives the row back;
// and the row remembers how often it was claimed, which is how a late answer is judged
// (src/core/execution-claim.ts). The catch-rate run found no test that failed when a live lease
// could be taken (docs/testing.md).

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimAsApplied, claimOutboxRow, executionToken, releaseOutboxRow, renewOutboxClaim } from '../../../src/jobs/outbox-claims.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('jobs_outbox_claims');
});
afterAll(async () => db?.drop());

const LEASE_MS = 10_000;
const t0 = new Date('2026-12-02T10:00:00Z');
const at = (ms: number): Date => new Date(t0.getTime() + ms);

async function newRow(): Promise<number> {
  const r = await db.db.execute<{ id: string }>(sql`INSERT INTO outbox (kind, payload, run_at) VALUES ('provider_call', '{}'::jsonb, ${t0}) RETURNING id`);
  return Number(r.rows[0]!.id);
}

describe('outbox claims', () => {
  it('a live lease is not taken by another execution, even one of the same job; an expired one is', async () => {
    const id = await newRow();
    const first = executionToken('ob_1');
    const twin = executionToken('ob_1');
    expect(await claimOutboxRow(db.db, id, first, t0, LEASE_MS)).toMatchObject({ ok: true, row: { id, attempts: 1 } });
    expect(await claimOutboxRow(db.db, id, twin, at(LEASE_MS - 1), LEASE_MS)).toEqual({ ok: false, reason: 'claimed' });
    expect(await claimAsApplied(db.db, id)).toEqual({ token: first, executions: 1 });

    // Past the lease (the first execution stalled): the twin takes it, and the row counts two claims.
    expect(await claimOutboxRow(db.db, id, twin, at(LEASE_MS + 1), LEASE_MS)).toMatchObject({ ok: true, row: { attempts: 2 } });
    expect(await claimAsApplied(db.db, id)).toEqual({ token: twin, executions: 2 });
  });

  it('only the holder renews the lease or gives the row back', async () => {
    const id = await newRow();
    const holder = executionToken('ob_2');
    const other = executionToken('ob_2');
    await claimOutboxRow(db.db, id, holder, t0, LEASE_MS);
    expect(await renewOutboxClaim(db.db, id, other, at(1_000), LEASE_MS)).toBe(false);
    expect(await renewOutboxClaim(db.db, id, holder, at(1_000), LEASE_MS)).toBe(true);
    // Renewed: still held past the first lease's end.
    expect(await claimOutboxRow(db.db, id, other, at(LEASE_MS + 500), LEASE_MS)).toEqual({ ok: false, reason: 'claimed' });
    await releaseOutboxRow(db.db, id, other, 'not mine');
    expect(await claimOutboxRow(db.db, id, other, at(LEASE_MS + 600), LEASE_MS)).toEqual({ ok: false, reason: 'claimed' });
    await releaseOutboxRow(db.db, id, holder, 'infrastructure failure');
    expect(await claimOutboxRow(db.db, id, other, at(LEASE_MS + 700), LEASE_MS)).toMatchObject({ ok: true, row: { attempts: 2 } });
  });

  it('a done row is never claimed', async () => {
    const id = await newRow();
    await db.db.execute(sql`UPDATE outbox SET status = 'done', done_at = ${t0} WHERE id = ${id}`);
    expect(await claimOutboxRow(db.db, id, executionToken('ob_3'), t0, LEASE_MS)).toEqual({ ok: false, reason: 'done' });
    expect(await claimOutboxRow(db.db, id + 1_000_000, executionToken('ob_4'), t0, LEASE_MS)).toEqual({ ok: false, reason: 'missing' });
  });
});
