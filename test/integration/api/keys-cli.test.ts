// `switchyard merchants keys list|create|roll|revoke` through the CLI launcher: the resources the
// API answers, a new key's secret printed once, the API's rules (roll grace, the last full key of a
// mode), every change audited under the operator; `merchants create --mode live` and an unidentified
// creator. One CLI process per command (~2 s of CPU each), so each step checks several things.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyResource, apiKeyWithSecret } from '../../../src/api/api-key-schemas.ts';
import { authenticateMerchant, authenticatePublishableKey } from '../../../src/store/merchants.ts';
import { OPERATOR_ENV, runCli } from '../helpers/cli.ts';
import type { CliResult } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('api_keys_cli');
});
afterAll(async () => db?.drop());

const cli = (args: string[], env: Record<string, string> = {}): Promise<CliResult> => runCli(args, { DATABASE_URL: db.url, ...OPERATOR_ENV.bob, ...env });
const keyIdOf = (key: string): string => key.slice(11, 41);

describe('switchyard merchants keys', () => {
  it('create (live merchant, no operator token), keys create/list/roll/revoke, each audited', async () => {
    const made = await cli(['merchants', 'create', '--name', 'Live shop', '--mode', 'live'], { SWITCHYARD_OPERATOR_TOKEN: '' });
    expect(made.code).toBe(0);
    const m = JSON.parse(made.stdout) as { id: string; api_key: string; publishable_key: string };
    expect(m.api_key).toMatch(/^sk_sy_live_key_/);
    expect(m.publishable_key).toMatch(/^pk_sy_live_key_/);
    expect((await authenticatePublishableKey(db.db, m.publishable_key))?.key).toMatchObject({ mode: 'live', kind: 'publishable' });

    const created = await cli(['merchants', 'keys', 'create', m.id, '--role', 'payments', '--mode', 'test', '--name', 'checkout server']);
    expect(created.code).toBe(0);
    const k = apiKeyWithSecret.parse(JSON.parse(created.stdout));
    expect(k).toMatchObject({ role: 'payments', mode: 'test', name: 'checkout server' });
    expect((await authenticateMerchant(db.db, k.secret!))?.id).toBe(m.id);

    const bad = await cli(['merchants', 'keys', 'create', m.id, '--role', 'admin', '--mode', 'test', '--name', 'x']);
    expect([bad.code, bad.stderr.trim()]).toEqual([1, '--role must be one of full, payments, refunds, read_only for a secret key']);

    const rolled = await cli(['merchants', 'keys', 'roll', k.id, '--expires-in', '600']);
    expect(rolled.code).toBe(0);
    const r = JSON.parse(rolled.stdout) as { secret: string; old_key: unknown; id: string };
    expect(apiKeyResource.parse(r.old_key)).toMatchObject({ id: k.id, replaced_by: r.id });
    // The old key works through its grace; both are listed meanwhile, never with a secret.
    expect((await authenticateMerchant(db.db, k.secret!))?.id).toBe(m.id);
    expect(await authenticateMerchant(db.db, k.secret!, new Date(Date.now() + 601_000))).toBeNull();
    const listed = await cli(['merchants', 'keys', 'list', m.id]);
    expect(listed.stdout).not.toMatch(/sk_sy_|pk_sy_/);
    const ids = (JSON.parse(listed.stdout) as { data: { id: string }[] }).data.map((x) => x.id);
    expect(ids).toEqual(expect.arrayContaining([keyIdOf(m.api_key), keyIdOf(m.publishable_key), k.id, r.id]));

    // The merchant's only live full key stays; the rolled one goes.
    const last = await cli(['merchants', 'keys', 'revoke', keyIdOf(m.api_key)]);
    expect([last.code, last.stderr.trim()]).toEqual([1, `key ${keyIdOf(m.api_key)} is the merchant's last working full key for live mode: create another full live key first (or roll this one)`]);
    const revoked = await cli(['merchants', 'keys', 'revoke', r.id]);
    expect(apiKeyResource.parse(JSON.parse(revoked.stdout))).toMatchObject({ id: r.id, revoked_at: expect.any(String) as unknown });
    expect(await authenticateMerchant(db.db, r.secret)).toBeNull();

    const audit = await db.pool.query<{ operator: string; action: string; target: string; row: string }>(`SELECT operator, action, target, row_to_json(a)::text AS row FROM operator_audit a ORDER BY id`);
    expect(audit.rows.map((a) => [a.operator, a.action, a.target])).toEqual([
      ['unidentified', 'merchant.create', m.id], ['unidentified', 'api_key.create', keyIdOf(m.api_key)], ['unidentified', 'api_key.create', keyIdOf(m.publishable_key)],
      ['bob', 'api_key.create', k.id], ['bob', 'api_key.roll', k.id], ['bob', 'api_key.create', r.id], ['bob', 'api_key.revoke', r.id],
    ]);
    for (const a of audit.rows) expect(a.row).not.toMatch(/sk_sy_|pk_sy_/);
    // Without an operator token nothing changes.
    const anonymous = await cli(['merchants', 'keys', 'revoke', k.id], { SWITCHYARD_OPERATOR_TOKEN: '' });
    expect([anonymous.code, anonymous.stderr.trim()]).toEqual([1, 'this command is recorded in the audit trail under your operator name: set SWITCHYARD_OPERATOR_TOKEN to your operator token']);
  });
});
