// Issue 47, keys: POST/GET/DELETE /v1/api_keys and POST /v1/api_keys/{id}/roll over HTTP. A new
// key's secret is answered once and stored nowhere but as its hash (the idempotent replay answers
// secret: null); a rolled key works through its grace and not after; expired and deleted keys are
// 401; the last full key of a mode cannot be deleted; every action is in the audit trail under the
// key that made it; each request's log line names its key id, never the key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyList, apiKeyResource, apiKeyWithSecret } from '../../../src/api/api-key-schemas.ts';
import { problemResource } from '../../../src/api/resource-schemas.ts';
import { createKey, MAX_ACTIVE_KEYS } from '../../../src/app/key-actions.ts';
import { newKey, paymentBody, startApiGateway } from './helpers.ts';
import type { ApiGateway, Body } from './helpers.ts';

let api: ApiGateway;
let offsetMs = 0;
beforeAll(async () => {
  api = await startApiGateway('api_keys', {}, undefined, { now: () => new Date(Date.now() + offsetMs) });
});
afterAll(async () => api?.close());

const created = (b: Body) => apiKeyWithSecret.parse(b);
const requestLines = () => api.logs.filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l) as Record<string, unknown>);

async function tableText(table: string): Promise<string> {
  const r = await api.gw.db.pool.query<{ t: string }>(`SELECT coalesce(string_agg(row_to_json(x)::text, E'\\n'), '') AS t FROM ${table} x`);
  return r.rows[0]!.t;
}

describe('POST /v1/api_keys', () => {
  it('answers the secret once; the record and its replay hold secret: null; the key works at once, within its role', async () => {
    const idem = newKey();
    const first = await api.call('POST', '/v1/api_keys', { idem, body: { role: 'read_only', mode: 'test', name: 'support tool' } });
    expect(first.status).toBe(201);
    const key = created(first.json);
    expect(key).toMatchObject({ object: 'api_key', kind: 'secret', role: 'read_only', mode: 'test', name: 'support tool', legacy: false, expires_at: null, revoked_at: null, replaced_by: null });
    expect(key.secret).toMatch(new RegExp(`^sk_sy_test_${key.id}_[A-Za-z0-9_-]{43}$`));
    const replay = await api.call('POST', '/v1/api_keys', { idem, body: { role: 'read_only', mode: 'test', name: 'support tool' } });
    expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(replay.json).toEqual({ ...key, secret: null });
    // Written nowhere but as its hash: not in the idempotency record, the keys table or the audit trail.
    const secretPart = key.secret!.slice(-43);
    for (const t of ['idempotency_records', 'api_keys', 'operator_audit']) expect([t, (await tableText(t)).includes(secretPart)]).toEqual([t, false]);
    const record = await api.gw.db.pool.query<{ body: Buffer }>(`SELECT response_body AS body FROM idempotency_records WHERE key = $1`, [idem]);
    expect(JSON.parse(record.rows[0]!.body.toString('utf8'))).toMatchObject({ id: key.id, secret: null });

    expect((await api.call('GET', '/v1/payments', { key: key.secret! })).status).toBe(200);
    // The id finds the row; only the whole key opens it: its id with another secret, or another key's id, is 401.
    const flipped = `${key.secret!.slice(0, -1)}${key.secret!.endsWith('A') ? 'B' : 'A'}`;
    const swapped = `sk_sy_test_${key.id}_${api.apiKey.slice(-43)}`;
    for (const wrong of [flipped, swapped, key.secret!.replace('_test_', '_live_')]) expect((await api.call('GET', '/v1/payments', { key: wrong })).status).toBe(401);
    const refused = await api.call('POST', '/v1/payments', { key: key.secret!, body: paymentBody() });
    expect([refused.status, refused.json.code]).toEqual([403, 'insufficient_role']);
    expect(problemResource.parse(refused.json)).toMatchObject({ required_roles: ['full', 'payments'], key_role: 'read_only' });
    expect(refused.json['detail']).toMatch(/needs a key with role payments \(or full\); this key is read_only/);
    // The request line names the key, never the key itself.
    const line = requestLines().find((l) => l['method'] === 'POST' && l['status'] === 403 && l['problem'] === 'insufficient_role');
    expect(line).toMatchObject({ key_id: key.id, merchant_id: api.merchantId });
    expect(api.logs.join('\n')).not.toContain(secretPart);
  });

  it('a retry after the first run committed but stored no answer finds the key it made, and makes no other', async () => {
    const idem = newKey();
    const body = { role: 'payments', mode: 'live', name: 'crashed once' };
    const first = created((await api.call('POST', '/v1/api_keys', { idem, body })).json);
    // As if the process died after its commit, before the answer was stored: the record in progress, its lease run out.
    await api.gw.db.pool.query(`UPDATE idempotency_records SET status = 'in_progress', response_status = NULL, response_body = NULL, response_headers = NULL,
      locked_until = now() - interval '1 second' WHERE key = $1`, [idem]);
    const retry = await api.call('POST', '/v1/api_keys', { idem, body });
    expect([retry.status, retry.json]).toEqual([201, { ...first, secret: null }]);
    const rows = await api.gw.db.pool.query(`SELECT id FROM api_keys WHERE name = 'crashed once'`);
    expect(rows.rows).toEqual([{ id: first.id }]);
    expect((await api.gw.db.pool.query(`SELECT 1 FROM operator_audit WHERE target = $1`, [first.id])).rowCount).toBe(1);
  });

  it('a publishable key of either mode opens POST /v1/tokens only', async () => {
    const live = created((await api.call('POST', '/v1/api_keys', { body: { kind: 'publishable', mode: 'live', name: 'checkout' } })).json);
    expect(live).toMatchObject({ kind: 'publishable', role: null, mode: 'live' });
    expect(live.secret).toMatch(new RegExp(`^pk_sy_live_${live.id}_`));
    const token = await api.call('POST', '/v1/tokens', { key: live.secret!, idem: null, body: { card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } } });
    expect(token.status).toBe(201);
    expect(requestLines().find((l) => l['path'] === '/v1/tokens' && l['status'] === 201)).toMatchObject({ key_id: live.id });
    expect((await api.call('GET', '/v1/payments', { key: live.secret! })).status).toBe(401);
    // Rolled with no grace, the old publishable key opens neither the tokens route nor the card form.
    const next = created((await api.call('POST', `/v1/api_keys/${live.id}/roll`, { body: { expires_in: 0 } })).json);
    expect(next.secret).toMatch(new RegExp(`^pk_sy_live_${next.id}_`));
    const card = { card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } };
    expect((await api.call('POST', '/v1/tokens', { key: live.secret!, idem: null, body: card })).status).toBe(401);
    expect((await api.call('POST', '/v1/tokens', { key: next.secret!, idem: null, body: card })).status).toBe(201);
    expect((await fetch(`${api.url}/elements/card?key=${live.secret!}`)).status).toBe(401);
  });

  it('refuses bad input naming the field, and writes nothing', async () => {
    const before = await tableText('api_keys');
    const cases: [unknown, string][] = [
      [{ mode: 'test', name: 'x' }, 'role'],
      [{ role: 'admin', mode: 'test', name: 'x' }, 'role'],
      [{ kind: 'publishable', role: 'full', mode: 'test', name: 'x' }, 'role'],
      [{ role: 'full', name: 'x' }, 'mode'],
      [{ role: 'full', mode: 'production', name: 'x' }, 'mode'],
      [{ role: 'full', mode: 'live', name: '' }, 'name'],
      [{ role: 'full', mode: 'live', name: 'card 4242 4242 4242 4242' }, 'name'],
      [{ role: 'full', mode: 'live', name: 'x', expires_at: 'tomorrow' }, 'expires_at'],
      [{ role: 'full', mode: 'live', name: 'x', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      [{ role: 'full', mode: 'live', name: 'x', secret: 'mine' }, 'secret'],
    ];
    for (const [body, field] of cases) {
      const r = await api.call('POST', '/v1/api_keys', { body });
      expect([JSON.stringify(body), r.status, r.json.code, r.json.errors?.map((e) => e.path)]).toEqual([JSON.stringify(body), 400, 'validation_error', [field]]);
    }
    expect(await tableText('api_keys')).toBe(before);
  });
});

describe('GET /v1/api_keys', () => {
  it('lists the working keys without secrets; another merchant sees only its own', async () => {
    const other = await api.newMerchant('keys-other');
    const mine = await api.call('GET', '/v1/api_keys');
    expect(mine.status).toBe(200);
    const list = apiKeyList.parse(mine.json);
    expect(list.data.length).toBeGreaterThanOrEqual(3);
    expect(mine.text).not.toMatch(/sk_sy_|pk_sy_|"secret":/);
    const theirs = apiKeyList.parse((await api.call('GET', '/v1/api_keys', { key: other.apiKey })).json);
    expect(theirs.data.map((k) => [k.kind, k.role, k.mode]).sort()).toEqual([['publishable', null, 'test'], ['secret', 'full', 'test']]);
    expect(theirs.data.some((k) => list.data.some((m) => m.id === k.id))).toBe(false);
    // Another merchant's key is not found for a roll or a delete.
    expect((await api.call('DELETE', `/v1/api_keys/${list.data[0]!.id}`, { key: other.apiKey })).status).toBe(404);
    expect((await api.call('POST', `/v1/api_keys/${list.data[0]!.id}/roll`, { key: other.apiKey, body: { expires_in: 0 } })).status).toBe(404);
  });
});

describe('expiry, rolls and deletion', () => {
  it('a key made with expires_at answers 401 from then on', async () => {
    const at = new Date(Date.now() + offsetMs + 60_000).toISOString();
    const k = created((await api.call('POST', '/v1/api_keys', { body: { role: 'payments', mode: 'live', name: 'temp', expires_at: at } })).json);
    expect(k.expires_at).toBe(at);
    expect((await api.call('GET', '/v1/balances', { key: k.secret! })).status).toBe(200);
    offsetMs += 61_000;
    const r = await api.call('GET', '/v1/balances', { key: k.secret! });
    expect([r.status, r.json.code]).toEqual([401, 'unauthorized']);
    expect((await api.call('GET', '/v1/api_keys')).json.data.map((x) => x.id)).not.toContain(k.id);
  });

  it('a roll answers a new secret once; the old key works until expires_in has passed', async () => {
    const k = created((await api.call('POST', '/v1/api_keys', { body: { role: 'refunds', mode: 'live', name: 'refund bot' } })).json);
    const idem = newKey();
    const roll = await api.call('POST', `/v1/api_keys/${k.id}/roll`, { idem, body: { expires_in: 3600 } });
    expect(roll.status).toBe(201);
    const next = created(roll.json);
    expect(next).toMatchObject({ role: 'refunds', mode: 'live', name: 'refund bot', replaced_by: null });
    expect(next.id).not.toBe(k.id);
    expect(next.secret).toMatch(new RegExp(`^sk_sy_live_${next.id}_`));
    const replay = await api.call('POST', `/v1/api_keys/${k.id}/roll`, { idem, body: { expires_in: 3600 } });
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.json]).toEqual([201, 'true', { ...next, secret: null }]);
    expect(await tableText('idempotency_records')).not.toContain(next.secret!.slice(-43));

    const listed = apiKeyList.parse((await api.call('GET', '/v1/api_keys')).json).data;
    const old = apiKeyResource.parse(listed.find((x) => x.id === k.id));
    expect(old.replaced_by).toBe(next.id);
    expect(new Date(old.expires_at!).getTime() - (Date.now() + offsetMs)).toBeGreaterThan(3_500_000);
    for (const key of [k.secret!, next.secret!]) expect((await api.call('GET', '/v1/payments', { key })).status).toBe(200);
    // A key is rolled once: the next roll is of the new key.
    const again = await api.call('POST', `/v1/api_keys/${k.id}/roll`, { body: { expires_in: 0 } });
    expect([again.status, again.json.code, again.json['detail']]).toEqual([409, 'invalid_state', `key ${k.id} was rolled already, to ${next.id}: roll that one`]);
    offsetMs += 3_601_000;
    expect((await api.call('GET', '/v1/payments', { key: k.secret! })).status).toBe(401);
    expect((await api.call('GET', '/v1/payments', { key: next.secret! })).status).toBe(200);
  });

  it('expires_in 0 stops the old key at once; out of range is a 400 naming expires_in', async () => {
    const k = created((await api.call('POST', '/v1/api_keys', { body: { role: 'read_only', mode: 'test', name: 'now' } })).json);
    for (const bad of [-1, 604_801, 1.5, '60', null]) {
      const r = await api.call('POST', `/v1/api_keys/${k.id}/roll`, { body: { expires_in: bad } });
      expect([bad, r.status, r.json.errors?.map((e) => e.path)]).toEqual([bad, 400, ['expires_in']]);
    }
    const mode = await api.call('POST', `/v1/api_keys/${k.id}/roll`, { body: { expires_in: 0, mode: 'live' } });
    expect([mode.status, mode.json.errors?.map((e) => e.path)]).toEqual([400, ['mode']]);
    const next = created((await api.call('POST', `/v1/api_keys/${k.id}/roll`, { body: { expires_in: 0 } })).json);
    expect((await api.call('GET', '/v1/payments', { key: k.secret! })).status).toBe(401);
    expect((await api.call('GET', '/v1/payments', { key: next.secret! })).status).toBe(200);
    expect((await api.call('POST', `/v1/api_keys/key_00000000000000000000000000/roll`, { body: { expires_in: 0 } })).status).toBe(404);
  });

  it('DELETE revokes a key (401 from then on), but never the last working full key of a mode', async () => {
    const m = await api.newMerchant('keys-delete');
    const keys = apiKeyList.parse((await api.call('GET', '/v1/api_keys', { key: m.apiKey })).json).data;
    const full = keys.find((k) => k.role === 'full')!;
    const refused = await api.call('DELETE', `/v1/api_keys/${full.id}`, { key: m.apiKey });
    expect([refused.status, refused.json.code]).toEqual([409, 'last_full_key']);
    expect(refused.json['detail']).toMatch(/last working full key for test mode/);
    expect((await api.call('GET', '/v1/payments', { key: m.apiKey })).status).toBe(200);
    // A full live key does not cover test mode; a second full test key does.
    const live = created((await api.call('POST', '/v1/api_keys', { key: m.apiKey, body: { role: 'full', mode: 'live', name: 'live' } })).json);
    expect((await api.call('DELETE', `/v1/api_keys/${full.id}`, { key: m.apiKey })).json.code).toBe('last_full_key');
    const test = created((await api.call('POST', '/v1/api_keys', { key: live.secret!, body: { role: 'full', mode: 'test', name: 'test 2' } })).json);
    const deleted = await api.call('DELETE', `/v1/api_keys/${full.id}`, { key: test.secret! });
    expect(deleted.status).toBe(200);
    expect(apiKeyResource.parse(deleted.json)).toMatchObject({ id: full.id, revoked_at: expect.any(String) as unknown });
    expect((await api.call('GET', '/v1/payments', { key: m.apiKey })).status).toBe(401);
    expect((await api.call('DELETE', `/v1/api_keys/${full.id}`, { key: test.secret! })).status).toBe(404);
    // A key may delete itself when another full key of its mode stays.
    expect((await api.call('POST', '/v1/api_keys', { key: test.secret!, body: { role: 'full', mode: 'test', name: 'test 3' } })).status).toBe(201);
    expect((await api.call('DELETE', `/v1/api_keys/${test.id}`, { key: test.secret! })).status).toBe(200);
    expect((await api.call('GET', '/v1/api_keys', { key: test.secret! })).status).toBe(401);

    // Every action is audited under the key that made it, with no secret.
    const audit = await api.gw.db.pool.query<{ operator: string; action: string; target: string; row: string }>(
      `SELECT operator, action, target, row_to_json(a)::text AS row FROM operator_audit a WHERE after->>'merchant_id' = $1 ORDER BY id`, [m.id]);
    expect(audit.rows.map((a) => [a.operator, a.action, a.target])).toEqual([
      [keys.find((k) => k.role === 'full')!.id, 'api_key.create', live.id],
      [live.id, 'api_key.create', test.id],
      [test.id, 'api_key.revoke', full.id],
      [test.id, 'api_key.create', expect.stringMatching(/^key_/) as unknown],
      [test.id, 'api_key.revoke', test.id],
    ]);
    for (const a of audit.rows) expect(a.row).not.toMatch(/sk_sy_|pk_sy_/);
  });

  it('two deletions at once of a mode\'s two full keys: one is refused, so a full key stays', async () => {
    const m = await api.newMerchant('keys-race');
    const second = created((await api.call('POST', '/v1/api_keys', { key: m.apiKey, body: { role: 'full', mode: 'test', name: 'second' } })).json);
    const first = apiKeyList.parse((await api.call('GET', '/v1/api_keys', { key: m.apiKey })).json).data.find((k) => k.role === 'full' && k.id !== second.id)!;
    const answers = await Promise.all([
      api.call('DELETE', `/v1/api_keys/${first.id}`, { key: second.secret! }),
      api.call('DELETE', `/v1/api_keys/${second.id}`, { key: m.apiKey }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.map((a) => a.json.code).filter((c) => c !== undefined)).toEqual(['last_full_key']);
    const left = await api.gw.db.pool.query(`SELECT id FROM api_keys WHERE merchant_id = $1 AND role = 'full' AND revoked_at IS NULL`, [m.id]);
    expect(left.rowCount).toBe(1);
  });

  it(`at ${MAX_ACTIVE_KEYS} working keys a create is 409 key_limit_reached, not stored with its Idempotency-Key`, async () => {
    const m = await api.newMerchant('keys-limit');
    const now = new Date(Date.now() + offsetMs);
    for (let i = 2; i < MAX_ACTIVE_KEYS; i++) await createKey(api.gw.rt.database.db, { operator: 'alice' }, { merchantId: m.id, kind: 'secret', role: 'read_only', mode: 'test', name: `k${i}`, expiresAt: null, now });
    const idem = newKey();
    const body = { role: 'read_only', mode: 'test', name: 'one too many' };
    const refused = await api.call('POST', '/v1/api_keys', { key: m.apiKey, idem, body });
    expect([refused.status, refused.json.code]).toEqual([409, 'key_limit_reached']);
    const spare = apiKeyList.parse((await api.call('GET', '/v1/api_keys', { key: m.apiKey })).json).data.find((k) => k.name === 'k2')!;
    expect((await api.call('DELETE', `/v1/api_keys/${spare.id}`, { key: m.apiKey })).status).toBe(200);
    expect((await api.call('POST', '/v1/api_keys', { key: m.apiKey, idem, body })).status).toBe(201);
  });
});
