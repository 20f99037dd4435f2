// Provider secrets that must never reach storage or history (issue 42 §2). Stripe's client secret
// lets whoever holds it confirm or read the PaymentIntent from a browser; live Stripe puts it in
// every PaymentIntent object and in the query of its hosted 3-D Secure page. Pure: the webhook
// intake, transition() and the timeline use these; log redaction may reuse CLIENT_SECRET.

export const MASKED = '[masked]';

/**
 * A Stripe-style client secret: <prefix>_<id>_secret_<random> (PaymentIntent pi_, SetupIntent
 * seti_, Source src_) or <prefix>_secret_<random> (newer objects, e.g. cuss_, accs_). Lengths keep
 * ordinary names such as `webhook_secret_missing` out.
 */
export const CLIENT_SECRET = /\b[a-z]{2,8}_(?:[A-Za-z0-9]{6,}_)?secret__?[A-Za-z0-9]{10,}/g;

/** Field names whose value is a client secret whatever it looks like. */
const SECRET_FIELDS: ReadonlySet<string> = new Set(['client_secret', 'payment_intent_client_secret', 'setup_intent_client_secret']);

export function maskClientSecrets(text: string): string {
  return text.replace(CLIENT_SECRET, MASKED);
}

export function holdsClientSecret(text: string): boolean {
  return text.search(CLIENT_SECRET) >= 0 || [...SECRET_FIELDS].some((f) => text.includes(f));
}

/** A JSON value with every client secret masked: the values of fields named for one, and any string holding one. */
export function maskSecretsDeep(value: unknown): unknown {
  if (typeof value === 'string') return maskClientSecrets(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(maskSecretsDeep);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_FIELDS.has(k) && typeof v === 'string' ? MASKED : maskSecretsDeep(v);
  }
  return out;
}

/** The page without its query or fragment (where live Stripe puts the client secret): what history may keep. */
export function pageWithoutQuery(url: string): string {
  if (!URL.canParse(url)) return MASKED;
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

function isRedirect(v: unknown): v is { readonly url: string; readonly data?: unknown } {
  return typeof v === 'object' && v !== null && typeof (v as { url?: unknown }).url === 'string';
}

/**
 * What history keeps of a provider's answer, an input or an event: every client secret masked, and
 * every `redirect` (the page a customer is sent to) reduced to its URL without query, the values of
 * a form POST's fields masked. The attempt itself holds the whole page only while the customer is
 * expected there.
 */
export function historyCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return maskSecretsDeep(value);
  if (Array.isArray(value)) return value.map(historyCopy);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k === 'redirect' && isRedirect(v)) {
      const data = typeof v.data === 'object' && v.data !== null ? { data: Object.fromEntries(Object.keys(v.data).map((f) => [f, MASKED])) } : {};
      out[k] = { ...(maskSecretsDeep(v) as Record<string, unknown>), url: pageWithoutQuery(v.url), ...data };
    } else {
      out[k] = SECRET_FIELDS.has(k) && typeof v === 'string' ? MASKED : historyCopy(v);
    }
  }
  return out;
}
