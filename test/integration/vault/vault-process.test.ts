// Issue 44: the vault as its own process (`switchyard start --role vault`) and a gateway using it
// through SWITCHYARD_VAULT_URL. The vault process gets no reachable Redis and no reachable gateway
// database (only VAULT_DATABASE_URL); the gateway runtime of this file tokenizes, describes and
// (its worker) reveals through it; a missing or wrong token reveals nothing; a vault killed with
// kill -9 makes calls fail at once with VaultUnavailableError (503 at the API, the worker's job
// retried without sending) until it is started again.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForPayment } from '../../../src/app/payment-service.ts';
import { withDatabase } from '../../../src/store/database-url.ts';
import { createVaultClient } from '../../../src/vault/client.ts';
import type { VaultClient } from '../../../src/vault/client.ts';
import { checkRemoteVaultForStart } from '../../../src/vault/gateway-start.ts';
import { openVault } from '../../../src/vault/index.ts';
import { createVaultApp, listenVault } from '../../../src/vault/server.ts';
import { VaultUnavailableError } from '../../../src/vault/vault-unavailable.ts';
import { paymentBody, rowCounts, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';
import type { GatewayProcess } from '../helpers/gateway-process.ts';
import { freePort, startPrivateRedis } from '../helpers/redis-server.ts';
import { twoStripeConfig } from '../helpers/runtime.ts';
import { until } from '../helpers/until.ts';

const TOKEN = randomBytes(32).toString('hex');
/** The vault also takes this one, as during a token rotation. */
const PREVIOUS_TOKEN = randomBytes(32).toString('hex');
const KEYS = `vp1:${randomBytes(32).toString('base64')}`;
const CARD = { number: '5555555555554444', exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: '737', holder_name: 'Ada Lovelace' };
/** Nothing listens on port 1: the vault process must not need what is there. */
const NOWHERE = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/not_the_vaults', REDIS_URL: 'redis://127.0.0.1:1' };

let api: ApiGateway;
let port: number;
let vaultUrl: string;
let vaultDbUrl: string;
let vaultDb: pg.Pool;
let vaultProcess: GatewayProcess;

const vaultEnv = (over: Record<string, string> = {}): Record<string, string> => ({
  ...NOWHERE, VAULT_DATABASE_URL: vaultDbUrl, SWITCHYARD_VAULT_TOKEN: TOKEN, SWITCHYARD_VAULT_PREVIOUS_TOKEN: PREVIOUS_TOKEN, SWITCHYARD_VAULT_KEYS: KEYS, SWITCHYARD_VAULT_PORT: String(port), SWITCHYARD_START_TIMEOUT: '20s', ...over,
});
const startVault = (): Promise<GatewayProcess> => startGatewayProcess('switchyard start --role vault', vaultEnv());
const client = (): VaultClient => api.gw.rt.vault as VaultClient;

async function accessLog(paymentMethodId: string): Promise<{ purpose: string; attempt_id: string; process: string; fields: string[] }[]> {
  return (await vaultDb.query<{ purpose: string; attempt_id: string; process: string; fields: string[] }>('SELECT purpose, attempt_id, process, fields FROM access_log WHERE payment_method_id = $1 ORDER BY id', [paymentMethodId])).rows;
}

async function tokenize(): Promise<string> {
  const r = await client().tokenize(api.merchantId, CARD);
  if (!r.ok) throw new Error(`tokenize: ${r.field} ${r.reason}`);
  return r.paymentMethod.id;
}

beforeAll(async () => {
  port = await freePort();
  vaultUrl = `http://127.0.0.1:${port}`;
  api = await startApiGateway('vault_process', { authorizationWaitMs: 8000, log: () => undefined }, twoStripeConfig(), {
    env: { ...process.env, SWITCHYARD_VAULT_URL: vaultUrl, SWITCHYARD_VAULT_TOKEN: TOKEN },
    jobBackoffMs: 100,
  });
  // Where the embedded vault of this gateway would keep its records: dropped with the gateway's database.
  vaultDbUrl = withDatabase(api.gw.db.url, `${api.gw.db.name}_vault`);
  vaultProcess = await startVault();
  vaultDb = new pg.Pool({ connectionString: vaultDbUrl, max: 2 });
}, 90_000);

afterAll(async () => {
  await vaultDb?.end();
  await vaultProcess?.stop('SIGTERM');
  await api?.close();
});

describe('switchyard start --role vault, used through SWITCHYARD_VAULT_URL', () => {
  it('tokenizes, describes, reveals and forgets a code; the worker\'s reveal is logged under the worker\'s process', async () => {
    expect(vaultProcess.output()).toContain(`Switchyard vault listening on ${vaultUrl}`);
    expect(await client().health()).toEqual({ status: 'ok', keys: 'configured' });
    const id = await tokenize();
    expect(await client().describe(api.merchantId, id)).toMatchObject({ id, merchantId: api.merchantId, brand: 'mastercard', last4: '4444', expMonth: 12, expYear: CARD.exp_year });
    expect(await client().describe('mer_someone_else', id)).toBeNull();
    // The record is the vault process's: sealed under its key, in its database.
    const stored = await vaultDb.query<{ key_name: string }>('SELECT key_name FROM payment_methods WHERE id = $1', [id]);
    expect(stored.rows).toEqual([{ key_name: 'vp1' }]);

    const a = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', id } }) });
    expect(a.status, a.text).toBe(201);
    expect(a.text).not.toContain(CARD.number);
    // Each attempt's send revealed the card through the vault process, logged under the gateway's
    // worker (this test process runs the runtime), not under the vault process.
    const attempts = a.json.attempts.map((t) => t.id);
    expect(attempts.length).toBeGreaterThan(0);
    expect(await accessLog(id)).toEqual(attempts.map((attemptId) => ({ purpose: 'provider_call', attempt_id: attemptId, process: `all@${hostname()}:${process.pid}`, fields: ['pan', 'cvc'] })));

    // The worker destroyed the code at the authorization response, through the vault process.
    expect(a.json.status).toBe('authorized');
    expect((await vaultDb.query('SELECT 1 FROM card_codes WHERE payment_method_id = $1', [id])).rowCount).toBe(0);
    expect(await client().forgetCode(id)).toBe(false);
    const second = await tokenize();
    expect(await client().forgetCode(second)).toBe(true);
    expect(await client().forgetCode(second)).toBe(false);
    const revealed = await client().reveal(id, { purpose: 'provider_call', attemptId: 'att_direct', process: 'test@here:1' });
    expect(revealed).toMatchObject({ number: CARD.number, cvc: null, holderName: 'Ada Lovelace', firstRevealHadCode: null });
    expect((await accessLog(id)).at(-1)).toEqual({ purpose: 'provider_call', attempt_id: 'att_direct', process: 'test@here:1', fields: ['pan'] });
    // The idempotency digest of a card-bearing request: the vault process's key, the embedded vault's answer.
    const embedded = await openVault({ gatewayDatabaseUrl: api.gw.db.url, env: { SWITCHYARD_VAULT_KEYS: KEYS, VAULT_DATABASE_URL: vaultDbUrl }, sweepEveryMs: 0, poolMax: 1 });
    try {
      const digest = await client().requestDigest(api.merchantId, '{"card":{"number":"5555555555554444"}}');
      expect(digest).toBe(await embedded.requestDigest(api.merchantId, '{"card":{"number":"5555555555554444"}}'));
      expect(digest).not.toBe(await client().requestDigest('mer_someone_else', '{"card":{"number":"5555555555554444"}}'));
    } finally {
      await embedded.close();
    }
    // A card the vault refuses is the same answer as from the embedded vault: the field, never the value.
    expect(await client().tokenize(api.merchantId, { ...CARD, number: '5555555555554445' })).toEqual({ ok: false, field: 'card.number', reason: expect.stringContaining('not a valid card number') as unknown });
  });

  it('answers 401 to a missing or wrong token, and reveals and stores nothing', async () => {
    const id = await tokenize();
    const before = (await accessLog(id)).length;
    const cardCount = async (): Promise<number> => (await vaultDb.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_methods')).rows[0]!.n;
    const cards = await cardCount();
    const reveal = JSON.stringify({ id, access: { purpose: 'provider_call', attempt_id: 'att_x', process: 'intruder@x:1' } });
    const tokenizeBody = JSON.stringify({ merchant_id: api.merchantId, card: CARD });
    for (const authorization of [undefined, `Bearer ${TOKEN.slice(0, -1)}x`, `Bearer ${TOKEN}x`, `Bearer ${'0'.repeat(TOKEN.length)}`, TOKEN, `Basic ${TOKEN}`]) {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) };
      const r = await fetch(`${vaultUrl}/v1/reveal`, { method: 'POST', headers, body: reveal });
      const text = await r.text();
      expect(r.status, `${authorization}: ${text}`).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
      expect(text).not.toContain(CARD.number);
      expect((await fetch(`${vaultUrl}/v1/tokenize`, { method: 'POST', headers, body: tokenizeBody })).status).toBe(401);
    }
    expect((await accessLog(id)).length).toBe(before);
    expect(await cardCount()).toBe(cards);
    // Through the client: a clear error that waiting does not heal.
    const wrong = createVaultClient({ url: vaultUrl, token: `${TOKEN.slice(0, -1)}0`, timeoutMs: 2000 });
    const refused = await wrong.reveal(id, { purpose: 'provider_call', attemptId: 'att_x', process: 'x@y:1' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(VaultUnavailableError);
    expect(refused).toMatchObject({ reason: 'token_refused', connectionLoss: false, message: expect.stringContaining('SWITCHYARD_VAULT_TOKEN') as unknown });
    expect((await accessLog(id)).length).toBe(before);
    // During a rotation the previous token still opens it.
    const previous = createVaultClient({ url: vaultUrl, token: PREVIOUS_TOKEN, timeoutMs: 2000 });
    expect(await previous.describe(api.merchantId, id)).toMatchObject({ id });
  });

  it('serves its operations and nothing else: JSON bodies of at most 16 kB, no other route', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await fetch(`${vaultUrl}/v1/reveal`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${vaultUrl}/v1/scan`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);
    expect((await fetch(`${vaultUrl}/v1/describe`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: '{}' })).status).toBe(415);
    const big = await fetch(`${vaultUrl}/v1/describe`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ merchant_id: 'x'.repeat(20_000), id: 'y' }) });
    expect(big.status).toBe(413);
    // A malformed body is refused without being quoted back.
    const bad = await fetch(`${vaultUrl}/v1/tokenize`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: `{"merchant_id":"m","card":{"number":"${CARD.number}"` });
    expect(bad.status).toBe(400);
    expect(await bad.text()).not.toContain(CARD.number);
    const unknown = await fetch(`${vaultUrl}/v1/describe`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ merchant_id: 'm', id: 'x', extra: CARD.number }) });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).not.toContain(CARD.number);
  });

  it('killed with kill -9: calls fail at once with VaultUnavailableError, the API answers 503 writing nothing, and a restart brings it back', async () => {
    const id = await tokenize();
    await vaultProcess.stop('SIGKILL');
    const started = Date.now();
    const described = await client().describe(api.merchantId, id).catch((e: unknown) => e);
    const revealed = await client().reveal(id, { purpose: 'provider_call', attemptId: 'att_k', process: 'x@y:1' }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2000);
    for (const e of [described, revealed]) {
      expect(e).toBeInstanceOf(VaultUnavailableError);
      expect(e).toMatchObject({ reason: 'unreachable', connectionLoss: true });
    }

    const before = await rowCounts(api.gw);
    const a = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', id } }) });
    expect(a.status, a.text).toBe(503);
    expect(a.json.code).toBe('service_unavailable');
    expect(a.headers.get('retry-after')).toBe('2');
    expect(await rowCounts(api.gw)).toEqual(before);

    vaultProcess = await startVault();
    expect(await client().describe(api.merchantId, id)).toMatchObject({ id, last4: '4444' });
    const again = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', id } }) });
    expect(again.status, again.text).toBe(201);
  }, 60_000);

  it('a worker whose reveal finds the vault gone sends nothing and retries the job; once the vault is back the job runs', async () => {
    const id = await tokenize();
    // The vault dies between the API's describe and the worker's reveal.
    const vault = client();
    const describe = vault.describe.bind(vault);
    vault.describe = async (merchantId, pm) => {
      const r = await describe(merchantId, pm);
      await vaultProcess.stop('SIGKILL');
      return r;
    };
    let a;
    try {
      a = await api.call('POST', '/v1/payments', { body: paymentBody({ payment_method: { type: 'card', id } }) });
    } finally {
      vault.describe = describe;
    }
    expect([201, 202], a.text).toContain(a.status);
    const paymentId = a.json.id;
    // Failed before the call: the row goes back with the reason, nothing reached the provider.
    await until(
      async () => (await api.gw.db.pool.query<{ last_error: string | null }>("SELECT last_error FROM outbox WHERE payment_id = $1 AND kind = 'provider_call'", [paymentId])).rows,
      (rows) => rows.some((row) => row.last_error?.includes('VaultUnavailableError') === true),
      'the provider call row failing on the vault', 10_000,
    );
    expect((await api.gw.rt.database.pool.query<{ state: string }>('SELECT state FROM payments WHERE id = $1', [paymentId])).rows[0]!.state).toBe('authorizing');
    expect(await accessLog(id)).toEqual([]);

    vaultProcess = await startVault();
    const done = await waitForPayment(api.gw.rt, api.merchantId, paymentId, (p) => p.state !== 'authorizing', 30_000);
    expect(done?.state).not.toBe('authorizing');
    // Only the sends that got their card are logged: the failed reveals never reached the vault.
    expect(await accessLog(id)).toEqual(done!.attempts.map((t) => ({ purpose: 'provider_call', attempt_id: t.id, process: `all@${hostname()}:${process.pid}`, fields: ['pan', 'cvc'] })));
  }, 60_000);
});

describe('starting with a vault process', () => {
  it('the vault role refuses to start without its token, with a weak one, on the development key, or with keys that cannot open its records', async () => {
    const noToken = await runCli(['start', '--role', 'vault'], vaultEnv({ SWITCHYARD_VAULT_TOKEN: '', SWITCHYARD_VAULT_PORT: String(await freePort()) }), 30_000);
    expect(noToken.code).toBe(1);
    expect(noToken.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^switchyard start --role vault needs SWITCHYARD_VAULT_TOKEN/)]);
    const weak = await runCli(['start', '--role', 'vault'], vaultEnv({ SWITCHYARD_VAULT_TOKEN: 'short', SWITCHYARD_VAULT_PORT: String(await freePort()) }), 30_000);
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/SWITCHYARD_VAULT_TOKEN must be at least 32/);
    // The development key (the checkout's file): refused unless allowed, naming both variables.
    const dev = await runCli(['start', '--role', 'vault'], vaultEnv({ SWITCHYARD_VAULT_KEYS: '', SWITCHYARD_VAULT_PORT: String(await freePort()) }), 30_000);
    expect(dev.code).toBe(1);
    expect(dev.stderr).toMatch(/would use the development key in .*: set SWITCHYARD_VAULT_KEYS .*SWITCHYARD_VAULT_ALLOW_DEV_KEY=true/);
    const other = await runCli(['start', '--role', 'vault'], vaultEnv({ SWITCHYARD_VAULT_KEYS: `other:${randomBytes(32).toString('base64')}`, SWITCHYARD_VAULT_PORT: String(await freePort()) }), 30_000);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/SWITCHYARD_VAULT_KEYS cannot decrypt the vault's records: .*"vp1"/);
    expect(other.stdout).not.toContain('listening');
  }, 90_000);

  it('a gateway refuses SWITCHYARD_VAULT_URL without its token; with it, it needs no SWITCHYARD_VAULT_KEYS and leaves the records to the vault', async () => {
    const refused = await runCli(['start'], { SWITCHYARD_VAULT_URL: vaultUrl, SWITCHYARD_VAULT_TOKEN: '', PORT: String(await freePort()) }, 30_000);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^SWITCHYARD_VAULT_URL needs SWITCHYARD_VAULT_TOKEN/)]);
    const clear = await runCli(['start'], { SWITCHYARD_VAULT_URL: 'http://vault.internal:8089', SWITCHYARD_VAULT_TOKEN: TOKEN, PORT: String(await freePort()) }, 30_000);
    expect(clear.code).toBe(1);
    expect(clear.stderr).toMatch(/card data would cross the network in the clear to vault\.internal; use https:\/\//);

    // Its vault database holds records sealed under the vault process's key: with the embedded
    // vault (the development key here) this start would be refused; through the vault it is not.
    const db = await createTestDatabase('vault_process_gw');
    const redis = await startPrivateRedis();
    let gateway: GatewayProcess | null = null;
    try {
      gateway = await startGatewayProcess('switchyard start', {
        DATABASE_URL: db.url, REDIS_URL: redis.url, VAULT_DATABASE_URL: vaultDbUrl, SWITCHYARD_VAULT_KEYS: '', PORT: String(await freePort()),
        SWITCHYARD_VAULT_URL: vaultUrl, SWITCHYARD_VAULT_TOKEN: TOKEN,
      });
      expect(gateway.output()).not.toContain('development key');
      expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);
    } finally {
      await gateway?.stop('SIGTERM');
      await redis.stop();
      await db.drop();
    }
  }, 90_000);

  it('a gateway with a live account refuses a vault process on its development key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sy-vault-dev-'));
    const gatewayDb = `switchyard_test_vault_dev_${randomBytes(4).toString('hex')}`;
    const vault = await openVault({ gatewayDatabaseUrl: withDatabase(api.gw.db.url, gatewayDb), env: {}, devKeyFile: join(dir, 'dev.key'), sweepEveryMs: 0, poolMax: 1 });
    const app = createVaultApp(vault, { tokens: [TOKEN], keys: 'development', ping: async () => void (await vault.parts.pool.query('SELECT 1')), log: () => undefined });
    const listener = await listenVault(app, '127.0.0.1', 0);
    try {
      const settings = { url: listener.url, token: TOKEN, timeoutMs: 2000 };
      await expect(checkRemoteVaultForStart(settings, ['stripe_live'])).rejects.toThrow(/stripe_live reaches a live provider, and the vault at .* runs on its development key: set SWITCHYARD_VAULT_KEYS on the vault's host/);
      expect(await checkRemoteVaultForStart(settings, [])).toBe('not_needed');
      expect(await checkRemoteVaultForStart({ ...settings, url: vaultUrl }, ['stripe_live'])).toBe('checked');
    } finally {
      await listener.close();
      await vault.close();
      const { dropDatabase } = await import('../helpers/db.ts');
      await dropDatabase(api.gw.db.url, `${gatewayDb}_vault`);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
