// `switchyard discrepancies list|resolve` through the launcher against a real database: listing by
// status and category (text and --json), resolving with a note under the operator's name (the
// owner is the operator whose token the CLI holds; the resolution is a history row of its own),
// late approvals closing only with the provider's word or a reason from the fixed list,
// and one clear line with exit code 1 for every kind of bad input; a finding that reopens a resolved
// one names it, with its amounts and history.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/core/ids.ts';
import { OPERATOR_ENV, runCli } from '../helpers/cli.ts';
import type { CliResult } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { REDIS_URL } from '../helpers/runtime.ts';

let db: TestDatabase;
const ids = { dispute: newId('discrepancy', Date.now() - 2_000), ghost: newId('discrepancy', Date.now() - 1_000), late: newId('discrepancy') };

beforeAll(async () => {
  db = await createTestDatabase('discrepancies_cli');
  const insert = `INSERT INTO discrepancies (id, kind, category, detail, connector, provider_ref, dedupe_key, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
  await db.pool.query(insert, [ids.dispute, 'provider_side_change', 'provider_side_change', 'the provider shows a dispute we were never notified about', 'stripe_eu', 'pi_1', 'k1', new Date(Date.now() - 2_000)]);
  await db.pool.query(insert, [ids.ghost, 'no_counterpart', 'no_counterpart', 'attempt 1 is authorized here; the provider has no record of it', 'stripe_eu', 'pi_ghost', 'k2', new Date(Date.now() - 1_000)]);
  await db.pool.query(insert, [ids.late, 'late_approval', null, 'approval for an attempt we gave up on', null, null, null, new Date()]);
});
afterAll(async () => db?.drop());

describe('a reopened finding', () => {
  it('lists with the resolved row it reopens, its amounts and history, and resolves like any other', async () => {
    const old = newId('discrepancy', Date.now() - 5_000);
    const reopened = newId('discrepancy', Date.now() - 4_000);
    const amounts = (returned: number) => JSON.stringify({ provider: { status: 'succeeded', returned }, ours: { refunded: returned } });
    await db.pool.query(
      `INSERT INTO discrepancies (id, kind, category, detail, connector, provider_ref, dedupe_key, created_at, amounts)
       VALUES ($1, 'provider_side_change', 'provider_side_change', 'first', 'stripe_eu', 'pi_r', 'k_r', $2, $3)`,
      [old, new Date(Date.now() - 5_000), amounts(400)],
    );
    await db.pool.query(`INSERT INTO discrepancy_resolutions (discrepancy_id, operator, note) VALUES ($1, 'bob', 'paid by transfer')`, [old]);
    await db.pool.query(
      `INSERT INTO discrepancies (id, kind, category, detail, connector, provider_ref, dedupe_key, created_at, amounts, history, reopens)
       VALUES ($1, 'provider_side_change', 'provider_side_change', 'second', 'stripe_eu', 'pi_r', 'k_r', $2, $3, $4, $5)`,
      [reopened, new Date(Date.now() - 4_000), amounts(1_400), JSON.stringify([{ at: new Date().toISOString(), detail: 'earlier', amounts: null }]), old],
    );
    // One open row per key: a second open row with the same key is refused.
    await expect(db.pool.query(`INSERT INTO discrepancies (id, kind, category, detail, dedupe_key) VALUES ($1, 'x', 'provider_side_change', 'dup', 'k_r')`, [newId('discrepancy')])).rejects.toThrow(/discrepancies_open_dedupe_key/);
    const listed = JSON.parse((await cli(['list', '--status', 'all', '--json'])).stdout) as { discrepancies: { id: string; reopens: string | null; amounts: unknown; history: unknown[] }[] };
    const row = listed.discrepancies.find((d) => d.id === reopened)!;
    expect([row.reopens, row.amounts, row.history.length]).toEqual([old, JSON.parse(amounts(1_400)), 1]);
    expect((await cli(['list'])).stdout).toContain(`second (reopens ${old}) [changed 1×]`);
    const r = await cli(['resolve', reopened, '--note', 'second transfer']);
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);
});

const cli = (args: string[], env: Record<string, string> = OPERATOR_ENV.alice): Promise<CliResult> => runCli(['discrepancies', ...args], { DATABASE_URL: db.url, REDIS_URL, ...env });
const oneLine = (r: CliResult): [number, string[]] => [r.code, r.stderr.trim().split('\n')];

describe('switchyard discrepancies', () => {
  it('list: open ones newest first, by category, as JSON', async () => {
    const all = await cli(['list']);
    expect(all.code, all.stderr).toBe(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines[0]).toBe('3 open discrepancies');
    expect(lines.slice(1).map((l) => l.split('\t').slice(0, 3))).toEqual([
      [ids.late, 'late_approval', 'open'],
      [ids.ghost, 'no_counterpart', 'open'],
      [ids.dispute, 'provider_side_change', 'open'],
    ]);
    const byCategory = JSON.parse((await cli(['list', '--category', 'no_counterpart', '--json'])).stdout) as { count: number; discrepancies: { id: string; owner: string; provider_ref: string }[] };
    expect(byCategory.count).toBe(1);
    expect(byCategory.discrepancies.map((d) => [d.id, d.owner, d.provider_ref])).toEqual([[ids.ghost, 'operations', 'pi_ghost']]);
    expect((await cli(['list', '--status', 'resolved'])).stdout.split('\n')[0]).toBe('2 resolved discrepancies'); // the reopened pair above
  }, 60_000);

  it('resolve: status, note, operator and time derived from the resolution row; listed as resolved; a second resolve is refused', async () => {
    const r = await cli(['resolve', ids.dispute, '--note', 'dispute evidence submitted by hand']);
    expect([r.code, r.stdout.trim()], r.stderr).toEqual([0, `discrepancy ${ids.dispute} resolved by alice: dispute evidence submitted by hand`]);
    const history = (await db.pool.query<{ operator: string; note: string; reason: string | null }>(`SELECT operator, note, reason FROM discrepancy_resolutions WHERE discrepancy_id = $1`, [ids.dispute])).rows;
    expect(history).toEqual([{ operator: 'alice', note: 'dispute evidence submitted by hand', reason: null }]);
    const row = (await db.pool.query<{ status: string; owner: string; resolution: string; resolved_at: Date | null }>(`SELECT status, owner, resolution, resolved_at FROM discrepancies WHERE id = $1`, [ids.dispute])).rows[0]!;
    expect([row.status, row.owner, row.resolution, row.resolved_at instanceof Date]).toEqual(['resolved', 'alice', 'dispute evidence submitted by hand', true]);
    const resolved = JSON.parse((await cli(['list', '--status', 'resolved', '--json'])).stdout) as { discrepancies: { id: string; status: string; resolution: string }[] };
    expect(resolved.discrepancies.filter((d) => d.id === ids.dispute).map((d) => [d.id, d.status, d.resolution])).toEqual([[ids.dispute, 'resolved', 'dispute evidence submitted by hand']]);
    expect((await cli(['list'])).stdout.split('\n')[0]).toBe('2 open discrepancies');

    const again = oneLine(await cli(['resolve', ids.dispute, '--note', 'again']));
    expect(again[0]).toBe(1);
    expect(again[1]).toHaveLength(1);
    expect(again[1][0]).toMatch(new RegExp(`^discrepancy ${ids.dispute} is already resolved \\(.*, by alice\\): dispute evidence submitted by hand$`));
    // Bob's token names bob; nobody can name themselves.
    const byBob = await cli(['resolve', ids.ghost, '--note', 'attempt voided by the provider team'], OPERATOR_ENV.bob);
    expect(byBob.stdout.trim(), byBob.stderr).toBe(`discrepancy ${ids.ghost} resolved by bob: attempt voided by the provider team`);
    expect((await db.pool.query<{ owner: string }>(`SELECT owner FROM discrepancies WHERE id = $1`, [ids.ghost])).rows[0]!.owner).toBe('bob');
    expect(oneLine(await cli(['resolve', ids.ghost, '--owner', 'mallory', '--note', 'x']))[1]).toEqual(["error: unknown option '--owner'", '(run with --help for usage)']);
  }, 60_000);

  it('a late approval closes only on the provider\'s word or with a reason from the list; every resolution is audited', async () => {
    const refused = oneLine(await cli(['resolve', ids.late, '--note', 'looked at it']));
    expect(refused[0]).toBe(1);
    expect(refused[1]).toEqual([`discrepancy ${ids.late} (late_approval) is about customer money the provider has not confirmed returned (no attempt is recorded for it): give --reason (returned_outside_switchyard, confirmed_with_provider, customer_refunded_otherwise, written_off, duplicate_finding) with the note`]);
    expect(oneLine(await cli(['resolve', ids.late, '--note', 'x', '--reason', 'because']))).toEqual([1, ['--reason "because" is not one of returned_outside_switchyard, confirmed_with_provider, customer_refunded_otherwise, written_off, duplicate_finding']]);
    expect((await db.pool.query<{ status: string }>(`SELECT status FROM discrepancies WHERE id = $1`, [ids.late])).rows[0]!.status).toBe('open');
    const ok = await cli(['resolve', ids.late, '--note', 'refunded in the Stripe dashboard, ticket OPS-7', '--reason', 'returned_outside_switchyard']);
    expect(ok.stdout.trim(), ok.stderr).toBe(`discrepancy ${ids.late} resolved by alice (returned_outside_switchyard): refunded in the Stripe dashboard, ticket OPS-7`);
    const audit = (await db.pool.query<{ operator: string; action: string; target: string; after: { reason: string | null } }>(`SELECT operator, action, target, after FROM operator_audit WHERE action = 'discrepancy.resolve' ORDER BY id`)).rows;
    expect(audit.map((a) => [a.operator, a.target])).toEqual([['alice', expect.stringMatching(/^dsc_/)], ['alice', ids.dispute], ['bob', ids.ghost], ['alice', ids.late]]);
    expect(audit.at(-1)!.after.reason).toBe('returned_outside_switchyard');
  }, 60_000);

  it('bad input: one line, exit code 1', async () => {
    expect(oneLine(await cli(['list', '--category', 'bogus']))).toEqual([1, ['--category "bogus" is not one of missed_notification, unapplied_event, provider_side_change, no_counterpart, amount_mismatch, missing_report']]);
    expect(oneLine(await cli(['list', '--status', 'closed']))).toEqual([1, ['--status "closed" is not one of open, resolved, all']]);
    expect(oneLine(await cli(['resolve', 'pay_123', '--note', 'x']))).toEqual([1, ['"pay_123" is not a discrepancy id (dsc_…; see switchyard discrepancies list)']]);
    expect(oneLine(await cli(['resolve', newId('discrepancy'), '--note', 'x']))).toEqual([1, [expect.stringMatching(/^no discrepancy dsc_/) as unknown as string]]);
    expect(oneLine(await cli(['resolve', ids.late, '--note', '   ']))).toEqual([1, ['--note must say what was done (1 to 2000 characters)']]);
    expect(oneLine(await cli(['resolve', ids.late, '--note', 'x'], { SWITCHYARD_OPERATORS: OPERATOR_ENV.alice.SWITCHYARD_OPERATORS }))).toEqual([1, ['this command is recorded in the audit trail under your operator name: set SWITCHYARD_OPERATOR_TOKEN to your operator token']]);
    expect(oneLine(await cli(['resolve', ids.late, '--note', 'x'], { ...OPERATOR_ENV.alice, SWITCHYARD_OPERATOR_TOKEN: 'not-a-token-of-anyone-at-all-0000' }))).toEqual([1, ['SWITCHYARD_OPERATOR_TOKEN is not the token of any operator in SWITCHYARD_OPERATORS or SWITCHYARD_ADMIN_TOKEN']]);
    expect((await cli(['resolve', ids.late])).code).not.toBe(0); // --note is required
  }, 60_000);
});
