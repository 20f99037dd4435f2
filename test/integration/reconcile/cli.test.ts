// `switchyard reconcile` through the launcher: with --json the last stdout line is the summary
// with exactly the documented keys; without it a progress line goes to stderr; bad input is one line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import type { CliResult } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { REDIS_URL } from '../helpers/runtime.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('reconcile_cli');
});
afterAll(async () => db?.drop());

function cli(args: string[]): Promise<CliResult> {
  return runCli(args, { DATABASE_URL: db.url, REDIS_URL });
}

describe('switchyard reconcile', () => {
  it('--json: the last line is the summary', async () => {
    const r = await cli(['reconcile', '--since', '2h', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const last = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(Object.keys(last)).toEqual(['window', 'checked', 'discrepancies', 'by_category', 'auto_resolved', 'new', 'reopened', 'updated', 'errors']);
    const w = last['window'] as { from: string; to: string };
    expect(Date.parse(w.to) - Date.parse(w.from)).toBe(2 * 3_600_000);
    expect(last['by_category']).toEqual({ missed_notification: 0, unapplied_event: 0, provider_side_change: 0, no_counterpart: 0, amount_mismatch: 0, missing_report: 0 });
    expect(r.stderr).not.toContain('reconcile [');
  }, 60_000);

  it('without --json: progress on stderr, one summary line; bad input is one line', async () => {
    const r = await cli(['reconcile', '--since', '24h', '--connector', 'stripe_eu']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('reconcile [#] 1/1 stripe_eu');
    expect(r.stdout).toMatch(/^reconciled .* 0 discrepancies, 0 auto-resolved, 0 new\n$/);
    const bad = await cli(['reconcile', '--since', 'yesterday']);
    expect([bad.code, bad.stderr.trim()]).toEqual([1, '--since "yesterday" is not a duration such as 90m, 24h or 7d']);
    const unknown = await cli(['reconcile', '--connector', 'nope', '--json']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split('\n').at(-1)).toMatch(/^no connector account "nope"/);
  }, 60_000);
});
