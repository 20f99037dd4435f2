// Operator commands through the launcher: dlq list/replay, ledger check, sandbox.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_ENV, runCli } from '../helpers/cli.ts';
import type { CliResult } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { freePort } from '../helpers/redis-server.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('cli_ops');
});
afterAll(async () => db?.drop());

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { DATABASE_URL: db.url, ...OPERATOR_ENV.alice, ...env });
}

describe('operator commands', () => {
  it('dlq list shows dead rows; replay puts one back to pending; bad ids get one line', async () => {
    expect((await cli(['dlq', 'list'])).stdout.trim()).toBe('no dead letters');
    await db.db.execute(sql`INSERT INTO outbox (kind, payload, connector, run_at, status, attempts, last_error) VALUES ('provider_call', '{}'::jsonb, 'stripe_a', now(), 'dead', 8, 'boom')`);
    const listed = await cli(['dlq', 'list', '--json']);
    const body = JSON.parse(listed.stdout) as { count: number; dead_letters: { id: number; lastError: string }[] };
    expect(body.count).toBe(1);
    expect(body.dead_letters[0]!.lastError).toBe('boom');
    const id = String(body.dead_letters[0]!.id);
    const replayed = await cli(['dlq', 'replay', id, '--queue-prefix', `sytest_cli_${id}`]);
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toContain(`dead letter ${id} replayed`);
    const row = await db.db.execute<{ status: string }>(sql`SELECT status FROM outbox WHERE id = ${Number(id)}`);
    expect(row.rows[0]!.status).toBe('pending');
    const audit = await db.db.execute<{ operator: string; action: string; target: string; before: { status: string; kind: string }; after: unknown }>(sql`SELECT operator, action, target, before, after FROM operator_audit`);
    expect(audit.rows).toEqual([{ operator: 'alice', action: 'dead_letter.replay', target: `outbox:${id}`, before: { status: 'dead', kind: 'provider_call', connector: 'stripe_a', payment_id: null }, after: { status: 'pending' } }]);
    const bad = await cli(['dlq', 'replay', 'abc']);
    expect([bad.code, bad.stderr.trim()]).toEqual([1, 'dead letter id "abc" is not a number (see switchyard dlq list)']);
    const missing = await cli(['dlq', 'replay', '424242']);
    expect([missing.code, missing.stderr.trim()]).toEqual([1, 'no dead letter 424242']);
  });

  it('ledger check passes on balanced books and fails with one line per problem', async () => {
    expect((await cli(['ledger', 'check'])).stdout).toContain('ledger ok');
    const unreachable = await cli(['ledger', 'check'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach PostgreSQL at postgres://postgres@127.0.0.1:1/none (ECONNREFUSED)');
  });

  it('sandbox runs the sandboxes on the config URLs with the control API, and stops on SIGTERM', async () => {
    const [port, control] = [await freePort(), await freePort()];
    const dir = mkdtempSync(join(tmpdir(), 'sy-cli-sandbox-'));
    const file = join(dir, 'switchyard.yaml');
    writeFileSync(file, `
connectors:
  stripe_s: { type: stripe, endpoint: "http://127.0.0.1:${port}", secret_key: sk_test_s, webhook_secrets: [whsec_s] }
routing:
  default: { priority: [stripe_s] }
`);
    const child = spawn('node', ['bin/switchyard.js', 'sandbox', '--control-port', String(control)], { env: { ...process.env, SWITCHYARD_CONFIG: file }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const deadline = Date.now() + 20_000;
    while (!out.includes('control API') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain(`sandbox stripe_s (stripe) listening on http://127.0.0.1:${port}`);
    const ledger = await fetch(`http://127.0.0.1:${control}/_sandbox/stripe_s/ledger`);
    expect(await ledger.json()).toEqual({ payments: [] });
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
