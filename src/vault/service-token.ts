// SWITCHYARD_VAULT_TOKEN: the bearer token between the vault process and the gateway processes
// that use it. Both ends refuse a missing or weak one, naming the variable; the vault compares a
// presented token in constant time.

import { createHash, timingSafeEqual } from 'node:crypto';

export const VAULT_TOKEN_VARIABLE = 'SWITCHYARD_VAULT_TOKEN';
export const VAULT_URL_VARIABLE = 'SWITCHYARD_VAULT_URL';
/** On the vault's host during a rotation: the token the other processes still send until they restart. */
export const VAULT_PREVIOUS_TOKEN_VARIABLE = 'SWITCHYARD_VAULT_PREVIOUS_TOKEN';

const MIN_LENGTH = 32;

/** Why the value cannot be the token (null: it can). */
export function vaultTokenProblem(value: string | undefined, needed: string, variable: string = VAULT_TOKEN_VARIABLE): string | null {
  if (value === undefined || value === '') return `${needed} needs ${variable} (the vault process and every process using it share it; make one with: openssl rand -hex 32)`;
  if (value.length < MIN_LENGTH || !/^[\x21-\x7e]+$/.test(value)) return `${variable} must be at least ${MIN_LENGTH} printable characters without spaces (openssl rand -hex 32)`;
  return null;
}

/**
 * The presented Authorization header carries one of the tokens (the current one, and during a
 * rotation the previous one). Every side is hashed first and every token compared, so the time
 * taken says nothing of the presented value or of which token it matched.
 */
export function presentsToken(authorization: string | undefined, tokens: readonly string[]): boolean {
  const m = /^Bearer ([\x21-\x7e]+)$/.exec(authorization ?? '');
  const presented = createHash('sha256').update(m === null ? '' : m[1]!).digest();
  let matched = false;
  for (const token of tokens) {
    if (timingSafeEqual(presented, createHash('sha256').update(token).digest())) matched = true;
  }
  return matched && m !== null;
}
