// The encryption contexts of the vault's records, and the SQL rows they are read from. One place,
// so tokenize, reveal, rotate and check bind every ciphertext to the same row.

import type { EncryptionContext } from './envelope.ts';

export type SealedField = 'pan' | 'cvc' | 'cvc_key';

export function cardContext(paymentMethodId: string, merchantId: string, field: SealedField): EncryptionContext {
  return { payment_method: paymentMethodId, merchant: merchantId, field };
}

export function secretContext(name: string): EncryptionContext {
  return { vault_secret: name, field: 'secret' };
}

export const FINGERPRINT_SECRET = 'fingerprint_key';

/** What the number's ciphertext holds: the number and the name on the card, both cardholder data. */
export interface SealedCard {
  readonly number: string;
  readonly holder_name: string | null;
}

export function encodeSealedCard(card: SealedCard): string {
  return JSON.stringify({ number: card.number, holder_name: card.holder_name });
}

export function decodeSealedCard(plaintext: Buffer): SealedCard {
  const v = JSON.parse(plaintext.toString('utf8')) as { number?: unknown; holder_name?: unknown };
  if (typeof v.number !== 'string' || (v.holder_name !== null && typeof v.holder_name !== 'string')) throw new Error('sealed card record has an unexpected shape');
  return { number: v.number, holder_name: v.holder_name };
}

export interface PaymentMethodRow {
  readonly id: string;
  readonly merchant_id: string;
  readonly brand: string;
  readonly last4: string;
  readonly exp_month: number;
  readonly exp_year: number;
  readonly fingerprint: string;
  readonly key_name: string;
  readonly pan_ciphertext: Buffer;
  readonly created_at: Date;
}
