// API keys, the pure part: the shape a key string has (its kind, mode and id), and the rule that a
// merchant keeps a working full key for each mode.
import { describe, expect, it } from 'vitest';
import { composeKey, isKeyActive, lastFullKeyMode, parseKey, rolledExpiry } from '../../../src/core/api-keys.ts';
import type { KeyState } from '../../../src/core/api-keys.ts';
import { newId } from '../../../src/core/ids.ts';

const SECRET = 'A'.repeat(21) + '_-' + 'z'.repeat(20);
const NOW = new Date('2027-01-01T00:00:00Z');
const key = (over: Partial<KeyState> & { id: string }): KeyState => ({ kind: 'secret', role: 'full', mode: 'live', expiresAt: null, revokedAt: null, ...over });

describe('key strings', () => {
  it('a new key embeds its kind, mode and id; parsing gives them back', () => {
    const id = newId('key');
    expect(id).toMatch(/^key_[0-9a-z]{26}$/);
    const sk = composeKey('secret', 'live', id, SECRET);
    expect(sk).toBe(`sk_sy_live_${id}_${SECRET}`);
    expect(parseKey(sk)).toEqual({ form: 'current', kind: 'secret', mode: 'live', id });
    expect(parseKey(composeKey('publishable', 'test', id, SECRET))).toEqual({ form: 'current', kind: 'publishable', mode: 'test', id });
  });

  it('a legacy key (sk_sy_ or pk_sy_ and 43 random characters) is legacy, whatever its characters spell', () => {
    expect(parseKey(`sk_sy_${SECRET}`)).toEqual({ form: 'legacy', kind: 'secret' });
    expect(parseKey(`pk_sy_${SECRET}`)).toEqual({ form: 'legacy', kind: 'publishable' });
    // 43 characters that start like a new key are still a legacy key: the lengths tell them apart.
    expect(parseKey(`sk_sy_live_key_${'0'.repeat(34)}`)).toEqual({ form: 'legacy', kind: 'secret' });
  });

  it('anything else is no key: no lookup is made for it', () => {
    const id = newId('key');
    for (const text of ['', 'sk_sy_short', `sk_sy_prod_${id}_${SECRET}`, `sk_sy_live_${id}_${SECRET}x`, `sk_sy_live_pay_${id.slice(4)}_${SECRET}`,
      `rk_sy_live_${id}_${SECRET}`, `sk_live_${SECRET}`, `sk_sy_live_${id.toUpperCase()}_${SECRET}`]) {
      expect([text, parseKey(text)]).toEqual([text, null]);
    }
  });
});

describe('the last full key of a mode', () => {
  it('is the only working full key covering that mode; a legacy key covers both', () => {
    const live = key({ id: 'a' });
    const test = key({ id: 'b', mode: 'test' });
    expect(lastFullKeyMode([live, test], live, NOW)).toBe('live');
    expect(lastFullKeyMode([live, test, key({ id: 'c' })], live, NOW)).toBeNull();
    const legacy = key({ id: 'l', mode: 'any' });
    expect(lastFullKeyMode([legacy, live], live, NOW)).toBeNull();
    // Deleting the legacy key would leave test mode without a full key.
    expect(lastFullKeyMode([legacy, live], legacy, NOW)).toBe('test');
    expect(lastFullKeyMode([legacy, live, test], legacy, NOW)).toBeNull();
  });

  it('counts only working full secret keys, and never guards anything else', () => {
    const live = key({ id: 'a' });
    const others = [
      key({ id: 'p', role: 'payments' }), key({ id: 'x', expiresAt: NOW }), key({ id: 'r', revokedAt: NOW }),
      key({ id: 'k', kind: 'publishable', role: null }),
    ];
    expect(lastFullKeyMode([live, ...others], live, NOW)).toBe('live');
    for (const o of others) expect(lastFullKeyMode([live, ...others], o, NOW)).toBeNull();
    // A key still in its roll's grace counts until it expires.
    expect(lastFullKeyMode([live, key({ id: 'g', expiresAt: new Date(NOW.getTime() + 1) })], live, NOW)).toBeNull();
  });
});

describe('expiry', () => {
  it('a key works until its expiry instant, and not once deleted', () => {
    expect(isKeyActive({ expiresAt: null, revokedAt: null }, NOW)).toBe(true);
    expect(isKeyActive({ expiresAt: new Date(NOW.getTime() + 1), revokedAt: null }, NOW)).toBe(true);
    expect(isKeyActive({ expiresAt: NOW, revokedAt: null }, NOW)).toBe(false);
    expect(isKeyActive({ expiresAt: null, revokedAt: NOW }, NOW)).toBe(false);
  });

  it('a roll ends the old key expires_in from now, never later than it would have ended', () => {
    expect(rolledExpiry(null, NOW, 0)).toEqual(NOW);
    expect(rolledExpiry(null, NOW, 3600)).toEqual(new Date('2027-01-01T01:00:00Z'));
    expect(rolledExpiry(new Date('2027-01-01T00:10:00Z'), NOW, 3600)).toEqual(new Date('2027-01-01T00:10:00Z'));
  });
});
