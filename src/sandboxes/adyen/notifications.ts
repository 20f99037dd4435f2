// Standard notifications as Adyen sends them: JSON `notificationItems`, every item signed with the
// endpoint's hex HMAC key (its own implementation, independent of the library the connector uses to
// verify), HTTP basic auth, optionally batched, then handed to the shared dispatcher, which delays,
// duplicates and reorders deliveries on demand.

import { createHmac } from 'node:crypto';
import type { WebhookDispatcher, WebhookTarget } from '../shared/webhook-dispatcher.ts';
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

export class NotificationOutbox {
  private buffer: NotificationItem[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sent = 0;
  private batching: NotificationBatching = { maxItems: 1, windowMs: 0 };

  constructor(
    private readonly dispatcher: WebhookDispatcher,
    private endpoint: AdyenWebhookEndpoint | undefined,
  ) {}

  setEndpoint(endpoint: AdyenWebhookEndpoint | undefined): void {
    this.endpoint = endpoint;
    this.dispatcher.setTarget(endpoint === undefined ? undefined : webhookTarget(endpoint));
  }

  configureBatching(batching: Partial<NotificationBatching>): void {
    const next = { ...this.batching, ...batching };
    if (!Number.isInteger(next.maxItems) || next.maxItems < 1) throw new RangeError(`maxItems must be a positive integer, got ${next.maxItems}`);
    if (!Number.isInteger(next.windowMs) || next.windowMs < 0) throw new RangeError(`windowMs must be a non-negative integer, got ${next.windowMs}`);
    this.batching = next;
    if (next.maxItems === 1) this.flush();
  }

  /** Signs the item with the current key now: a rotation between emit and delivery keeps the old signature, as at Adyen. */
  emit(item: NotificationItem): void {
    if (this.endpoint === undefined) return;
    this.buffer.push(signNotificationItem(item, this.endpoint.hmacKey));
    if (this.buffer.length >= this.batching.maxItems) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.batching.windowMs);
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer.length === 0) return;
    const items = this.buffer;
    this.buffer = [];
    this.sent += 1;
    const first = items[0];
    this.dispatcher.publish({ id: `ntf_${this.sent}_${first?.pspReference ?? ''}`, type: items.map((i) => i.eventCode).join(','), body: notificationBody(items) });
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.buffer = [];
  }
}
