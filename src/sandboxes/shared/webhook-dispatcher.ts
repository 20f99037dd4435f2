// Delivers a sandbox's events to the configured URL the way providers do: asynchronously, signed at
// send time over the exact bytes sent, retried on non-2xx with a short bounded backoff, and — on
// demand — delayed, duplicated or reordered so receivers are tested against real-world delivery.

import { setTimeout as sleep } from 'node:timers/promises';
import type { WebhookSettings } from './control.ts';

export interface WebhookTarget {
  readonly url: string;
  /** Headers (signature included) for this exact body, computed at each send. */
  headersFor(body: string): Readonly<Record<string, string>>;
}

export interface OutgoingEvent {
  readonly id: string;
  readonly type: string;
  /** The serialized event, sent byte for byte. */
  readonly body: string;
}

export interface DeliveryRecord {
  readonly eventId: string;
  readonly type: string;
  readonly attempt: number;
  /** HTTP status, or null when the receiver could not be reached. */
  readonly status: number | null;
  readonly at: number;
}

export interface WebhookDispatcherOptions {
  readonly target?: WebhookTarget;
  readonly settings?: Partial<WebhookSettings>;
  readonly maxAttempts?: number;
  readonly retryBaseMs?: number;
  /** Source of randomness for duplicates; injectable so tests can be exact. */
  readonly random?: () => number;
}

/** Events emitted within this window are delivered in reverse when `reorder` is on. */
const REORDER_WINDOW_MS = 50;
const SEND_TIMEOUT_MS = 5_000;

export class WebhookDispatcher {
  private target: WebhookTarget | undefined;
  private settings: WebhookSettings;
  /** One delivery at a time, in publication order: only `reorder` changes the order receivers see. */
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private reorderBuffer: OutgoingEvent[] = [];
  private reorderTimer: NodeJS.Timeout | undefined;
  private closed = false;
  readonly deliveries: DeliveryRecord[] = [];

  constructor(private readonly options: WebhookDispatcherOptions = {}) {
    this.target = options.target;
    this.settings = { enabled: true, duplicate: 0, reorder: false, delayMs: 0, ...options.settings };
  }

  configure(settings: Partial<WebhookSettings>): void {
    if (settings.duplicate !== undefined && !(settings.duplicate >= 0 && settings.duplicate <= 1)) {
      throw new RangeError(`duplicate must be a probability in [0, 1], got ${settings.duplicate}`);
    }
    if (settings.delayMs !== undefined && !(Number.isInteger(settings.delayMs) && settings.delayMs >= 0)) {
      throw new RangeError(`delayMs must be a non-negative integer, got ${settings.delayMs}`);
    }
    this.settings = { ...this.settings, ...settings };
    if (!this.settings.reorder) this.flushReordered();
  }

  currentSettings(): WebhookSettings {
    return this.settings;
  }

  setTarget(target: WebhookTarget | undefined): void {
    this.target = target;
  }

  publish(event: OutgoingEvent): void {
    if (this.closed || !this.settings.enabled || this.target === undefined) return;
    if (this.settings.reorder) {
      this.reorderBuffer.push(event);
      this.reorderTimer ??= setTimeout(() => this.flushReordered(), Math.max(REORDER_WINDOW_MS, this.settings.delayMs));
      return;
    }
    this.enqueue(event, Date.now() + this.settings.delayMs);
  }

  /** Resolves when everything published so far has been delivered or given up on. */
  async idle(): Promise<void> {
    while (this.pending > 0 || this.reorderTimer !== undefined) {
      if (this.reorderTimer !== undefined) await sleep(10);
      else await this.chain;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reorderTimer);
    this.reorderTimer = undefined;
    this.reorderBuffer = [];
    await this.chain;
  }

  private flushReordered(): void {
    clearTimeout(this.reorderTimer);
    this.reorderTimer = undefined;
    const batch = this.reorderBuffer.reverse();
    this.reorderBuffer = [];
    for (const event of batch) this.enqueue(event, Date.now());
  }

  private enqueue(event: OutgoingEvent, dueAt: number): void {
    this.pending += 1;
    this.chain = this.chain.then(async () => {
      try {
        const wait = dueAt - Date.now();
        if (wait > 0) await sleep(wait);
        const random = this.options.random ?? Math.random;
        const copies = random() < this.settings.duplicate ? 2 : 1;
        for (let copy = 0; copy < copies; copy++) await this.deliver(event);
      } finally {
        this.pending -= 1;
      }
    });
  }

  private async deliver(event: OutgoingEvent): Promise<void> {
    const maxAttempts = this.options.maxAttempts ?? 5;
    const retryBaseMs = this.options.retryBaseMs ?? 50;
    for (let attempt = 1; attempt <= maxAttempts && !this.closed; attempt++) {
      const target = this.target;
      if (target === undefined) return;
      let status: number | null = null;
      try {
        const response = await fetch(target.url, {
          method: 'POST',
          headers: { ...target.headersFor(event.body) },
          body: event.body,
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        });
        status = response.status;
        await response.arrayBuffer();
      } catch {
        status = null;
      }
      this.deliveries.push({ eventId: event.id, type: event.type, attempt, status, at: Date.now() });
      if (status !== null && status >= 200 && status < 300) return;
      if (attempt < maxAttempts) await sleep(retryBaseMs * 2 ** (attempt - 1));
    }
  }
}
