// Adyen standard notifications: HTTP basic auth, then the HMAC of EVERY item (the library's
// hmacValidator, any active key: two during a rotation). One bad item rejects the whole batch, so
// nothing of a forged batch is applied. Then each item is normalized. Nothing signed says when a
// notification was made: Adyen redelivers for up to 30 days, so there is no age check; the
// inbox's unique provider event id absorbs duplicates.

import { timingSafeEqual } from 'node:crypto';
import type { CallOutcome } from '../../core/outcome.ts';
import type { AnnouncedReport, DeclineTable, NormalizedEvent, WebhookVerification } from '../contract.ts';
import { declinedOutcome } from '../decline-table.ts';
import { fromAdyenValue } from './currencies.ts';
import { hmacValidator } from './library.ts';
import { parseReportFileName } from './report-files.ts';
import { ADYEN_DISPUTE_LIFECYCLE, isAdyenDisputeCode } from './dispute-lifecycle.ts';
import type { AdyenTypes } from './library.ts';
import { declineCodeForRefusal, refusalCodeForText } from './refusal-reasons.ts';
import { alreadyDoneOp } from './modification-reasons.ts';

export interface AdyenWebhookSecrets {
  readonly hmacKeys: readonly string[];
  readonly username: string;
  readonly password: string;
}

interface Item {
  readonly additionalData?: Readonly<Record<string, string>>;
  readonly amount?: { readonly value?: number; readonly currency?: string };
  readonly eventCode: string;
  readonly eventDate?: string;
  readonly merchantReference?: string;
  readonly originalReference?: string;
  readonly pspReference: string;
  readonly reason?: string;
  readonly success: string;
}

function header(headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  return undefined;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export function basicAuthMatches(authorization: string | undefined, username: string, password: string): boolean {
  const m = /^Basic ([A-Za-z0-9+/=]+)$/.exec(authorization ?? '');
  if (m === null) return false;
  const decoded = Buffer.from(m[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // Both halves are compared even when the first differs, so timing does not say which one was wrong.
  const userOk = sameSecret(colon < 0 ? decoded : decoded.slice(0, colon), username);
  const passOk = sameSecret(colon < 0 ? '' : decoded.slice(colon + 1), password);
  return userOk && passOk;
}

function isItem(v: unknown): v is Item {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o['eventCode'] === 'string' && typeof o['pspReference'] === 'string' && typeof o['success'] === 'string';
}

function itemsOf(body: unknown): Item[] | null {
  if (typeof body !== 'object' || body === null) return null;
  const list = (body as { notificationItems?: unknown }).notificationItems;
  if (!Array.isArray(list) || list.length === 0) return null;
  const items: Item[] = [];
  for (const wrapper of list) {
    const item = (wrapper as { NotificationRequestItem?: unknown } | null)?.NotificationRequestItem;
    if (!isItem(item)) return null;
    items.push(item);
  }
  return items;
}

const validator = new hmacValidator();

export function itemSignedByAnyKey(item: Item, keys: readonly string[]): boolean {
  if (typeof item.additionalData?.['hmacSignature'] !== 'string') return false;
  return keys.some((key) => validator.validateHMAC(item as unknown as AdyenTypes.notification.NotificationRequestItem, key));
}

type EventBody = NormalizedEvent extends infer E ? (E extends { kind: infer _K } ? Omit<E, 'providerEventId' | 'connectorType' | 'occurredAt' | 'rawType' | 'attemptId' | 'providerRef'> : never) : never;

/** The item's amount in gateway (ISO) minor units; null when Adyen's value has no whole ISO value. */
function money(item: Item): { amount: number; currency: string } | null {
  const currency = item.amount?.currency ?? '';
  const value = item.amount?.value ?? 0;
  if (value === 0) return { amount: 0, currency };
  const back = fromAdyenValue(value, currency);
  return back.ok ? { amount: back.value, currency } : null;
}

function authorizationOutcome(item: Item, table: DeclineTable): CallOutcome {
  const m = money(item);
  if (item.success === 'true') {
    if (m === null) {
      return { kind: 'unknown', reason: 'integrity_mismatch', providerRef: item.pspReference, alert: true, detail: `AUTHORISATION value ${item.amount?.value ?? '?'} ${item.amount?.currency ?? '?'} is no whole number of ISO minor units` };
    }
    return { kind: 'succeeded', providerRef: item.pspReference, amount: m.amount, currency: m.currency, providerStatus: 'AUTHORISATION' };
  }
  // Notifications carry the refusal text only; its documented code drives the decline table.
  const providerCode = refusalCodeForText(item.reason ?? '') ?? 'Refused';
  const code = providerCode === 'Refused' ? 'generic_decline' : declineCodeForRefusal(providerCode);
  return declinedOutcome(table, { code, providerCode, providerRef: item.pspReference, providerStatus: 'AUTHORISATION', ...(item.reason !== undefined && { message: item.reason }) });
}

/** Event codes whose amount the gateway applies. */
const MONEY_EVENTS = new Set(['CAPTURE', 'CAPTURE_FAILED', 'CANCEL_OR_REFUND', 'REFUND', 'REFUND_FAILED', 'REFUNDED_REVERSED', ...Object.keys(ADYEN_DISPUTE_LIFECYCLE)]);

/**
 * One notification item in the gateway's terms. Codes this connector does not act on are `ignored`,
 * and so is a money event whose value converts to no whole ISO amount: applying a rounded amount
 * would be wrong, and the settlement report (which refuses the same row) makes it a discrepancy.
 */
export function normalizeItem(item: Item, table: DeclineTable): EventBody {
  const ok = item.success === 'true';
  const amount = money(item);
  if (amount === null && MONEY_EVENTS.has(item.eventCode)) return { kind: 'ignored' };
  const m = amount ?? { amount: 0, currency: '' }; // null only for items whose amount is not read
  const modificationRef = item.pspReference;
  // A modification's notification echoes the reference we sent on it (a release round's names the round).
  const ourRef = item.merchantReference !== undefined && item.merchantReference !== '' ? item.merchantReference : null;
  // Every event of one dispute carries the dispute's pspReference; its lifecycle decides what it means.
  if (isAdyenDisputeCode(item.eventCode)) {
    if (!ok) return { kind: 'ignored' };
    const disputeStatus = item.additionalData?.['disputeStatus'] ?? null;
    // defensePeriodEndsAt: when the merchant's time to defend ends, where Adyen sends it.
    const endsAt = Date.parse(item.additionalData?.['defensePeriodEndsAt'] ?? '');
    return {
      kind: 'dispute', disputeRef: item.pspReference, ...m, reason: item.reason ?? null, fact: { provider: 'adyen', eventCode: item.eventCode, disputeStatus },
      evidenceDueBy: Number.isNaN(endsAt) ? null : new Date(endsAt).toISOString(),
    };
  }
  // "Already captured / cancelled": unknown{already_done} for that operation, never its failure.
  const already = alreadyDoneOp(item.eventCode, item.success, item.reason);
  if (already !== null) return { kind: 'already_done', op: already, ...m, modificationRef, detail: `${item.eventCode} success=false: ${item.reason ?? ''}` };
  switch (item.eventCode) {
    case 'AUTHORISATION': return { kind: 'authorization', outcome: authorizationOutcome(item, table) };
    case 'CAPTURE': return { kind: ok ? 'capture_succeeded' : 'capture_failed', ...m, modificationRef };
    // CAPTURE_FAILED, REFUND_FAILED and REFUNDED_REVERSED come after a success: reversal edges.
    case 'CAPTURE_FAILED': return { kind: 'capture_reversed', ...m, modificationRef };
    case 'CANCELLATION': return { kind: ok ? 'void_succeeded' : 'void_failed', modificationRef, ourRef };
    case 'TECHNICAL_CANCEL': return { kind: ok ? 'fence_confirmed' : 'fence_refused' };
    case 'CANCEL_OR_REFUND':
      if (item.additionalData?.['modification.action'] === 'refund') return { kind: ok ? 'refund_succeeded' : 'refund_failed', ...m, modificationRef, ourRef };
      return { kind: ok ? 'void_succeeded' : 'void_failed', modificationRef, ourRef };
    case 'REFUND': return { kind: ok ? 'refund_succeeded' : 'refund_failed', ...m, modificationRef, ourRef };
    case 'REFUND_FAILED':
    case 'REFUNDED_REVERSED':
      return { kind: 'refund_reversed', ...m, modificationRef, ourRef };
    default: return { kind: 'ignored' };
  }
}

function occurredAt(item: Item, now: Date): string {
  const t = item.eventDate === undefined ? Number.NaN : Date.parse(item.eventDate);
  return Number.isNaN(t) ? now.toISOString() : new Date(t).toISOString();
}

/**
 * Which of our objects an item names: AUTHORISATION names the payment by its pspReference;
 * modifications and every dispute event (whose pspReference is the dispute's) by originalReference.
 */
function refsOf(item: Item): { attemptId: string | null; providerRef: string | null } {
  const attemptId = item.merchantReference !== undefined && item.merchantReference !== '' ? item.merchantReference : null;
  const isPayment = item.eventCode === 'AUTHORISATION';
  const original = item.originalReference !== undefined && item.originalReference !== '' ? item.originalReference : null;
  return { attemptId, providerRef: isPayment ? item.pspReference : original };
}

/** `{report}` for a file name of a known report pattern; nothing otherwise (the event stays ignored). */
export function announcedReport(fileName: string): { report: AnnouncedReport } | Record<string, never> {
  const file = parseReportFileName(fileName);
  if (file === null) return {};
  return { report: { fileName, kind: file.kind, sequence: file.kind === 'settlement_batch' ? file.batch : null, day: file.kind === 'accounting_daily' ? file.day : null } };
}

export function verifyAdyenWebhook(
  rawBody: Buffer,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  secrets: AdyenWebhookSecrets,
  now: Date,
  table: DeclineTable,
): WebhookVerification {
  if (!basicAuthMatches(header(headers, 'authorization'), secrets.username, secrets.password)) {
    return { ok: false, status: 401, reason: 'basic auth missing or wrong' };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { ok: false, status: 400, reason: 'body is not JSON' };
  }
  const items = itemsOf(parsed);
  if (items === null) return { ok: false, status: 400, reason: 'body is not an Adyen notification (notificationItems[].NotificationRequestItem)' };
  const unsigned = items.findIndex((item) => !itemSignedByAnyKey(item, secrets.hmacKeys));
  if (unsigned >= 0) return { ok: false, status: 401, reason: `item ${unsigned} has no valid HMAC signature under any active key; the batch is rejected` };
  const events = items.map((item): NormalizedEvent => ({
    ...normalizeItem(item, table),
    ...refsOf(item),
    // The file name is signed (pspReference); the URL in `reason` is not, and is never read.
    ...(item.eventCode === 'REPORT_AVAILABLE' && item.success === 'true' && announcedReport(item.pspReference)),
    providerEventId: `${item.eventCode}:${item.pspReference}:${item.success}`,
    connectorType: 'adyen',
    occurredAt: occurredAt(item, now),
    rawType: item.eventCode,
  }));
  return { ok: true, events };
}

/** Adyen's acknowledgement body (any 2xx is accepted; this is the historical one). */
export const ADYEN_WEBHOOK_ACK = '[accepted]';
