// A card's fingerprint: HMAC-SHA256 of the number under a per-merchant key derived from the vault's
// fingerprint key. The same card gives the same fingerprint for one merchant and an unrelated one
// for another, and without the vault's key nobody can test a guessed number against it.

import { createHmac } from 'node:crypto';

export function merchantFingerprintKey(fingerprintKey: Uint8Array, merchantId: string): Buffer {
  return createHmac('sha256', fingerprintKey).update(`merchant:${merchantId}`).digest();
}

export function cardFingerprint(fingerprintKey: Uint8Array, merchantId: string, number: string): string {
  return createHmac('sha256', merchantFingerprintKey(fingerprintKey, merchantId)).update(number).digest('base64url');
}
