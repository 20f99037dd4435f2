// SWITCHYARD_VAULT_KEYS: name:base64 of 32 bytes, comma separated, the first encrypts. Every
// refusal names the variable and the entry, never the key.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseVaultKeys } from '../../../src/vault/keys.ts';

const b64 = (): string => randomBytes(32).toString('base64');

describe('parseVaultKeys', () => {
  it('reads the keys in order, the first first', () => {
    const a = b64();
    const b = b64();
    const r = parseVaultKeys(`k2026:${a}, k2025:${b}`);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.keys.map((k) => k.name)).toEqual(['k2026', 'k2025']);
    expect(Buffer.from(r.keys[0].bytes).toString('base64')).toBe(a);
  });

  it.each([
    ['no colon', 'justakey', /SWITCHYARD_VAULT_KEYS entry 1 is not <name>:<base64/],
    ['16 bytes', `a:${randomBytes(16).toString('base64')}`, /entry 1 \("a"\): the key must be the base64 of exactly 32 random bytes/],
    ['not base64', `a:${'!'.repeat(44)}`, /exactly 32 random bytes/],
    ['bad name', `a b:${b64()}`, /the name "a b" must be/],
    ['a name twice', `a:${b64()},a:${b64()}`, /entry 2: the name "a" is given twice/],
    ['a name that starts another', `key:${b64()},key2:${b64()}`, /entry 2: the name "key2" and "key" start alike/],
  ])('refuses %s, naming the variable', (_label, value, message) => {
    const r = parseVaultKeys(value);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problem).toMatch(message);
    // The key material never appears in the message.
    const secret = value.split(':')[1]?.split(',')[0] ?? '';
    if (secret.length > 8) expect(r.problem).not.toContain(secret);
  });
});
