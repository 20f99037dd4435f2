// The vault client (SWITCHYARD_VAULT_URL): its settings refuse what would leak or fail later, and
// every way a call can get no answer is one VaultUnavailableError that says whether waiting heals
// it (a job re-run as an outage, a start waiting) and never quotes the answer. The vault's end is a
// small HTTP server on a loopback socket answering as told.

import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asJobFailure, isInfrastructureFailure } from '../../../src/jobs/job-failure.ts';
import { isTransientStartError } from '../../../src/cli/transient-errors.ts';
import { createVaultClient, vaultClientSettingsFromEnv } from '../../../src/vault/client.ts';
import { presentsToken } from '../../../src/vault/service-token.ts';
import { VaultUnavailableError } from '../../../src/vault/vault-unavailable.ts';
import { freePort } from '../../../chaos/private-redis.ts';

const TOKEN = 'a'.repeat(64);
const NUMBER = '4242424242424242';

describe('vaultClientSettingsFromEnv', () => {
  it('is null without SWITCHYARD_VAULT_URL: the embedded vault', () => {
    expect(vaultClientSettingsFromEnv({})).toBeNull();
    expect(vaultClientSettingsFromEnv({ SWITCHYARD_VAULT_URL: '' })).toBeNull();
  });

  it('reads the URL (trailing slashes dropped), the token and the timeout', () => {
    expect(vaultClientSettingsFromEnv({ SWITCHYARD_VAULT_URL: 'https://vault.internal:8089/', SWITCHYARD_VAULT_TOKEN: TOKEN })).toEqual({ url: 'https://vault.internal:8089', token: TOKEN, timeoutMs: 5000 });
    expect(vaultClientSettingsFromEnv({ SWITCHYARD_VAULT_URL: 'http://127.0.0.1:8089/vault//', SWITCHYARD_VAULT_TOKEN: TOKEN, SWITCHYARD_VAULT_TIMEOUT: '750ms' })).toEqual({ url: 'http://127.0.0.1:8089/vault', token: TOKEN, timeoutMs: 750 });
  });

  it('refuses, naming the variable: no token, a weak one, plain http to another host, credentials in the URL, a bad timeout', () => {
    const refused = (env: NodeJS.ProcessEnv): string => {
      try {
        vaultClientSettingsFromEnv(env);
      } catch (err) {
        expect((err as Error).name).toBe('VaultSettingsError');
        return (err as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refused({ SWITCHYARD_VAULT_URL: 'http://127.0.0.1:8089' })).toMatch(/^SWITCHYARD_VAULT_URL needs SWITCHYARD_VAULT_TOKEN/);
    expect(refused({ SWITCHYARD_VAULT_URL: 'http://127.0.0.1:8089', SWITCHYARD_VAULT_TOKEN: 'short' })).toMatch(/SWITCHYARD_VAULT_TOKEN must be at least 32/);
    expect(refused({ SWITCHYARD_VAULT_URL: 'http://127.0.0.1:8089', SWITCHYARD_VAULT_TOKEN: `${'a'.repeat(32)} b` })).toMatch(/without spaces/);
    expect(refused({ SWITCHYARD_VAULT_URL: 'http://10.0.0.5:8089', SWITCHYARD_VAULT_TOKEN: TOKEN })).toMatch(/in the clear to 10\.0\.0\.5; use https:\/\//);
    expect(refused({ SWITCHYARD_VAULT_URL: 'http://127.0.0.1.example.com', SWITCHYARD_VAULT_TOKEN: TOKEN })).toMatch(/in the clear/);
    expect(refused({ SWITCHYARD_VAULT_URL: `https://user:${TOKEN}@vault.internal`, SWITCHYARD_VAULT_TOKEN: TOKEN })).toMatch(/must not carry credentials/);
    expect(refused({ SWITCHYARD_VAULT_URL: 'vault.internal:8089', SWITCHYARD_VAULT_TOKEN: TOKEN })).toMatch(/http:\/\/ or https:\/\//);
    expect(refused({ SWITCHYARD_VAULT_URL: 'https://vault.internal', SWITCHYARD_VAULT_TOKEN: TOKEN, SWITCHYARD_VAULT_TIMEOUT: '5' })).toMatch(/^SWITCHYARD_VAULT_TIMEOUT=5 is not a duration/);
  });
});

describe('presentsToken', () => {
  it('takes exactly "Bearer <token>", of the current token or (during a rotation) the previous one', () => {
    const previous = 'b'.repeat(40);
    expect(presentsToken(`Bearer ${TOKEN}`, [TOKEN])).toBe(true);
    expect(presentsToken(`Bearer ${TOKEN}`, [TOKEN, previous])).toBe(true);
    expect(presentsToken(`Bearer ${previous}`, [TOKEN, previous])).toBe(true);
    expect(presentsToken(`Bearer ${previous}`, [TOKEN])).toBe(false);
    for (const h of [undefined, '', TOKEN, `bearer ${TOKEN}`, `Bearer ${TOKEN} `, `Bearer ${TOKEN}a`, `Bearer ${TOKEN.slice(1)}`, 'Bearer ', `Basic ${TOKEN}`]) {
      expect(presentsToken(h, [TOKEN, previous]), String(h)).toBe(false);
    }
  });
});

describe('createVaultClient: no answer is a VaultUnavailableError', () => {
  let server: Server;
  let url: string;
  let answer: (res: ServerResponse) => void = (res) => res.end();
  const seen: { authorization: string | undefined; contentType: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ authorization: req.headers.authorization, contentType: req.headers['content-type'] });
      req.resume();
      req.on('end', () => answer(res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const json = (status: number, body: unknown) => (res: ServerResponse): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const revealFails = async (timeoutMs = 2000): Promise<VaultUnavailableError> => {
    const e = await createVaultClient({ url, token: TOKEN, timeoutMs }).reveal('pmd_x', { purpose: 'provider_call', attemptId: 'att_x', process: 'worker@h:1' }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(VaultUnavailableError);
    expect((e as Error).message).not.toContain(NUMBER);
    return e as VaultUnavailableError;
  };

  it('sends the token and JSON, and reads the answer', async () => {
    answer = json(200, { card: { id: 'pmd_x', merchant_id: 'mer_a', brand: 'visa', number: NUMBER, exp_month: 1, exp_year: 2031, holder_name: null, cvc: '123', first_reveal_had_code: null } });
    const card = await createVaultClient({ url, token: TOKEN, timeoutMs: 2000 }).reveal('pmd_x', { purpose: 'provider_call', attemptId: 'att_x', process: 'worker@h:1', requestKey: 'k1' });
    expect(card).toEqual({ id: 'pmd_x', merchantId: 'mer_a', brand: 'visa', number: NUMBER, expMonth: 1, expYear: 2031, holderName: null, cvc: '123', firstRevealHadCode: null });
    expect(seen.at(-1)).toEqual({ authorization: `Bearer ${TOKEN}`, contentType: 'application/json' });
  });

  it('401: the token refused, which waiting does not heal', async () => {
    answer = json(401, { error: 'unauthorized', message: 'no' });
    const e = await revealFails();
    expect(e).toMatchObject({ reason: 'token_refused', connectionLoss: false });
    expect(isInfrastructureFailure(asJobFailure(e))).toBe(false);
    expect(isTransientStartError(e)).toBe(false);
  });

  it('503: the vault\'s database is down, an outage that jobs and starts wait out', async () => {
    answer = json(503, { error: 'vault_down', message: 'the vault database does not answer' });
    const e = await revealFails();
    expect(e).toMatchObject({ reason: 'vault_down', connectionLoss: true });
    expect(isInfrastructureFailure(asJobFailure(e))).toBe(true);
    expect(isTransientStartError(e)).toBe(true);
  });

  it('500, 404 and an answer that is not the protocol: failures that are not outages, never quoting the answer', async () => {
    answer = json(500, { error: 'vault_failure', message: 'VaultContextMismatchError' });
    expect(await revealFails()).toMatchObject({ reason: 'vault_failure', connectionLoss: false });
    answer = json(404, { error: 'not_found', message: 'no route' });
    expect(await revealFails()).toMatchObject({ reason: 'protocol', connectionLoss: false });
    // A card in an answer the client does not accept (a code of 7 digits): the error names the field, not the value.
    answer = json(200, { card: { id: 'pmd_x', merchant_id: 'mer_a', brand: 'visa', number: NUMBER, exp_month: 1, exp_year: 2031, holder_name: null, cvc: '1234567', first_reveal_had_code: null } });
    const e = await revealFails();
    expect(e).toMatchObject({ reason: 'protocol', message: expect.stringContaining('card.cvc') as unknown });
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(`{"card": {"number": "${NUMBER}"`);
    expect(await revealFails()).toMatchObject({ reason: 'protocol' });
    expect(isTransientStartError(e)).toBe(false);
  });

  it('no answer in time: a timeout, within the client\'s bound', async () => {
    answer = () => undefined;
    const started = Date.now();
    const e = await revealFails(300);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(e).toMatchObject({ reason: 'timeout', connectionLoss: true, message: expect.stringContaining('within 300 ms') as unknown });
    expect(isInfrastructureFailure(asJobFailure(e))).toBe(true);
  });

  it('nothing listening: unreachable, at once', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const started = Date.now();
    const e = await createVaultClient({ url: closed, token: TOKEN, timeoutMs: 5000 }).describe('mer_a', 'pmd_x').catch((err: unknown) => err);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(e).toMatchObject({ name: 'VaultUnavailableError', reason: 'unreachable', connectionLoss: true, message: expect.stringContaining('ECONNREFUSED') as unknown });
    expect(isTransientStartError(e)).toBe(true);
  });
});
