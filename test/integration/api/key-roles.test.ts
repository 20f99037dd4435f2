// Issue 47, roles: every operation of the role table (src/api/key-roles.ts) called with a key of
// every role. A role in the operation's row gets past the check (whatever the operation then
// answers); any other gets 403 insufficient_role naming the roles that may, with nothing written in
// any table. The table names every /v1 route the app serves, and the request carries its key's id,
// role and mode (res.locals.apiKey) for the routes after it.
import express from 'express';
import type { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../src/api/app.ts';
import { bearerAuth } from '../../../src/api/auth.ts';
import { OPERATIONS } from '../../../src/api/key-roles.ts';
import type { Operation } from '../../../src/api/key-roles.ts';
import { apiKeyWithSecret } from '../../../src/api/api-key-schemas.ts';
import { KEY_ROLES } from '../../../src/core/api-keys.ts';
import type { KeyRole } from '../../../src/core/api-keys.ts';
import { paymentBody, startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

let api: ApiGateway;
const keys = new Map<KeyRole, string>();
let paymentId = '';
let refundId = '';

beforeAll(async () => {
  api = await startApiGateway('api_key_roles');
  for (const role of KEY_ROLES) {
    const r = await api.call('POST', '/v1/api_keys', { body: { role, mode: 'test', name: `${role} key` } });
    keys.set(role, apiKeyWithSecret.parse(r.json).secret!);
  }
  const captured = (await api.call('POST', '/v1/payments', { body: paymentBody({ capture_method: 'automatic' }) })).json;
  refundId = (await api.call('POST', `/v1/payments/${captured.id}/refunds`, { body: { amount: 1 } })).json.id;
});
afterAll(async () => api?.close());

/** A row count of every table: "nothing written" means none of them changed. */
async function everyTable(): Promise<Record<string, number>> {
  const tables = await api.gw.db.pool.query<{ t: string }>(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`);
  const out: Record<string, number> = {};
  for (const { t } of tables.rows) out[t] = Number((await api.gw.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${t}"`)).rows[0]!.n);
  return out;
}

/** The request for an operation: real objects where the operation reads one, a throwaway key where it changes one. */
async function request(op: Operation): Promise<{ path: string; body?: unknown }> {
  let path = op.path;
  if (path.startsWith('/v1/payments/:id')) {
    paymentId = (await api.call('POST', '/v1/payments', { body: paymentBody() })).json.id;
    path = path.replace(':id', paymentId);
  }
  if (path.startsWith('/v1/api_keys/:id')) {
    const spare = apiKeyWithSecret.parse((await api.call('POST', '/v1/api_keys', { body: { role: 'read_only', mode: 'live', name: 'spare' } })).json);
    path = path.replace(':id', spare.id);
  }
  path = path.replace('/v1/refunds/:id', `/v1/refunds/${refundId}`).replace(':id', 'x_00000000000000000000000000');
  const bodies: Record<string, unknown> = {
    'POST /v1/payments': paymentBody(), 'POST /v1/payments/:id/capture': {}, 'POST /v1/payments/:id/refunds': { amount: 1 },
    'POST /v1/payment_methods': { card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } },
    'POST /v1/webhook_endpoints': { url: 'https://example.com/hooks' }, 'POST /v1/webhook_endpoints/:id/rotate_signing_key': {}, 'POST /v1/events/:id/redeliver': {},
    'POST /v1/api_keys': { role: 'read_only', mode: 'test', name: 'made by a role test' }, 'POST /v1/api_keys/:id/roll': { expires_in: 0 },
  };
  const body = bodies[`${op.method} ${op.path}`];
  return body === undefined ? { path } : { path, body };
}

const secretOperations = OPERATIONS.filter((o) => o.roles !== 'publishable');

describe('every operation with every role', () => {
  it.each(secretOperations.map((o) => [`${o.method} ${o.path}`, o] as const))('%s', async (_name, op) => {
    const roles = op.roles as readonly KeyRole[];
    for (const role of KEY_ROLES) {
      const { path, body } = await request(op);
      const before = roles.includes(role) ? null : await everyTable();
      const r = await api.call(op.method, path, { key: keys.get(role)!, ...(body === undefined ? {} : { body }) });
      if (roles.includes(role)) {
        expect([role, r.status, r.json.code]).not.toEqual([role, 403, 'insufficient_role']);
        expect([role, r.status]).not.toEqual([role, 401]);
        expect([role, r.status]).not.toEqual([role, 500]);
      } else {
        expect([role, r.status, r.json.code, r.json['required_roles'], r.json['key_role']]).toEqual([role, 403, 'insufficient_role', roles, role]);
        expect(await everyTable()).toEqual(before);
      }
    }
  });

  it('a route not in the table is for full keys only', async () => {
    const r = await api.call('GET', '/v1/not-a-route', { key: keys.get('read_only')! });
    expect([r.status, r.json.code, r.json['required_roles']]).toEqual([403, 'insufficient_role', ['full']]);
    expect((await api.call('GET', '/v1/not-a-route', { key: keys.get('full')! })).json.code).toBe('not_found');
    // express routes are case-blind; the table is read the same way.
    expect((await api.call('GET', '/V1/Payments', { key: keys.get('read_only')! })).status).toBe(200);
  });
});

/** Every method and path the app routes, through its nested routers. */
function routesOf(router: Router): string[] {
  const out: string[] = [];
  for (const layer of (router as unknown as { stack: { route?: { path: string; methods: Record<string, boolean> }; handle: { stack?: unknown } }[] }).stack) {
    if (layer.route !== undefined) for (const m of Object.keys(layer.route.methods)) out.push(`${m.toUpperCase()} ${layer.route.path}`);
    else if (Array.isArray(layer.handle.stack)) out.push(...routesOf(layer.handle as unknown as Router));
  }
  return out;
}

describe('the table and the app', () => {
  it('the table names every /v1 route the app serves (and the card form), and nothing it does not', () => {
    const app = createApiApp(api.gw.rt);
    const served = new Set(routesOf((app as unknown as { router: Router }).router).filter((r) => / \/v1\//.test(r) || r === 'GET /elements/card'));
    served.delete('OPTIONS /v1/tokens'); // the CORS preflight carries no key
    expect([...served].sort()).toEqual(OPERATIONS.map((o) => `${o.method} ${o.path}`).sort());
  });

  it("the request carries its key's id, role and mode, never the key", async () => {
    const app = express();
    app.use(bearerAuth(api.gw.rt.database.db), (_req, res) => {
      res.json({ merchant: res.locals['merchantId'] as unknown, key: res.locals['apiKey'] as unknown });
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      const live = apiKeyWithSecret.parse((await api.call('POST', '/v1/api_keys', { body: { role: 'refunds', mode: 'live', name: 'probe' } })).json);
      const seen = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { authorization: `Bearer ${live.secret!}` } })).json();
      expect(seen).toEqual({ merchant: api.merchantId, key: { id: live.id, kind: 'secret', role: 'refunds', mode: 'live', legacy: false } });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
