// Operators on the dashboard's API: each signs in with their own token and is named by it; the
// session lives server-side, so signing out (or rotating the token) really ends it; every action
// lands in the append-only audit trail; the cookie's Secure flag comes from configuration, or from
// X-Forwarded-Proto only when a trusted proxy sent it; /metrics can require a token or live on
// another listener. No browser here: the browser walk is dashboard.test.ts.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiOptions } from '../../../src/api/app.ts';
import { createApiApp } from '../../../src/api/app.ts';
import { listenApi } from '../../../src/api/server.ts';
import type { ApiServer } from '../../../src/api/server.ts';
import { revokeRotatedSessions } from '../../../src/ops/operator-sessions.ts';
import { resolveDiscrepancy } from '../../../src/reconcile/discrepancies.ts';
import type { ClosingReason } from '../../../src/reconcile/discrepancies.ts';
import { Operators } from '../../../src/ops/operators.ts';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { twoStripeConfig } from '../helpers/runtime.ts';

const ALICE = 'alice-token-0123456789abcdef0123';
const BOB = 'bob-token-0123456789abcdef01234';
const operators = new Operators([{ name: 'alice', token: ALICE }, { name: 'bob', token: BOB }]);
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

let api: ApiGateway;
const extra: ApiServer[] = [];
beforeAll(async () => {
  // API role only: the payments this test parks stay where they are put.
  api = await startApiGateway('obs_operators', { ops: { operators, cookies: { secure: false, trustedProxies: [] } }, authorizationWaitMs: 100 }, twoStripeConfig(), { role: 'api', dispatchAtCommit: false });
});
afterAll(async () => {
  for (const s of extra) await s.close(100);
  await api?.close();
});

/** Another listener on the same runtime and database, configured differently. */
async function listener(opts: ApiOptions): Promise<string> {
  const server = await listenApi(0, '127.0.0.1');
  server.attach(createApiApp(api.gw.rt, { log: () => undefined, ...opts }));
  extra.push(server);
  return `http://127.0.0.1:${server.port}`;
}

async function signIn(base: string, token: string, headers: Record<string, string> = {}): Promise<{ status: number; cookie: string; setCookie: string; body: unknown }> {
  const res = await fetch(`${base}/ops/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ token }) });
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { status: res.status, cookie: setCookie.split(';')[0]!, setCookie, body: await res.json() };
}

const overview = (base: string, cookie: string) => fetch(`${base}/ops/api/overview`, { headers: { cookie } });
const db = () => api.gw.db.db;
const auditRows = async (action: string) =>
  (await db().execute<{ operator: string; target: string; before: unknown; after: unknown; note: string | null }>(sql`SELECT operator, target, before, after, note FROM operator_audit WHERE action = ${action} ORDER BY id`)).rows;

async function parkedPayment(): Promise<string> {
  const created = await api.call('POST', '/v1/payments', { body: paymentBody() });
  expect(created.status).toBe(202);
  await db().execute(sql`UPDATE payments SET state = 'needs_review', updated_at = now() - interval '10 minutes' WHERE id = ${created.json.id}`);
  return created.json.id;
}

describe('operator sessions', () => {
  it('names the operator by the token; the session is server-side, audited, and ends at sign-out', async () => {
    const wrong = await signIn(api.url, 'nobody-token-0123456789abcdef0');
    expect([wrong.status, wrong.setCookie]).toEqual([401, '']);
    const bob = await signIn(api.url, BOB);
    expect([bob.status, bob.body]).toEqual([200, { ok: true, operator: 'bob' }]);
    expect(bob.setCookie).toMatch(/^sy_ops=[A-Za-z0-9_-]{43}; Path=\/ops; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    // Only the secret's hash is stored: the table holds nothing a browser could present.
    const secret = bob.cookie.slice('sy_ops='.length);
    const stored = (await db().execute<{ id: string; operator: string }>(sql`SELECT id, operator FROM operator_sessions`)).rows;
    expect(stored.map((s) => s.operator)).toEqual(['bob']);
    expect(stored[0]!.id).not.toContain(secret);

    const seen = await overview(api.url, bob.cookie);
    expect(seen.status).toBe(200);
    expect(((await seen.json()) as { operator: string }).operator).toBe('bob');
    expect((await auditRows('operator.sign_in')).map((a) => a.operator)).toEqual(['bob']);

    // An action in the session is bob's, committed with the transition.
    const id = await parkedPayment();
    const resolved = await fetch(`${api.url}/ops/api/payments/${id}/resolve`, { method: 'POST', headers: { cookie: bob.cookie, 'content-type': 'application/json' }, body: JSON.stringify({ as: 'failed', note: 'no charge at Stripe (OPS-9)' }) });
    expect(resolved.status).toBe(200);
    expect((await auditRows('payment.resolve')).filter((a) => a.target === id)).toEqual([{ operator: 'bob', target: id, before: { state: 'needs_review' }, after: { state: 'failed' }, note: 'no charge at Stripe (OPS-9)' }]);
    // Refused (not in needs_review any more): nothing audited.
    const again = await fetch(`${api.url}/ops/api/payments/${id}/resolve`, { method: 'POST', headers: { cookie: bob.cookie, 'content-type': 'application/json' }, body: JSON.stringify({ as: 'voided', note: 'again' }) });
    expect(again.status).toBe(422);
    expect((await auditRows('payment.resolve')).filter((a) => a.target === id)).toHaveLength(1);

    // Sign-out revokes the session itself: the same cookie, replayed, is refused.
    const out = await fetch(`${api.url}/ops/logout`, { method: 'POST', headers: { cookie: bob.cookie }, redirect: 'manual' });
    expect(out.status).toBe(303);
    expect((await overview(api.url, bob.cookie)).status).toBe(401);
    expect((await auditRows('operator.sign_out')).map((a) => a.operator)).toEqual(['bob']);
    expect((await db().execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM operator_sessions WHERE revoked_at IS NOT NULL`)).rows[0]!.n).toBe(1);
  });

  it('a dead-letter replay by bearer token is audited under that operator', async () => {
    const dead = await db().execute<{ id: string }>(sql`INSERT INTO outbox (kind, payload, connector, run_at, status, attempts, last_error) VALUES ('timer', '{}'::jsonb, null, now(), 'dead', 8, 'boom') RETURNING id`);
    const id = Number(dead.rows[0]!.id);
    const r = await fetch(`${api.url}/ops/api/dead-letters/${id}/replay`, { method: 'POST', headers: { authorization: `Bearer ${ALICE}` } });
    expect(r.status).toBe(200);
    expect(await auditRows('dead_letter.replay')).toEqual([{ operator: 'alice', target: `outbox:${id}`, before: { status: 'dead', kind: 'timer', connector: null, payment_id: null }, after: { status: 'pending' }, note: null }]);
    const listed = await fetch(`${api.url}/ops/api/audit?operator=alice`, { headers: { authorization: `Bearer ${BOB}` } });
    expect(((await listed.json()) as { audit: { action: string }[] }).audit.map((a) => a.action)).toEqual(['dead_letter.replay']);
  });

  it("a rotated token ends the sessions opened under the old one", async () => {
    const alice = await signIn(api.url, ALICE);
    expect((await overview(api.url, alice.cookie)).status).toBe(200);
    // The same fleet after alice's token was changed (a restart with the new environment).
    const rotated = new Operators([{ name: 'alice', token: 'alice-new-token-0123456789abcdef' }, { name: 'bob', token: BOB }]);
    const after = await listener({ ops: { operators: rotated, cookies: { secure: false, trustedProxies: [] } } });
    expect((await overview(after, alice.cookie)).status).toBe(401);
    // Start-up marks them revoked, so the old configuration's processes refuse them too.
    expect(await revokeRotatedSessions(db(), rotated, new Date())).toBe(1);
    expect((await overview(api.url, alice.cookie)).status).toBe(401);
    // An operator removed from the configuration: same.
    const bob = await signIn(api.url, BOB);
    const withoutBob = await listener({ ops: { operators: new Operators([{ name: 'alice', token: ALICE }]), cookies: { secure: false, trustedProxies: [] } } });
    expect((await overview(withoutBob, bob.cookie)).status).toBe(401);
    expect((await overview(api.url, bob.cookie)).status).toBe(200);
  });

  it('marks the cookie Secure from configuration, or from X-Forwarded-Proto only when a trusted proxy sent it', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    const secure = (c: string) => / Secure$/.test(c);
    expect(secure((await signIn(api.url, ALICE, https)).setCookie)).toBe(false); // nobody is trusted: a client's claim
    const proxied = await listener({ ops: { operators, cookies: { secure: false, trustedProxies: ['127.0.0.1'] } } });
    expect(secure((await signIn(proxied, ALICE, https)).setCookie)).toBe(true);
    expect(secure((await signIn(proxied, ALICE, { 'x-forwarded-proto': 'https, http' })).setCookie)).toBe(false); // the nearest proxy said http
    expect(secure((await signIn(proxied, ALICE)).setCookie)).toBe(false);
    const elsewhere = await listener({ ops: { operators, cookies: { secure: false, trustedProxies: ['10.0.0.0/8'] } } });
    expect(secure((await signIn(elsewhere, ALICE, https)).setCookie)).toBe(false); // 127.0.0.1 is not that proxy
    const always = await listener({ ops: { operators, cookies: { secure: true, trustedProxies: [] } } });
    expect(secure((await signIn(always, ALICE)).setCookie)).toBe(true);
  });
});

describe('cross-origin requests to /ops', () => {
  it('sign-in, sign-out and actions refuse another origin (Sec-Fetch-Site, else Origin) with 403 and change nothing', async () => {
    const signIns = async () => (await auditRows('operator.sign_in')).length;
    const before = await signIns();
    for (const headers of [
      { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' },
      { origin: 'https://evil.example' }, { origin: 'null' }, { origin: `${api.url.replace('127.0.0.1', 'localhost')}` },
      // The browser's word wins over an Origin that looks right.
      { 'sec-fetch-site': 'cross-site', origin: api.url },
    ]) {
      const r = await signIn(api.url, ALICE, headers);
      expect([r.status, r.setCookie], JSON.stringify(headers)).toEqual([403, '']);
    }
    expect(await signIns()).toBe(before);

    // The dashboard's own page (same origin), and scripts that send neither header.
    const own = await signIn(api.url, ALICE, { 'sec-fetch-site': 'same-origin', origin: api.url });
    expect(own.status).toBe(200);
    expect((await signIn(api.url, ALICE, { origin: api.url })).status).toBe(200);
    // Path=/ops: the customer's authentication pages (/authenticate/...) never receive the session.
    expect(own.setCookie).toContain('; Path=/ops;');

    const id = await parkedPayment();
    const forged = await fetch(`${api.url}/ops/api/payments/${id}/resolve`, { method: 'POST', headers: { cookie: own.cookie, 'content-type': 'application/json', 'sec-fetch-site': 'same-site' }, body: JSON.stringify({ as: 'failed', note: 'forged' }) });
    expect(forged.status).toBe(403);
    expect((await auditRows('payment.resolve')).filter((a) => a.target === id)).toEqual([]);
    const out = await fetch(`${api.url}/ops/logout`, { method: 'POST', headers: { cookie: own.cookie, 'sec-fetch-site': 'cross-site' }, redirect: 'manual' });
    expect([out.status, out.headers.get('set-cookie')]).toEqual([403, null]);
    expect((await overview(api.url, own.cookie)).status).toBe(200);
  });
});

describe('the audit trail and discrepancy history', () => {
  it('refuse UPDATE, DELETE and TRUNCATE; a discrepancy is resolved only by its one resolution row', async () => {
    // The pool's own errors (drizzle would wrap them in "Failed query").
    const raw = (q: string) => api.gw.db.pool.query(q);
    const refused = /append-only/;
    await expect(raw(`UPDATE operator_audit SET operator = 'mallory'`)).rejects.toThrow(refused);
    await expect(raw(`DELETE FROM operator_audit`)).rejects.toThrow(refused);
    await expect(raw(`TRUNCATE operator_audit`)).rejects.toThrow(refused);
    await raw(`INSERT INTO discrepancies (id, kind, detail) VALUES ('dsc_ops_t1', 'late_approval', 'x')`);
    await expect(raw(`UPDATE discrepancies SET status = 'resolved', resolution = 'quietly' WHERE id = 'dsc_ops_t1'`)).rejects.toThrow(/derived from its resolution row/);
    await expect(raw(`UPDATE discrepancies SET owner = 'mallory' WHERE id = 'dsc_ops_t1'`)).rejects.toThrow(/derived from its resolution row/);
    await expect(raw(`INSERT INTO discrepancies (id, kind, detail, status, resolution) VALUES ('dsc_ops_t2', 'x', 'x', 'resolved', 'born resolved')`)).rejects.toThrow(/created open/);
    await raw(`INSERT INTO discrepancy_resolutions (discrepancy_id, operator, reason, note) VALUES ('dsc_ops_t1', 'alice', 'written_off', 'finance accepted it')`);
    const row = (await db().execute<{ status: string; owner: string; resolution: string }>(sql`SELECT status, owner, resolution FROM discrepancies WHERE id = 'dsc_ops_t1'`)).rows[0];
    expect(row).toEqual({ status: 'resolved', owner: 'alice', resolution: 'finance accepted it' });
    await expect(raw(`INSERT INTO discrepancy_resolutions (discrepancy_id, operator, note) VALUES ('dsc_ops_t1', 'bob', 'me too')`)).rejects.toThrow(/discrepancy_resolutions_discrepancy_id_key/);
    await expect(raw(`UPDATE discrepancy_resolutions SET note = 'rewritten'`)).rejects.toThrow(refused);
    await expect(raw(`DELETE FROM discrepancy_resolutions`)).rejects.toThrow(refused);
  });
});

describe('closing a finding about money the gateway meant to give back', () => {
  it('takes the provider\'s word (the attempt released on its confirmation) or a reason from the list', async () => {
    const id = await parkedPayment();
    const attempt = (await db().execute<{ id: string }>(sql`SELECT id FROM payment_attempts WHERE payment_id = ${id}`)).rows[0]!.id;
    await db().execute(sql`INSERT INTO discrepancies (id, payment_id, attempt_id, kind, detail) VALUES ('dsc_ops_l1', ${id}, ${attempt}, 'release_failed', 'release refused')`);
    const resolve = (o: { reason?: ClosingReason }) => resolveDiscrepancy(db(), 'dsc_ops_l1', { note: 'checked', operator: 'alice', now: new Date(), ...o });
    const refused = await resolve({});
    expect(refused.ok === false && refused.reason).toBe('needs_reason');
    // The provider confirmed a later release round: the attempt is released only on its word.
    await db().execute(sql`UPDATE payment_attempts SET status = 'released' WHERE id = ${attempt}`);
    const agreed = await resolve({});
    expect(agreed.ok && agreed.evidence).toEqual({ attemptId: attempt, attemptStatus: 'released', providerRef: null, agrees: true });
    const history = (await db().execute<{ evidence: { agrees: boolean }; reason: string | null }>(sql`SELECT evidence, reason FROM discrepancy_resolutions WHERE discrepancy_id = 'dsc_ops_l1'`)).rows;
    expect(history.map((h) => [h.evidence.agrees, h.reason])).toEqual([[true, null]]);
  });
});

describe('/metrics exposure', () => {
  it('open on a private listener by default; behind a bearer token; or not on this listener at all', async () => {
    expect((await fetch(`${api.url}/metrics`)).status).toBe(200);
    const guarded = await listener({ metrics: { mode: 'token', token: METRICS_TOKEN } });
    expect((await fetch(`${guarded}/metrics`)).status).toBe(401);
    expect((await fetch(`${guarded}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789abcdef00' } })).status).toBe(401);
    const ok = await fetch(`${guarded}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('switchyard_webhook_deliveries');
    const moved = await listener({ metrics: { mode: 'elsewhere' } });
    expect((await fetch(`${moved}/metrics`)).status).toBe(404);
  });
});
