// Stripe webhooks: verify `Stripe-Signature` over the exact raw bytes, then normalize the event.
// Several secrets may be active at once (rotation); any match passes. The header is parsed as
// strictly as stripe-node does (split on ',' then '='), so "t=1, v1=…" with a space is refused.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type Stripe from 'stripe';
import type { DeclineTable, DisputeBalanceTransaction, NormalizedEvent, WebhookVerification } from '../contract.ts';
import { declinedOutcome } from '../decline-table.ts';
import { paymentIntentOutcome, paymentIntentIdOf } from './status-map.ts';
import { attemptIdOf, fromStripeAmount } from './transformers.ts';

/** stripe-node's DEFAULT_TOLERANCE. Like stripe-node the check is one-sided: only old timestamps fail. */
export const STRIPE_SIGNATURE_TOLERANCE_SECONDS = 300;

export type SignatureCheck = { readonly ok: true } | { readonly ok: false; readonly status: 400 | 401; readonly reason: string };

interface ParsedHeader {
  readonly timestamp: number;
  readonly v1: readonly string[];
}

export function parseStripeSignatureHeader(header: string): ParsedHeader | null {
  let timestamp: number | null = null;
  const v1: string[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) return null;
    const key = item.slice(0, eq);
    const value = item.slice(eq + 1);
    if (key === 't') {
      if (!/^\d{1,12}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/.test(value)) return null;
      v1.push(value);
    } else if (!/^v\d+$/.test(key)) {
      return null; // " v1" (a space after the comma) lands here, as in stripe-node
    }
  }
  return timestamp === null || v1.length === 0 ? null : { timestamp, v1 };
}

function signature(payload: Buffer, secret: string, timestamp: number): Buffer {
  // Keyed with the whole secret string, whsec_ prefix included, over `${t}.${body}`.
  return createHmac('sha256', secret).update(`${timestamp}.`).update(payload).digest();
}

/** Checks the header against every active secret and the tolerance. */
export function verifyStripeSignature(
  rawBody: Buffer,
  header: string | undefined,
  secrets: readonly string[],
  now: Date,
  toleranceSeconds = STRIPE_SIGNATURE_TOLERANCE_SECONDS,
): SignatureCheck {
  if (header === undefined || header.length === 0) return { ok: false, status: 400, reason: 'missing Stripe-Signature header' };
  const parsed = parseStripeSignatureHeader(header);
  if (parsed === null) return { ok: false, status: 400, reason: 'malformed Stripe-Signature header' };
  const matched = secrets.some((secret) => {
    const expected = signature(rawBody, secret, parsed.timestamp);
    return parsed.v1.some((candidate) => {
      const given = Buffer.from(candidate, 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  });
  if (!matched) return { ok: false, status: 401, reason: 'no signature matches an active secret' };
  const ageSeconds = Math.floor(now.getTime() / 1000) - parsed.timestamp;
  if (toleranceSeconds > 0 && ageSeconds > toleranceSeconds) {
    return { ok: false, status: 401, reason: `signature timestamp is ${ageSeconds}s old (tolerance ${toleranceSeconds}s)` };
  }
  return { ok: true };
}

/** Builds a `Stripe-Signature` header the way Stripe does; for sandboxes and tests. */
export function stripeSignatureHeader(payload: string | Buffer, secret: string, timestampSeconds: number): string {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  return `t=${timestampSeconds},v1=${signature(body, secret, timestampSeconds).toString('hex')}`;
}

function header(headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() !== name) continue;
    return Array.isArray(v) ? v.join(',') : v;
  }
  return undefined;
}

type EventBody = NormalizedEvent extends infer E ? (E extends { kind: infer _K } ? Omit<E, 'providerEventId' | 'connectorType' | 'occurredAt' | 'rawType'> : never) : never;

function money(wire: number, wireCurrency: string): { amount: number; currency: string } {
  return fromStripeAmount(wire, wireCurrency) ?? { amount: wire, currency: wireCurrency.toUpperCase() };
}

function paymentIntentEvent(type: string, pi: Stripe.PaymentIntent, table: DeclineTable): EventBody {
  const refs = { attemptId: attemptIdOf(pi.metadata), providerRef: pi.id };
  switch (type) {
    case 'payment_intent.amount_capturable_updated':
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed':
    case 'payment_intent.processing':
    case 'payment_intent.requires_action':
      return { kind: 'authorization', ...refs, outcome: paymentIntentOutcome(pi, null, table) };
    case 'payment_intent.canceled':
      // A cancel after an authorization is our void; a cancel before any charge is a fence.
      return { kind: pi.latest_charge === null ? 'fence_confirmed' : 'void_succeeded', ...refs };
    default:
      return { kind: 'ignored', ...refs };
  }
}

function chargeEvent(type: string, ch: Stripe.Charge, table: DeclineTable): EventBody {
  const refs = { attemptId: attemptIdOf(ch.metadata), providerRef: paymentIntentIdOf(ch) ?? ch.id };
  switch (type) {
    case 'charge.captured':
      // amount_captured is cumulative; the core compares it with what it has recorded.
      return { kind: 'capture_succeeded', ...refs, ...money(ch.amount_captured, ch.currency), modificationRef: ch.id };
    case 'charge.refunded':
      // Since API version 2022-11-15 a charge does not embed its refunds: the event says the total
      // refunded (amount_refunded); refund.created / refund.updated / refund.failed name each refund.
      return { kind: 'refund_total', ...refs, ...money(ch.amount_refunded, ch.currency) };
    case 'charge.failed': {
      // outcome.reason carries the issuer's decline code (insufficient_funds); failure_code is Stripe's.
      const providerCode = ch.failure_code ?? 'card_declined';
      const code = ch.outcome?.reason ?? providerCode;
      return { kind: 'authorization', ...refs, outcome: declinedOutcome(table, { code, providerCode, providerRef: refs.providerRef }) };
    }
    default:
      return { kind: 'ignored', ...refs };
  }
}

/** Our refund id, which every refund we create carries in its metadata (it names a release round). */
function refundIdOf(metadata: Stripe.Metadata | null | undefined): string | null {
  const id = metadata?.['refund_id'];
  return typeof id === 'string' && id.length > 0 ? id : null;
}

function refundEvent(type: string, re: Stripe.Refund, previousStatus: string | undefined): EventBody {
  const refs = { attemptId: attemptIdOf(re.metadata), providerRef: paymentIntentIdOf(re) };
  const body = { ...refs, ...money(re.amount, re.currency), modificationRef: re.id, ourRef: refundIdOf(re.metadata) };
  const failed = type === 'refund.failed' || re.status === 'failed' || re.status === 'canceled';
  // Stripe marks a refund failed after it succeeded (card closed, bank returned it): a reversal.
  if (failed) return { kind: previousStatus === 'succeeded' ? 'refund_reversed' : 'refund_failed', ...body };
  if (re.status === 'succeeded') return { kind: 'refund_succeeded', ...body };
  return { kind: 'ignored', ...refs };
}

/** The dispute's balance transactions in gateway minor units (Stripe embeds them whole in every dispute event). */
function disputeTransactions(dp: Stripe.Dispute): DisputeBalanceTransaction[] {
  return (dp.balance_transactions ?? []).map((t) => {
    const sign = t.amount < 0 ? -1 : 1;
    return { id: t.id, amount: sign * money(Math.abs(t.amount), t.currency).amount, fee: (t.fee < 0 ? -1 : 1) * money(Math.abs(t.fee), t.currency).amount, currency: money(0, t.currency).currency };
  });
}

/** Every charge.dispute.* event (created, updated, funds_withdrawn, funds_reinstated, closed) says the same thing: the dispute as it now is. */
function disputeEvent(type: string, dp: Stripe.Dispute): EventBody {
  const refs = { attemptId: attemptIdOf(dp.metadata), providerRef: paymentIntentIdOf(dp) };
  const dueBy = dp.evidence_details?.due_by;
  return {
    kind: 'dispute', ...refs, disputeRef: dp.id, ...money(dp.amount, dp.currency), reason: dp.reason, fact: { provider: 'stripe', eventType: type, status: dp.status, balanceTransactions: disputeTransactions(dp) },
    evidenceDueBy: typeof dueBy === 'number' ? new Date(dueBy * 1000).toISOString() : null,
  };
}

/** One Stripe event -> the gateway's events (zero or one today; a list so batches fit the same shape). */
export function normalizeStripeEvent(event: Stripe.Event, table: DeclineTable): NormalizedEvent[] {
  const object: unknown = event.data.object;
  const type = event.type as string;
  const previous = (event.data as { previous_attributes?: { status?: unknown } }).previous_attributes?.status;
  let body: EventBody;
  if (type.startsWith('payment_intent.')) body = paymentIntentEvent(type, object as Stripe.PaymentIntent, table);
  else if (type.startsWith('charge.dispute.')) body = disputeEvent(type, object as Stripe.Dispute);
  else if (type === 'charge.refund.updated' || type.startsWith('refund.')) body = refundEvent(type, object as Stripe.Refund, typeof previous === 'string' ? previous : undefined);
  else if (type.startsWith('charge.')) body = chargeEvent(type, object as Stripe.Charge, table);
  else body = { kind: 'ignored', attemptId: null, providerRef: null };
  return [{ ...body, providerEventId: event.id, connectorType: 'stripe', occurredAt: new Date(event.created * 1000).toISOString(), rawType: type }];
}

function looksLikeEvent(v: unknown): v is Stripe.Event {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  const data = e['data'] as Record<string, unknown> | undefined;
  return typeof e['id'] === 'string' && typeof e['type'] === 'string' && typeof e['created'] === 'number'
    && typeof data === 'object' && data !== null && typeof data['object'] === 'object' && data['object'] !== null;
}

export function verifyStripeWebhook(
  rawBody: Buffer,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  secrets: readonly string[],
  now: Date,
  table: DeclineTable,
): WebhookVerification {
  const check = verifyStripeSignature(rawBody, header(headers, 'stripe-signature'), secrets, now);
  if (!check.ok) return check;
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { ok: false, status: 400, reason: 'body is not JSON' };
  }
  if (!looksLikeEvent(parsed)) return { ok: false, status: 400, reason: 'body is not a Stripe event' };
  return { ok: true, events: normalizeStripeEvent(parsed, table) };
}
