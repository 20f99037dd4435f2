// Merchant API keys, the pure part: their shape, what a key string says about itself, and the rule
// that a merchant keeps a full key for every mode it has. Random bytes, hashing and storage are the
// caller's (src/store/api-keys.ts).
//
// A key made since issue 47 embeds its id, so the one lookup a request costs is by primary key:
//   sk_sy_live_<key id>_<secret>   sk_sy_test_…   pk_sy_live_…   pk_sy_test_…
// A key made before (legacy: sk_sy_<random>, pk_sy_<random>) has no id in it and is found by its
// hash, as it always was. The lengths differ (the random part of a legacy key is 43 characters;
// `live_key_…_<43>` is 79), so no string is both.

import { isId } from './ids.ts';

export const KEY_KINDS = ['secret', 'publishable'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

/** What a secret key may call (the table of operations: src/api/key-roles.ts). */
export const KEY_ROLES = ['full', 'payments', 'refunds', 'read_only'] as const;
export type KeyRole = (typeof KEY_ROLES)[number];

export const KEY_MODES = ['test', 'live'] as const;
export type KeyMode = (typeof KEY_MODES)[number];
/** A legacy key's mode: it reaches test and live accounts alike, as every key did before modes. */
export type StoredKeyMode = KeyMode | 'any';

/** The longest a rolled key keeps working after its roll: 7 days. */
export const MAX_ROLL_EXPIRES_IN_S = 604_800;

const PREFIX: Record<KeyKind, string> = { secret: 'sk_sy_', publishable: 'pk_sy_' };

export function keyPrefix(kind: KeyKind): string {
  return PREFIX[kind];
}

/** `sk_sy_live_<id>_<secret>`: the secret is the caller's random part (base64url). */
export function composeKey(kind: KeyKind, mode: KeyMode, id: string, secret: string): string {
  return `${PREFIX[kind]}${mode}_${id}_${secret}`;
}

export type ParsedKey =
  | { readonly form: 'current'; readonly kind: KeyKind; readonly mode: KeyMode; readonly id: string }
  | { readonly form: 'legacy'; readonly kind: KeyKind };

const CURRENT = /^(sk|pk)_sy_(live|test)_(key_[0-9a-z]{26})_([A-Za-z0-9_-]{43})$/;
const LEGACY = /^(sk|pk)_sy_([A-Za-z0-9_-]{43})$/;

/** What a presented key claims to be; null when it has neither shape (then no lookup is made). */
export function parseKey(text: string): ParsedKey | null {
  const current = CURRENT.exec(text);
  if (current !== null && isId('key', current[3])) {
    return { form: 'current', kind: current[1] === 'sk' ? 'secret' : 'publishable', mode: current[2] as KeyMode, id: current[3] };
  }
  const legacy = LEGACY.exec(text);
  if (legacy !== null) return { form: 'legacy', kind: legacy[1] === 'sk' ? 'secret' : 'publishable' };
  return null;
}

/** A key as the rules below see it. */
export interface KeyState {
  readonly id: string;
  readonly kind: KeyKind;
  readonly role: KeyRole | null;
  readonly mode: StoredKeyMode;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
}

/** Works now: not deleted, not past its expiry. */
export function isKeyActive(k: Pick<KeyState, 'expiresAt' | 'revokedAt'>, now: Date): boolean {
  return k.revokedAt === null && (k.expiresAt === null || k.expiresAt.getTime() > now.getTime());
}

const modesOf = (mode: StoredKeyMode): readonly KeyMode[] => (mode === 'any' ? KEY_MODES : [mode]);

/**
 * The mode for which `removing` is the merchant's last working full key (null: none), so deleting
 * it would leave the merchant unable to manage its keys in that mode. A legacy key counts for both.
 */
export function lastFullKeyMode(keys: readonly KeyState[], removing: KeyState, now: Date): KeyMode | null {
  if (removing.kind !== 'secret' || removing.role !== 'full' || !isKeyActive(removing, now)) return null;
  for (const mode of modesOf(removing.mode)) {
    const others = keys.some((k) => k.id !== removing.id && k.kind === 'secret' && k.role === 'full' && isKeyActive(k, now) && modesOf(k.mode).includes(mode));
    if (!others) return mode;
  }
  return null;
}

/** When a rolled key stops working: `expiresInS` from now, never later than it would have anyway. */
export function rolledExpiry(current: Date | null, now: Date, expiresInS: number): Date {
  const at = new Date(now.getTime() + expiresInS * 1000);
  return current !== null && current.getTime() < at.getTime() ? current : at;
}
