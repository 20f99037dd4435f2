// The vault of a gateway process whose vault runs elsewhere (SWITCHYARD_VAULT_URL, a process
// started with `switchyard start --role vault`): the same interface, over HTTP(S). A call that
// gets no answer throws VaultUnavailableError: the API answers 503 and writes nothing, a worker's
// job fails before its provider call is sent and is run again. No answer is ever quoted in an
// error (the reveal's carries the card).

import { isIPv4 } from 'node:net';
import type { z } from 'zod';
import { parseDuration } from '../routing/duration.ts';
import type { ProcessVault } from './lazy.ts';
import { VAULT_TOKEN_VARIABLE, VAULT_URL_VARIABLE, vaultTokenProblem } from './service-token.ts';
import { VaultUnavailableError } from './vault-unavailable.ts';
import {
  describeAnswer, describeAnswerFromWire, forgetCodeAnswer, healthAnswer, requestDigestAnswer, refusalAnswer, revealAnswer, revealBody, revealedFromWire, tokenizeAnswer,
  tokenizeBody, tokenizeResultFromWire, VAULT_PATHS,
} from './wire.ts';
import type { VaultHealth } from './wire.ts';

export const VAULT_TIMEOUT_VARIABLE = 'SWITCHYARD_VAULT_TIMEOUT';
export const DEFAULT_VAULT_TIMEOUT_MS = 5_000;

/** SWITCHYARD_VAULT_URL, SWITCHYARD_VAULT_TOKEN or SWITCHYARD_VAULT_TIMEOUT cannot be used. */
export class VaultSettingsError extends Error {
  override readonly name = 'VaultSettingsError';
}

export interface VaultClientSettings {
  /** The vault's base URL, without a trailing slash. */
  readonly url: string;
  readonly token: string;
  readonly timeoutMs: number;
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || (isIPv4(hostname) && hostname.startsWith('127.'));
}

/** The settings of a process that uses a vault process; null when SWITCHYARD_VAULT_URL is unset (the embedded vault). */
export function vaultClientSettingsFromEnv(env: NodeJS.ProcessEnv): VaultClientSettings | null {
  const raw = env[VAULT_URL_VARIABLE];
  if (raw === undefined || raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new VaultSettingsError(`${VAULT_URL_VARIABLE} is not a URL (e.g. https://vault.internal:8089)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new VaultSettingsError(`${VAULT_URL_VARIABLE} must be an http:// or https:// URL`);
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new VaultSettingsError(`${VAULT_URL_VARIABLE} must not carry credentials, a query or a fragment (the token goes in ${VAULT_TOKEN_VARIABLE})`);
  }
  // Card numbers cross this connection: in the clear only inside this machine.
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new VaultSettingsError(`${VAULT_URL_VARIABLE}: card data would cross the network in the clear to ${url.hostname}; use https:// (a TLS terminator in front of the vault's port) or a loopback address`);
  }
  const problem = vaultTokenProblem(env[VAULT_TOKEN_VARIABLE], VAULT_URL_VARIABLE);
  if (problem !== null) throw new VaultSettingsError(problem);
  const timeoutText = env[VAULT_TIMEOUT_VARIABLE];
  const timeoutMs = timeoutText === undefined || timeoutText === '' ? DEFAULT_VAULT_TIMEOUT_MS : parseDuration(timeoutText);
  if (timeoutMs === null || timeoutMs < 1) throw new VaultSettingsError(`${VAULT_TIMEOUT_VARIABLE}=${timeoutText} is not a duration like 500ms or 5s`);
  return { url: `${url.origin}${url.pathname.replace(/\/+$/, '')}`, token: env[VAULT_TOKEN_VARIABLE]!, timeoutMs };
}

export interface VaultClient extends ProcessVault {
  /** The vault answers and can reach its database; which keys it runs on. */
  health(): Promise<VaultHealth>;
}

export interface VaultClientOptions {
  readonly fetch?: typeof fetch;
}

/** The innermost code of a failed fetch (ECONNREFUSED, UND_ERR_SOCKET, …), for the one line. */
function failureCode(err: unknown): string {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return (err as Error | null)?.name ?? 'error';
}

export function createVaultClient(s: VaultClientSettings, o: VaultClientOptions = {}): VaultClient {
  const send = o.fetch ?? fetch;
  const where = `the vault at ${s.url}`;

  async function call<S extends z.ZodType>(op: string, path: string, body: unknown, schema: S): Promise<z.output<S>> {
    let res: Response;
    let text: string;
    try {
      res = await send(`${s.url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${s.token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        redirect: 'error',
        // Covers the answer's body too: a vault that stops mid-answer times out like one that never answers.
        signal: AbortSignal.timeout(s.timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      if ((err as Error | null)?.name === 'TimeoutError') throw new VaultUnavailableError('timeout', `${where} did not answer ${op} within ${s.timeoutMs} ms`, { cause: err });
      throw new VaultUnavailableError('unreachable', `${where} is unreachable for ${op} (${failureCode(err)})`, { cause: err });
    }
    if (res.status !== 200) {
      const refusal = refusalAnswer.safeParse(safeJson(text));
      const said = refusal.success ? `: ${refusal.data.error}` : '';
      if (res.status === 401) throw new VaultUnavailableError('token_refused', `${where} refused ${VAULT_TOKEN_VARIABLE} for ${op} (401): the vault process and this one must share it`);
      if (res.status === 503) throw new VaultUnavailableError('vault_down', `${where} cannot serve ${op} (503${said}): its database does not answer`);
      if (res.status >= 500) throw new VaultUnavailableError('vault_failure', `${where} failed ${op} (${res.status}${said})`);
      throw new VaultUnavailableError('protocol', `${where} refused ${op} (${res.status}${said}): is it the same Switchyard version?`);
    }
    const answer = schema.safeParse(safeJson(text));
    // The issue's path and kind only: the answer may hold a card.
    if (!answer.success) throw new VaultUnavailableError('protocol', `${where} answered ${op} with something else than the vault protocol (${answer.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.code}`).join('; ')})`);
    return answer.data;
  }

  return {
    async tokenize(merchantId, card) {
      return tokenizeResultFromWire(await call('tokenize', VAULT_PATHS.tokenize, tokenizeBody(merchantId, card), tokenizeAnswer));
    },
    async describe(merchantId, id) {
      return describeAnswerFromWire(await call('describe', VAULT_PATHS.describe, { merchant_id: merchantId, id }, describeAnswer));
    },
    async reveal(id, access) {
      return revealedFromWire(await call('reveal', VAULT_PATHS.reveal, revealBody(id, access), revealAnswer));
    },
    async forgetCode(id) {
      return (await call('forget-code', VAULT_PATHS.forgetCode, { id }, forgetCodeAnswer)).forgotten;
    },
    async requestDigest(merchantId, text) {
      return (await call('request-digest', VAULT_PATHS.requestDigest, { merchant_id: merchantId, text }, requestDigestAnswer)).digest;
    },
    // The vault process destroys expired codes itself (openVault's sweep, every 60 s): nothing to do here.
    sweepCodes: () => Promise.resolve(0),
    health: () => call('health', VAULT_PATHS.health, undefined, healthAnswer),
    close: () => Promise.resolve(),
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
