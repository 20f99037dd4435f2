// The merchant commands of issue 44 through the CLI launcher: set-origins (validated origins, or
// --none), allow-raw-cards (and --revoke), rotate-publishable-key; each audited under the operator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticatePublishableKey, createMerchant, loadMerchantCardSettings } from '../../../src/store/merchants.ts';
import { OPERATOR_ENV, runCli } from '../helpers/cli.ts';
import type { CliResult } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('tokens_merchants_cli');
});
afterAll(async () => db?.drop());

const cli = (args: string[]): Promise<CliResult> => runCli(args, { DATABASE_URL: db.url, ...OPERATOR_ENV.alice });

describe('switchyard merchants (browser keys and raw cards)', () => {
  it('set-origins keeps validated origins only; --none clears them; audited', async () => {
    const { merchant } = await createMerchant(db.db, { name: 'Origins' });
    const set = await cli(['merchants', 'set-origins', merchant.id, 'https://Shop.Example:443', 'http://localhost:5173/', 'https://shop.example']);
    expect([set.code, set.stdout.trim()]).toEqual([0, JSON.stringify({ id: merchant.id, allowed_origins: ['https://shop.example', 'http://localhost:5173'] })]);
    expect((await loadMerchantCardSettings(db.db, merchant.id))?.allowedOrigins).toEqual(['https://shop.example', 'http://localhost:5173']);

    const refused = await cli(['merchants', 'set-origins', merchant.id, 'https://ok.example', 'http://shop.example']);
    expect([refused.code, refused.stderr.trim()]).toEqual([1, 'origin "http://shop.example" is http: only https origins are allowed (http only for localhost)']);
    const none = await cli(['merchants', 'set-origins', merchant.id]);
    expect([none.code, none.stderr.trim()]).toEqual([1, 'give at least one origin (or --none to allow none)']);
    // Nothing changed by the refusals.
    expect((await loadMerchantCardSettings(db.db, merchant.id))?.allowedOrigins).toEqual(['https://shop.example', 'http://localhost:5173']);
    expect((await cli(['merchants', 'set-origins', merchant.id, '--none'])).code).toBe(0);
    expect((await loadMerchantCardSettings(db.db, merchant.id))?.allowedOrigins).toEqual([]);
    expect((await cli(['merchants', 'set-origins', 'mer_nope', 'https://a.example'])).stderr.trim()).toBe('merchant mer_nope not found');

    const audit = await db.pool.query<{ operator: string; action: string; after: unknown }>(`SELECT operator, action, after FROM operator_audit WHERE target = $1 ORDER BY id`, [merchant.id]);
    expect(audit.rows).toEqual([
      { operator: 'alice', action: 'merchant.set_origins', after: { allowed_origins: ['https://shop.example', 'http://localhost:5173'] } },
      { operator: 'alice', action: 'merchant.set_origins', after: { allowed_origins: [] } },
    ]);
  });

  it('allow-raw-cards and --revoke; rotate-publishable-key replaces the key at once', async () => {
    const { merchant, publishableKey } = await createMerchant(db.db, { name: 'Raw' });
    expect((await loadMerchantCardSettings(db.db, merchant.id))?.allowRawCards).toBe(false);
    expect(JSON.parse((await cli(['merchants', 'allow-raw-cards', merchant.id])).stdout)).toEqual({ id: merchant.id, allow_raw_cards: true });
    expect((await loadMerchantCardSettings(db.db, merchant.id))?.allowRawCards).toBe(true);
    expect(JSON.parse((await cli(['merchants', 'allow-raw-cards', merchant.id, '--revoke'])).stdout)).toEqual({ id: merchant.id, allow_raw_cards: false });
    expect((await loadMerchantCardSettings(db.db, merchant.id))?.allowRawCards).toBe(false);

    const rotated = await cli(['merchants', 'rotate-publishable-key', merchant.id]);
    const r = JSON.parse(rotated.stdout) as { id: string; publishable_key: string };
    expect(r.publishable_key).toMatch(/^pk_sy_/);
    expect(await authenticatePublishableKey(db.db, publishableKey)).toBeNull();
    expect((await authenticatePublishableKey(db.db, r.publishable_key))?.id).toBe(merchant.id);

    const audit = await db.pool.query<{ action: string; row: string }>(`SELECT action, row_to_json(a)::text AS row FROM operator_audit a WHERE target = $1 ORDER BY id`, [merchant.id]);
    expect(audit.rows.map((a) => a.action)).toEqual(['merchant.allow_raw_cards', 'merchant.revoke_raw_cards', 'merchant.rotate_publishable_key']);
    expect(audit.rows.map((a) => a.row).join('\n')).not.toContain(r.publishable_key);
  });
});
