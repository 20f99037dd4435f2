// Migration 0022 gives the keys merchants held before it (sk_sy_<random>, pk_sy_<random>, hashed in
// merchants) rows of api_keys keyed by those hashes: they keep working as they did (the secret key
// full, reaching every mode), can be listed, rolled and deleted, and the merchant row keeps no copy.
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, revokeKeyAction, rollKeyAction } from '../../../src/app/key-actions.ts';
import { authenticateKey, hashApiKey, listKeys } from '../../../src/store/api-keys.ts';
import { migrate, MIGRATIONS_DIR } from '../../../src/store/migrate.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

const legacy = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;

describe('migration 0022: legacy keys become rows', () => {
  let t: TestDatabase;
  const secret = legacy('sk_sy_');
  const publishable = legacy('pk_sy_');
  const bare = legacy('sk_sy_');

  beforeAll(async () => {
    t = await createTestDatabase('store_keys_migration', { migrate: false });
    // The schema as it was before 0022, with two merchants made then (one before publishable keys).
    const before = mkdtempSync(join(tmpdir(), 'sy-keys-migrations-'));
    for (const f of readdirSync(MIGRATIONS_DIR)) if (f < '0022') copyFileSync(join(MIGRATIONS_DIR, f), join(before, f));
    await migrate(t.url, { dir: before });
    await t.pool.query(`INSERT INTO merchants (id, name, api_key_hash, publishable_key_hash) VALUES ('mer_old', 'Old shop', $1, $2)`, [hashApiKey(secret), hashApiKey(publishable)]);
    await t.pool.query(`INSERT INTO merchants (id, name, api_key_hash) VALUES ('mer_bare', 'Bare shop', $1)`, [hashApiKey(bare)]);
    const through = mkdtempSync(join(tmpdir(), 'sy-keys-migrations-'));
    for (const f of readdirSync(MIGRATIONS_DIR)) if (f < '0023') copyFileSync(join(MIGRATIONS_DIR, f), join(through, f));
    expect((await migrate(t.url, { dir: through })).applied).toEqual(['0022_api_keys']);
    // And the ones after it, as a deploy would.
    await migrate(t.url);
  });
  afterAll(async () => t?.drop());

  it('the old keys open what they opened, as full keys of mode any; the merchant row keeps no hash', async () => {
    const now = new Date();
    const sk = await authenticateKey(t.db, secret, 'secret', now);
    expect(sk?.merchant.id).toBe('mer_old');
    expect(sk?.key).toMatchObject({ kind: 'secret', role: 'full', mode: 'any', legacy: true, id: expect.stringMatching(/^key_[0-9a-z]{26}$/) as unknown });
    expect((await authenticateKey(t.db, publishable, 'publishable', now))?.key).toMatchObject({ kind: 'publishable', role: null, mode: 'any', legacy: true });
    expect((await authenticateKey(t.db, bare, 'secret', now))?.merchant.id).toBe('mer_bare');
    // Each still opens only its own door.
    expect(await authenticateKey(t.db, secret, 'publishable', now)).toBeNull();
    expect(await authenticateKey(t.db, publishable, 'secret', now)).toBeNull();
    const columns = await t.pool.query<{ column_name: string }>(`SELECT column_name FROM information_schema.columns WHERE table_name = 'merchants'`);
    expect(columns.rows.map((c) => c.column_name).filter((c) => c.includes('key'))).toEqual([]);
    expect((await listKeys(t.db, 'mer_bare', now)).map((k) => [k.kind, k.role, k.mode, k.legacy])).toEqual([['secret', 'full', 'any', true]]);
  });

  it('a legacy key is rolled into a key of the mode asked for, and deleted only while another full key covers both modes', async () => {
    const now = new Date();
    const old = (await listKeys(t.db, 'mer_old', now)).find((k) => k.kind === 'secret');
    const actor = { operator: 'alice' };
    expect(await rollKeyAction(t.db, actor, { keyId: old!.id, expiresInS: 60, now })).toEqual({ refused: 'mode_required' });
    const rolled = await rollKeyAction(t.db, actor, { keyId: old!.id, expiresInS: 60, now, mode: 'live' });
    if (rolled.refused !== undefined) throw new Error(rolled.refused);
    expect(rolled.secret).toMatch(new RegExp(`^sk_sy_live_${rolled.key.id}_`));
    expect(rolled.key).toMatchObject({ role: 'full', mode: 'live', legacy: false });
    // The old key works through its grace, and not after.
    expect((await authenticateKey(t.db, secret, 'secret', now))?.key.id).toBe(old!.id);
    expect(await authenticateKey(t.db, secret, 'secret', new Date(now.getTime() + 60_000))).toBeNull();

    // mer_bare: its legacy key is its only full key for test and for live.
    const [bareKey] = await listKeys(t.db, 'mer_bare', now);
    expect(await revokeKeyAction(t.db, actor, { keyId: bareKey!.id, now })).toEqual({ refused: 'last_full_key', mode: 'test' });
    const test = await createKey(t.db, actor, { merchantId: 'mer_bare', kind: 'secret', role: 'full', mode: 'test', name: 'test', expiresAt: null, now });
    expect(await revokeKeyAction(t.db, actor, { keyId: bareKey!.id, now })).toEqual({ refused: 'last_full_key', mode: 'live' });
    await createKey(t.db, actor, { merchantId: 'mer_bare', kind: 'secret', role: 'full', mode: 'live', name: 'live', expiresAt: null, now });
    expect((await revokeKeyAction(t.db, actor, { keyId: bareKey!.id, now })).refused).toBeUndefined();
    expect(await authenticateKey(t.db, bare, 'secret', now)).toBeNull();
    expect(test.refused).toBeUndefined();
  });
});
