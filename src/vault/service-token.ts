// SWITCHYARD_VAULT_TOKEN: the bearer token between the vault process and the gateway processes
// that use it. Both ends refuse a missing or weak one, naming the variable; the vault compares a
// presented token in constant time.

import { createHash, timingSafeEqual } from 'node:crypto';

export const VAULT_TOKEN_VARIABLE = 'SWITCHYARD_VAULT_TOKEN';
export const VAULT_URL_VARIABLE = 'SWITCHYARD_VAULT_URL';

const MIN_LENGTH = 32;

/** Why the value cannot be the token (null: it can). */
export function vaultTokenProblem(value: string | undefined, needed: string): string | null {
  if (value === undefined || value === '') return `${needed} needs ${VAULT_TOKEN_VARIABLE} (the vault process and every process using it share it; make one with: openssl rand -hex 32)`;
  if (value.length < MIN_LENGTH || !/^[\x21-\x7e]+$/.test(value)) return `${VAULT_TOKEN_VARIABLE} must be at least ${MIN_LENGTH} printable characters without spaces (openssl rand -hex 32)`;
  return null;
}

/**
 * The presented Authorization header carries the token. Both sides are hashed first, so the
 * comparison takes the same time whatever the presented value's length.
 */
export function presentsToken(authorization: string | undefined, token: string): boolean {
  const m = /^Bearer ([\x21-\x7e]+)$/.exec(authorization ?? '');
  const presented = createHash('sha256').update(m === null ? '' : m[1]!).digest();
  const expected = createHash('sha256').update(token).digest();
  return timingSafeEqual(presented, expected) && m !== null;
}
