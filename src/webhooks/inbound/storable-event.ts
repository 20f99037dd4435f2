// What the inbox keeps of a verified webhook (issue 42 §2): the body with every client secret masked
// (every Stripe payment_intent.* event carries the PaymentIntent's client_secret, and its
// next_action URL carries it again), and the normalized event as history keeps it. The signature
// was checked on the bytes as received; nothing verifies the stored copy again.

import type { NormalizedEvent } from '../../connectors/contract.ts';
import { historyCopy, holdsClientSecret, maskClientSecrets, maskSecretsDeep } from '../../core/secret-mask.ts';

/** The body to store: the bytes as received unless they hold a secret; then JSON re-written with it masked (or the text masked). */
export function storableRawBody(raw: Buffer): Buffer {
  const text = raw.toString('utf8');
  if (!holdsClientSecret(text)) return raw;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return Buffer.from(maskClientSecrets(text), 'utf8');
  }
  return Buffer.from(JSON.stringify(maskSecretsDeep(parsed)), 'utf8');
}

/**
 * The event as stored and later applied: a provider page in it keeps its URL without the query, so
 * an action_required read back from the inbox cannot send a customer anywhere (event-mapping.ts
 * leaves the page to the answer of our own call or lookup).
 */
export function storableEvent(e: NormalizedEvent): NormalizedEvent {
  return historyCopy(e) as NormalizedEvent;
}
