// Stripe-looking object ids: prefix + 24 base62 characters (modulo bias is irrelevant for ids).

import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function stripeId(prefix: string, length = 24): string {
  let id = '';
  for (const byte of randomBytes(length)) id += ALPHABET[byte % ALPHABET.length];
  return `${prefix}_${id}`;
}
