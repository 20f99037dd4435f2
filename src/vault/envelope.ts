// Envelope encryption through the AWS Encryption SDK: every record gets its own data key, wrapped
// by a raw AES keyring (the first vault key on encrypt; a multi-keyring of all of them on decrypt),
// suite ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY. The SDK authenticates the encryption
// context but does not compare it with anything: open() compares it with the row being read, so a
// ciphertext copied into another row is refused.

import {
  AlgorithmSuiteIdentifier, buildClient, CommitmentPolicy, MultiKeyringNode, RawAesKeyringNode, RawAesWrappingSuiteIdentifier,
} from '@aws-crypto/client-node';
import type { KeyringNode } from '@aws-crypto/client-node';
import type { VaultKey } from './keys.ts';

export type EncryptionContext = Readonly<Record<string, string>>;

const SUITE = AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY;
const VAULT_NAMESPACE = 'switchyard-vault';
const CODE_NAMESPACE = 'switchyard-vault-code';

// One wrapped data key per record: a message carrying more was not written by the vault.
const { encrypt, decrypt } = buildClient({ commitmentPolicy: CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT, maxEncryptedDataKeys: 1 });

/** The record does not decrypt under any configured key (wrong, missing or rotated-away key; damaged bytes). */
export class VaultDecryptError extends Error {
  override readonly name = 'VaultDecryptError';
}

/** The record decrypts, but its authenticated context names another record: it was copied or swapped. */
export class VaultContextMismatchError extends Error {
  override readonly name = 'VaultContextMismatchError';
}

export interface Sealed {
  readonly ciphertext: Buffer;
  /** The vault key that wraps the record's data key. */
  readonly keyName: string;
}

export interface Opened {
  readonly plaintext: Buffer;
  readonly keyName: string;
}

export interface Envelope {
  readonly encryptingKeyName: string;
  readonly keyNames: readonly string[];
  seal(plaintext: Uint8Array | string, context: EncryptionContext): Promise<Sealed>;
  open(ciphertext: Uint8Array, expected: EncryptionContext): Promise<Opened>;
}

function aesKeyring(namespace: string, name: string, bytes: Uint8Array): RawAesKeyringNode {
  return new RawAesKeyringNode({
    keyNamespace: namespace, keyName: name,
    // A copy of its own: the keyring misreads a Buffer that is a view into Node's shared pool.
    unencryptedMasterKey: new Uint8Array(bytes),
    wrappingSuite: RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
  });
}

export function createEnvelope(keys: readonly [VaultKey, ...VaultKey[]]): Envelope {
  const [first] = keys;
  const encrypting = aesKeyring(VAULT_NAMESPACE, first.name, first.bytes);
  const decrypting = new MultiKeyringNode({ children: keys.map((k) => aesKeyring(VAULT_NAMESPACE, k.name, k.bytes)) });
  const names = keys.map((k) => k.name);
  return {
    encryptingKeyName: first.name,
    keyNames: names,
    async seal(plaintext, context) {
      return { ciphertext: await sealWith(encrypting, plaintext, context), keyName: first.name };
    },
    async open(ciphertext, expected) {
      const { plaintext, providerInfo } = await openWith(decrypting, ciphertext, expected, () => `no key in SWITCHYARD_VAULT_KEYS (${names.join(', ')}) decrypts it`);
      // Names are never prefixes of one another (keys.ts), so the prefix names the key.
      const keyName = names.find((n) => providerInfo.startsWith(n)) ?? '?';
      return { plaintext, keyName };
    },
  };
}

/** For the card code: sealed under a short-lived key of its own, so deleting that key shreds it. */
export function sealWithCodeKey(codeKey: Uint8Array, plaintext: string, context: EncryptionContext): Promise<Buffer> {
  return sealWith(aesKeyring(CODE_NAMESPACE, 'code', codeKey), plaintext, context);
}

export async function openWithCodeKey(codeKey: Uint8Array, ciphertext: Uint8Array, expected: EncryptionContext): Promise<Buffer> {
  return (await openWith(aesKeyring(CODE_NAMESPACE, 'code', codeKey), ciphertext, expected, () => 'its code key does not decrypt it')).plaintext;
}

async function sealWith(keyring: KeyringNode, plaintext: Uint8Array | string, context: EncryptionContext): Promise<Buffer> {
  const { result } = await encrypt(keyring, plaintext, { encryptionContext: { ...context }, suiteId: SUITE });
  return result;
}

async function openWith(keyring: KeyringNode, ciphertext: Uint8Array, expected: EncryptionContext, cannot: () => string): Promise<{ plaintext: Buffer; providerInfo: string }> {
  let out;
  try {
    out = await decrypt(keyring, ciphertext);
  } catch (err) {
    throw new VaultDecryptError(`${describe(expected)}: ${cannot()}`, { cause: err });
  }
  const found = out.messageHeader.encryptionContext;
  if (!sameContext(found, expected)) {
    out.plaintext.fill(0);
    throw new VaultContextMismatchError(`${describe(expected)}: the ciphertext belongs to ${describe(found)}`);
  }
  return { plaintext: out.plaintext, providerInfo: out.messageHeader.encryptedDataKeys[0]?.providerInfo ?? '' };
}

export function sameContext(a: EncryptionContext, b: EncryptionContext): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

/** Ids and field names only: a context never carries card data. */
function describe(context: EncryptionContext): string {
  return Object.keys(context).sort().map((k) => `${k}=${context[k]}`).join(' ');
}
