// API defaults, apart from app.ts so the CLI can read them without loading the gateway.

/** How long POST /v1/payments (and capture, void, refund) wait for the provider before answering 202. */
export const DEFAULT_WAIT_MS = 10_000;
/** How long an idempotency key and its stored answer are kept. */
export const DEFAULT_IDEMPOTENCY_RETENTION_MS = 7 * 24 * 3600_000;
/** Merchant API requests one process holds at once (waiting for a connection or an answer); the next is shed with 503. */
export const DEFAULT_MAX_IN_FLIGHT = 64;
/** Retry-After of a shed request, in seconds. */
export const OVERLOAD_RETRY_AFTER_S = 1;
/**
 * SWITCHYARD_TOKENS_PER_HOUR: payment methods one merchant may store per clock hour (POST /v1/tokens
 * and /v1/payment_methods together). Far above a shop's checkouts; low enough that a publishable
 * key copied from a page cannot fill the vault.
 */
export const DEFAULT_TOKENS_PER_HOUR = 10_000;
