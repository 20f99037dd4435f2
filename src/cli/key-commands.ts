// `switchyard merchants keys list|create|roll|revoke`: a merchant's API keys for operators, one JSON
// line each, the same resources the API answers (docs/api.md, "Keys and modes"). A new key's secret
// is printed once. Every change is made by src/app/key-actions.ts, as through the API, and audited
// under the operator's name (SWITCHYARD_OPERATOR_TOKEN) in its transaction.

import { apiKeyAnswer } from '../api/api-key-schemas.ts';
import { createKey, revokeKeyAction, rollKeyAction } from '../app/key-actions.ts';
import type { KeyRefusal } from '../app/key-actions.ts';
import { KEY_ROLES, MAX_ROLL_EXPIRES_IN_S } from '../core/api-keys.ts';
import type { KeyRole } from '../core/api-keys.ts';
import { containsCardNumber } from '../core/card-number-detector.ts';
import { isId } from '../core/ids.ts';
import { cliOperator } from '../ops/operators.ts';
import { listKeys } from '../store/api-keys.ts';
import { loadMerchant } from '../store/merchants.ts';
import { withDb } from './cli-database.ts';
import { CliInputError } from './cli-input-error.ts';
import { parseMode } from './merchant-commands.ts';

function refusalLine(r: KeyRefusal, id: string): string {
  switch (r.refused) {
    case 'merchant_not_found': return `merchant ${id} not found`;
    case 'not_found': return `key ${id} not found (or deleted)`;
    case 'key_limit_reached': return `the merchant already has ${r.limit} working keys: revoke one first`;
    case 'expired': return `key ${id} expired at ${r.at.toISOString()}: create a new one`;
    case 'already_rolled': return `key ${id} was rolled already, to ${r.replacedBy}: roll that one`;
    case 'mode_required': return `key ${id} is a legacy key (mode any): give the new key's --mode (test or live)`;
    case 'mode_mismatch': return `a rolled key keeps its mode (${r.mode}): leave --mode out`;
    case 'last_full_key': return `key ${id} is the merchant's last working full key for ${r.mode} mode: create another full ${r.mode} key first (or roll this one)`;
  }
}

function keyId(text: string): void {
  if (!isId('key', text)) throw new CliInputError(`"${String(text)}" is not a key id (key_…)`);
}

export async function listKeysCommand(url: string, merchantId: string, o: { all?: boolean }, now: () => Date = () => new Date()): Promise<string> {
  return withDb(url, async (db) => {
    if ((await loadMerchant(db, merchantId)) === null) throw new CliInputError(`merchant ${merchantId} not found`);
    const keys = await listKeys(db, merchantId, now(), { all: o.all === true });
    return JSON.stringify({ object: 'list', merchant_id: merchantId, data: keys.map(apiKeyAnswer) });
  });
}

export interface CreateKeyInput {
  readonly role?: string;
  readonly mode?: string;
  readonly name: string;
  readonly publishable?: boolean;
  readonly expiresAt?: string;
}

export async function createKeyCommand(url: string, merchantId: string, o: CreateKeyInput, env: NodeJS.ProcessEnv = process.env, now: () => Date = () => new Date()): Promise<string> {
  const kind = o.publishable === true ? 'publishable' : 'secret';
  let role: KeyRole | null = null;
  if (kind === 'secret') {
    if (o.role === undefined || !(KEY_ROLES as readonly string[]).includes(o.role)) throw new CliInputError(`--role must be one of ${KEY_ROLES.join(', ')} for a secret key`);
    role = o.role as KeyRole;
  } else if (o.role !== undefined) {
    throw new CliInputError('--role: a publishable key has no role');
  }
  if (o.mode === undefined) throw new CliInputError('--mode is required: test or live');
  const mode = parseMode(o.mode);
  const name = o.name.trim();
  if (name === '' || name.length > 100) throw new CliInputError('--name must be 1 to 100 characters');
  if (containsCardNumber(name)) throw new CliInputError('--name holds a card number');
  let expiresAt: Date | null = null;
  if (o.expiresAt !== undefined) {
    expiresAt = new Date(o.expiresAt);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(o.expiresAt) || Number.isNaN(expiresAt.getTime())) throw new CliInputError(`--expires-at "${o.expiresAt}" is not an ISO 8601 time (2027-01-31T00:00:00Z)`);
    if (expiresAt.getTime() <= now().getTime()) throw new CliInputError('--expires-at must be in the future');
  }
  const operator = cliOperator(env).name;
  return withDb(url, async (db) => {
    const r = await createKey(db, { operator }, { merchantId, kind, role, mode, name, expiresAt, now: now() });
    if (r.refused !== undefined) throw new CliInputError(refusalLine(r, merchantId));
    return JSON.stringify({ ...apiKeyAnswer(r.key), secret: r.secret });
  });
}

export async function rollKeyCommand(url: string, id: string, o: { expiresIn: string; mode?: string }, env: NodeJS.ProcessEnv = process.env, now: () => Date = () => new Date()): Promise<string> {
  keyId(id);
  const expiresInS = Number(o.expiresIn);
  if (!/^\d+$/.test(o.expiresIn) || expiresInS > MAX_ROLL_EXPIRES_IN_S) throw new CliInputError(`--expires-in "${o.expiresIn}" is not a whole number of seconds from 0 to ${MAX_ROLL_EXPIRES_IN_S}`);
  const mode = o.mode === undefined ? undefined : parseMode(o.mode);
  const operator = cliOperator(env).name;
  return withDb(url, async (db) => {
    const r = await rollKeyAction(db, { operator }, { keyId: id, expiresInS, now: now(), ...(mode === undefined ? {} : { mode }) });
    if (r.refused !== undefined) throw new CliInputError(refusalLine(r, id));
    return JSON.stringify({ ...apiKeyAnswer(r.key), secret: r.secret, old_key: apiKeyAnswer(r.old) });
  });
}

export async function revokeKeyCommand(url: string, id: string, env: NodeJS.ProcessEnv = process.env, now: () => Date = () => new Date()): Promise<string> {
  keyId(id);
  const operator = cliOperator(env).name;
  return withDb(url, async (db) => {
    const r = await revokeKeyAction(db, { operator }, { keyId: id, now: now() });
    if (r.refused !== undefined) throw new CliInputError(refusalLine(r, id));
    return JSON.stringify(apiKeyAnswer(r.key));
  });
}
