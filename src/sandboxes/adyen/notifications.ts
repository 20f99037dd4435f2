// Standard notifications as Adyen sends them: JSON `notificationItems`, every item signed with the
// endpoint's hex HMAC key (its own implementation, independent of the library the connector uses to
// verify), HTTP basic auth, optionally batched. Items are stored as events in the sandbox database
// and sent by the shared dispatcher, which delays, duplicates and reorders deliveries on demand.

import { createHmac } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import type { OutgoingEvent, StoredEvent, WebhookDispatcher, WebhookTarget } from '../shared/webhook-dispatcher.ts';
import type { AdyenAmount } from './state.ts';

export interface NotificationItem {
  readonly additionalData?: Record<string, string>;
  readonly amount: AdyenAmount;
  readonly eventCode: string;
  readonly eventDate: string;
  readonly merchantAccountCode: string;
  readonly merchantReference: string;
  readonly originalReference?: string;
  readonly paymentMethod?: string;
  readonly pspReference: string;
  readonly reason: string;
  readonly success: 'true' | 'false';
}

export interface AdyenWebhookEndpoint {
  readonly url: string;
  /** The endpoint's HMAC key, hex. */
  readonly hmacKey: string;
  readonly username: string;
  readonly password: string;
}

export interface NotificationBatching {
  /** Items per POST; 1 sends every item on its own. */
  readonly maxItems: number;
  /** How long the first item of a batch waits for company. */
  readonly windowMs: number;
}

/** `pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success`, no escaping. */
export function notificationSigningString(item: NotificationItem): string {
  return [item.pspReference, item.originalReference ?? '', item.merchantAccountCode, item.merchantReference, item.amount.value, item.amount.currency, item.eventCode, item.success].join(':');
}

export function signNotificationItem(item: NotificationItem, hexKey: string): NotificationItem {
  const hmacSignature = createHmac('sha256', Buffer.from(hexKey, 'hex')).update(notificationSigningString(item), 'utf8').digest('base64');
  return { ...item, additionalData: { ...item.additionalData, hmacSignature } };
}

export function notificationBody(items: readonly NotificationItem[]): string {
  return JSON.stringify({ live: 'false', notificationItems: items.map((NotificationRequestItem) => ({ NotificationRequestItem })) });
}

/** Re-signs every item of a delivered body with another key (tests of key rotation). */
export function resignNotificationBody(rawBody: Buffer, hexKey: string): Buffer {
  const parsed = JSON.parse(rawBody.toString('utf8')) as { notificationItems: { NotificationRequestItem: NotificationItem }[] };
  const items = parsed.notificationItems.map((w) => signNotificationItem(w.NotificationRequestItem, hexKey));
  return Buffer.from(notificationBody(items));
}

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

export function webhookTarget(endpoint: AdyenWebhookEndpoint): WebhookTarget {
  const authorization = basicAuthorization(endpoint.username, endpoint.password);
  return { url: endpoint.url, headersFor: () => ({ 'content-type': 'application/json', authorization }) };
}

/** Adyen's eventDate: ISO 8601 with an explicit offset. */
export function eventDate(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

/** Validates batching settings (stored on the account, so every process batches alike). */
export function checkBatching(batching: NotificationBatching): NotificationBatching {
  if (!Number.isInteger(batching.maxItems) || batching.maxItems < 1) throw new RangeError(`maxItems must be a positive integer, got ${batching.maxItems}`);
  if (!Number.isInteger(batching.windowMs) || batching.windowMs < 0) throw new RangeError(`windowMs must be a non-negative integer, got ${batching.windowMs}`);
  return batching;
}

/** This process's view of the notification endpoint: signs items as they are emitted, renders stored ones as they are sent. */
export class NotificationOutbox {
  constructor(
    private readonly dispatcher: WebhookDispatcher,
    private endpoint: AdyenWebhookEndpoint | undefined,
  ) {}

  setEndpoint(endpoint: AdyenWebhookEndpoint | undefined): void {
    this.endpoint = endpoint;
    this.dispatcher.setTarget(endpoint === undefined ? undefined : webhookTarget(endpoint));
  }

  /** Signs the item with the current key now: a rotation between emit and delivery keeps the old signature, as at Adyen. */
  toEvent(item: NotificationItem): { eventId: string; type: string; items: NotificationItem[] } {
    const signed = this.endpoint === undefined ? item : signNotificationItem(item, this.endpoint.hmacKey);
    return { eventId: `ntf_${randomBytes(6).toString('hex')}_${item.pspReference}`, type: item.eventCode, items: [signed] };
  }

  /** One POST for a batch of stored items; an item emitted where no endpoint was known is signed by the sender. */
  render(events: readonly StoredEvent[]): OutgoingEvent {
    const items = events.flatMap((e) => (e.items ?? []) as NotificationItem[]);
    const key = this.endpoint?.hmacKey;
    const signed = items.map((i) => (i.additionalData?.['hmacSignature'] !== undefined || key === undefined ? i : signNotificationItem(i, key)));
    return { id: events[0]?.eventId ?? 'ntf_empty', type: items.map((i) => i.eventCode).join(','), body: notificationBody(signed) };
  }
}
