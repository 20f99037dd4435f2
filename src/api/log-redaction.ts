// Log lines never carry card numbers, API keys or provider secrets, whatever an error message
// happens to contain (a driver error can quote query parameters; a customer's return carries the
// provider's evidence).

import { maskCardNumbers } from '../core/card-number-detector.ts';

/** A named field's value in a query string, a form, JSON or `name: value` text: the name stays, the value goes. */
function fieldValue(names: string): RegExp {
  return new RegExp(`((?:${names})["']?\\s*[=:]\\s*["']?)(?!\\[secret\\])[^\\s"'&,;}\\]]+`, 'gi');
}

const PATTERNS: readonly [RegExp, string][] = [
  // payment_intent_client_secret=…, "client_secret":"…"; 3-D Secure evidence in a customer's return.
  [fieldValue('client_secret|PaRes|redirectResult'), '$1[secret]'],
  [/\b(sy_live|sk_sy|sk_live|sk_test|rk_live|rk_test|whsec)_[A-Za-z0-9_-]+/g, '[secret]'],
  // Stripe's client secrets (pi_…_secret_…, seti_…_secret_…) and any other *_secret_* value.
  [/\b[A-Za-z0-9_]+_secret_[A-Za-z0-9]+/g, '[secret]'],
  // Adyen API keys: long base64-ish strings that start AQE (their secret part may hold punctuation).
  [/\bAQE[^\s"'`,]{4,}/g, '[secret]'],
  [/Bearer\s+\S+/gi, 'Bearer [secret]'],
  [/\bBasic\s+[A-Za-z0-9+/=]{8,}/g, 'Basic [secret]'],
  [/(postgres(?:ql)?|redis|rediss):\/\/([^:@/\s]+):[^@/\s]+@/gi, '$1://$2:***@'],
];

/**
 * Card numbers: what the detector calls a card (with spaces or dashes, or joined to a word), and
 * besides any unbroken run of 12 to 19 digits. The second is stricter on purpose: log text is
 * often cut (`.slice(0, 200)`), and a cut card number fails Luhn yet is still most of a PAN; an
 * unbroken 12+ digit run in a log line is rarely anything worth reading (ids are prefixed, times ISO).
 */
function maskCards(line: string): string {
  return maskCardNumbers(line, '[card]', { includeJoined: true }).replace(/\b\d{12,19}\b/g, '[card]');
}

export function redact(line: string): string {
  let out = line;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return maskCards(out);
}
