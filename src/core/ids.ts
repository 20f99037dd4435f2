// Prefixed, time-sortable ids: <prefix>_<10 chars of milliseconds><16 random chars>, Crockford base32.
// Sortable by creation time, so ORDER BY id is creation order for list cursors.

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export const ID_PREFIXES = {
  payment: 'pay',
  attempt: 'att',
  capture: 'cap',
  refund: 'rfd',
  event: 'evt',
  dispute: 'dsp',
  merchant: 'mer',
  delivery: 'dlv',
  endpoint: 'we',
  discrepancy: 'dsc',
  transition: 'trn',
  ledger: 'ltx',
  paymentMethod: 'pmd',
  key: 'key',
  file: 'file',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;
export type IdPrefix = (typeof ID_PREFIXES)[IdKind];

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/** Random bytes come from the caller when determinism matters (tests); Web Crypto otherwise. */
export function newId(kind: IdKind, nowMs: number = Date.now(), randomBytes?: Uint8Array): string {
  const bytes = randomBytes ?? globalThis.crypto.getRandomValues(new Uint8Array(16));
  let rand = '';
  for (let i = 0; i < 16; i++) rand += ALPHABET[(bytes[i % bytes.length] ?? 0) % 32]!;
  return `${ID_PREFIXES[kind]}_${encodeTime(nowMs)}${rand}`;
}

/**
 * The part of an id fixed by its kind and instant (`<prefix>_<10 time chars>`): SQL that makes
 * ids for rows it inserts in bulk appends 16 random chars of its own (lowercase hex is a subset
 * of the alphabet).
 */
export function idTimePrefix(kind: IdKind, nowMs: number): string {
  return `${ID_PREFIXES[kind]}_${encodeTime(nowMs)}`;
}

const ID_PATTERN = /^([a-z]{2,4})_[0-9a-hjkmnp-tv-z]{26}$/;

export function isId(kind: IdKind, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = ID_PATTERN.exec(value);
  return m !== null && m[1] === ID_PREFIXES[kind];
}
