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

/**
 * A keyed digest of a card-bearing request (the idempotency record of POST /v1/payment_methods):
 * a plain SHA-256 of a body with a card number could be brute-forced back to the number (a PAN has
 * few unknown digits), an HMAC under a vault key cannot. Its own per-merchant key ("request:"), so a
 * request digest is never a card fingerprint.
 */
export function requestDigest(fingerprintKey: Uint8Array, merchantId: string, text: string): string {
  const key = createHmac('sha256', fingerprintKey).update(`request:${merchantId}`).digest();
  return createHmac('sha256', key).update(text).digest('hex');
}
