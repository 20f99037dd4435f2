// Which decline codes each connector type can produce: what a decline-table row may be keyed by.

import { ADYEN_DECLINE_CODES, ADYEN_UNLISTED_REFUSAL } from './adyen/decline-codes.ts';
import { ADYEN_REFUSAL_REASONS } from './adyen/refusal-reasons.ts';
import { STRIPE_DECLINE_CODES } from './stripe/decline-codes.ts';

export interface DeclineVocabulary {
  produces(code: string): boolean;
  /** A hint when the code is the provider's own name for one of ours (Adyen's "5" is blocked_card), or null. */
  meant(code: string): string | null;
}

const VOCABULARIES: Readonly<Record<string, DeclineVocabulary>> = Object.freeze({
  stripe: { produces: (c) => STRIPE_DECLINE_CODES.has(c), meant: () => null },
  adyen: {
    produces: (c) => ADYEN_DECLINE_CODES.has(c) || ADYEN_UNLISTED_REFUSAL.test(c),
    meant: (c) => (Object.hasOwn(ADYEN_REFUSAL_REASONS, c) ? ADYEN_REFUSAL_REASONS[c]!.code : null),
  },
});

/** The decline codes a connector type produces, or null for a type there is no connector for. */
export function declineVocabulary(type: string): DeclineVocabulary | null {
  return Object.hasOwn(VOCABULARIES, type) ? VOCABULARIES[type]! : null;
}
