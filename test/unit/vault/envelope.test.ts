// The envelope: the SDK's committing suite, the first key seals, every key opens, and a
// ciphertext whose authenticated context names another record is refused.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AlgorithmSuiteIdentifier } from '@aws-crypto/client-node';
import { createEnvelope, openWithCodeKey, sealWithCodeKey, VaultContextMismatchError, VaultDecryptError } from '../../../src/vault/envelope.ts';
import type { VaultKey } from '../../../src/vault/keys.ts';

const key = (name: string): VaultKey => ({ name, bytes: new Uint8Array(randomBytes(32)) });
const ctx = (id: string, field = 'pan') => ({ payment_method: id, merchant: 'mer_1', field });

describe('envelope', () => {
  it('seals under the first key with the committing suite and opens the same plaintext', async () => {
    const env = createEnvelope([key('new'), key('old')]);
    const sealed = await env.seal('4242424242424242', ctx('pmd_a'));
    expect(sealed.keyName).toBe('new');
    // The message format's header: version 2 (committing), then the suite id.
    expect(sealed.ciphertext.readUInt8(0)).toBe(2);
    expect(sealed.ciphertext.readUInt16BE(1)).toBe(AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY);
    expect(sealed.ciphertext.includes(Buffer.from('4242424242424242'))).toBe(false);
    const opened = await env.open(sealed.ciphertext, ctx('pmd_a'));
    expect(opened).toMatchObject({ keyName: 'new' });
    expect(opened.plaintext.toString()).toBe('4242424242424242');
  });

  it('opens records sealed under an older key of the set, and none sealed under a key it lacks', async () => {
    const old = key('old');
    const sealed = await createEnvelope([old]).seal('x', ctx('pmd_a'));
    const opened = await createEnvelope([key('new'), old]).open(sealed.ciphertext, ctx('pmd_a'));
    expect(opened.keyName).toBe('old');
    await expect(createEnvelope([key('new')]).open(sealed.ciphertext, ctx('pmd_a'))).rejects.toThrow(VaultDecryptError);
    // Same name, other bytes: refused too.
    await expect(createEnvelope([key('old')]).open(sealed.ciphertext, ctx('pmd_a'))).rejects.toThrow(/no key in SWITCHYARD_VAULT_KEYS \(old\) decrypts it/);
  });

  it("refuses another record's ciphertext: the header's context is compared with the row's", async () => {
    const env = createEnvelope([key('k')]);
    const a = await env.seal('4242424242424242', ctx('pmd_a'));
    await expect(env.open(a.ciphertext, ctx('pmd_b'))).rejects.toThrow(VaultContextMismatchError);
    await expect(env.open(a.ciphertext, ctx('pmd_a', 'cvc'))).rejects.toThrow(/field=cvc merchant=mer_1 payment_method=pmd_a: the ciphertext belongs to field=pan merchant=mer_1 payment_method=pmd_a/);
    await expect(env.open(a.ciphertext, { ...ctx('pmd_a'), extra: 'x' })).rejects.toThrow(VaultContextMismatchError);
  });

  it('seals a code under its own key: without that key nothing opens it', async () => {
    const codeKey = new Uint8Array(randomBytes(32));
    const sealed = await sealWithCodeKey(codeKey, '123', ctx('pmd_a', 'cvc'));
    expect((await openWithCodeKey(codeKey, sealed, ctx('pmd_a', 'cvc'))).toString()).toBe('123');
    await expect(openWithCodeKey(new Uint8Array(randomBytes(32)), sealed, ctx('pmd_a', 'cvc'))).rejects.toThrow(VaultDecryptError);
  });
});
