// The vault's key set: SWITCHYARD_VAULT_KEYS=<name>:<base64 of 32 bytes>,… The first key encrypts;
// every key decrypts. Parsing is pure; every refusal names the variable and the entry.

export const VAULT_KEYS_VARIABLE = 'SWITCHYARD_VAULT_KEYS';

/** A key set that cannot be used: malformed, missing the key that sealed stored records, or a development key next to a live provider. */
export class VaultKeyError extends Error {
  override readonly name = 'VaultKeyError';
}

export interface VaultKey {
  readonly name: string;
  readonly bytes: Uint8Array;
}

/** Where the key set came from: a development key file is refused next to a live provider. */
export type VaultKeySource = { readonly kind: 'environment' } | { readonly kind: 'development_file'; readonly path: string };

export interface VaultKeySet {
  readonly keys: readonly [VaultKey, ...VaultKey[]];
  readonly source: VaultKeySource;
}

export type ParsedVaultKeys = { readonly ok: true; readonly keys: readonly [VaultKey, ...VaultKey[]] } | { readonly ok: false; readonly problem: string };

const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export function parseVaultKeys(value: string, variable: string = VAULT_KEYS_VARIABLE): ParsedVaultKeys {
  const entries = value.split(',').map((e) => e.trim());
  const keys: VaultKey[] = [];
  for (const [i, entry] of entries.entries()) {
    const where = `${variable} entry ${i + 1}`;
    const colon = entry.indexOf(':');
    if (colon === -1) return { ok: false, problem: `${where} is not <name>:<base64 of 32 bytes>` };
    const name = entry.slice(0, colon);
    const encoded = entry.slice(colon + 1);
    if (!KEY_NAME.test(name)) return { ok: false, problem: `${where}: the name "${name}" must be 1 to 64 letters, digits, '.', '_' or '-'` };
    // A name that starts another name would let one key's filter pick up the other's records.
    const clash = keys.find((k) => k.name === name || k.name.startsWith(name) || name.startsWith(k.name));
    if (clash !== undefined) return { ok: false, problem: `${where}: the name "${name}" ${clash.name === name ? 'is given twice' : `and "${clash.name}" start alike; names must not be prefixes of each other`}` };
    const bytes = BASE64.test(encoded) ? Buffer.from(encoded, 'base64') : null;
    // Re-encoding catches characters Buffer.from silently skips.
    if (bytes === null || bytes.toString('base64') !== encoded || bytes.length !== 32) {
      return { ok: false, problem: `${where} ("${name}"): the key must be the base64 of exactly 32 random bytes (openssl rand -base64 32)` };
    }
    // A copy of its own: a Buffer may be a view into a shared pool, which the SDK's keyring misreads.
    keys.push({ name, bytes: new Uint8Array(bytes) });
  }
  const [first, ...rest] = keys;
  if (first === undefined) return { ok: false, problem: `${variable} holds no key` };
  return { ok: true, keys: [first, ...rest] };
}
