// Wakes the API's waits (waitForPayment) when a payment changes, instead of polling it every
// 25 ms. In this process the store tells us after each COMMIT (watchPaymentCommits); other
// processes (role api next to role worker) hear it over Redis pub/sub. Both are hints: a waiter
// re-reads the payment from Postgres when woken, and still re-reads on a slow fallback interval,
// so a lost message (Redis down, a restart) only makes an answer slower, never wrong.

import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Payment } from '../core/payment.ts';
import type { Db } from '../store/db.ts';
import { watchPaymentCommits } from '../store/transition.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

export interface PaymentWaitsOptions {
  /** Publishes this process's commits and hears other processes' (null: this process only). */
  readonly publisher?: Redis | null;
  /** A dedicated connection for SUBSCRIBE (null: do not listen to other processes). */
  readonly subscriber?: Redis | null;
  readonly channel?: string;
  /** A waiter re-reads at least this often even without a wake. */
  readonly fallbackMs?: number;
  readonly log?: (line: string) => void;
}

/**
 * One waiter's view: `next()` resolves when the payment may have changed (or after the fallback
 * interval) — with the version a commit in this process wrote, or null when the waiter must read
 * it (a wake from another process, the fallback).
 */
export interface PaymentWatch {
  next(maxMs: number): Promise<Payment | null>;
  close(): void;
}

interface Waiter {
  dirty: boolean;
  /** The newest version a local commit handed us since the last next(). */
  seen: Payment | null;
  wake: ((p: Payment | null) => void) | null;
}

export class PaymentWaits {
  readonly fallbackMs: number;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly token = randomBytes(6).toString('hex');
  private readonly channel: string;
  private readonly unwatch: () => void;
  private readonly publisher: Redis | null;
  private readonly subscriber: Redis | null;
  private readonly subscribed: Promise<void>;

  constructor(db: Db, opts: PaymentWaitsOptions = {}) {
    this.fallbackMs = opts.fallbackMs ?? 250;
    this.channel = opts.channel ?? 'sy:payment-changed';
    this.publisher = opts.publisher ?? null;
    this.subscriber = opts.subscriber ?? null;
    const log = opts.log ?? (() => undefined);
    this.unwatch = watchPaymentCommits(db, (id, payment) => {
      this.wake(id, payment);
      // Fire and forget: a lost publish costs a remote waiter one fallback interval.
      this.publisher?.publish(this.channel, `${this.token} ${id}`).catch(() => undefined);
    });
    if (this.subscriber !== null) {
      this.subscriber.on('message', (channel: string, message: string) => {
        if (channel !== this.channel) return;
        const space = message.indexOf(' ');
        if (space < 0 || message.slice(0, space) === this.token) return; // our own commit: already woken
        this.wake(message.slice(space + 1), null);
      });
      this.subscribed = this.subscriber.subscribe(this.channel).then(
        () => undefined,
        (e: unknown) => log(`payment waits: subscribe failed (waits fall back to re-reading): ${safeErrorText(e)}`),
      );
    } else {
      this.subscribed = Promise.resolve();
    }
  }

  /** Settles once the subscription to other processes' commits is in place (or failed). */
  ready(): Promise<void> {
    return this.subscribed;
  }

  /** Start watching BEFORE the first read, so a change between that read and the wait is not missed. */
  watch(paymentId: string): PaymentWatch {
    const w: Waiter = { dirty: false, seen: null, wake: null };
    let set = this.waiters.get(paymentId);
    if (set === undefined) {
      set = new Set();
      this.waiters.set(paymentId, set);
    }
    set.add(w);
    return {
      next: (maxMs) => {
        if (w.dirty) {
          const seen = w.seen;
          w.dirty = false;
          w.seen = null;
          return Promise.resolve(seen);
        }
        return new Promise<Payment | null>((resolve) => {
          const timer = setTimeout(() => done(null), Math.max(0, Math.min(maxMs, this.fallbackMs)));
          function done(p: Payment | null): void {
            clearTimeout(timer);
            w.wake = null;
            w.dirty = false;
            w.seen = null;
            resolve(p);
          }
          w.wake = done;
        });
      },
      close: () => {
        w.wake?.(null);
        const s = this.waiters.get(paymentId);
        s?.delete(w);
        if (s?.size === 0) this.waiters.delete(paymentId);
      },
    };
  }

  private wake(paymentId: string, payment: Payment | null): void {
    const set = this.waiters.get(paymentId);
    if (set === undefined) return;
    for (const w of set) {
      if (w.wake !== null) {
        w.wake(payment);
      } else {
        // Keep the newest version handed over; a wake without one (remote) forces a read.
        if (!w.dirty) w.seen = payment;
        else if (payment === null) w.seen = null;
        else if (w.seen !== null && payment.version > w.seen.version) w.seen = payment;
        w.dirty = true;
      }
    }
  }

  async close(): Promise<void> {
    this.unwatch();
    for (const set of this.waiters.values()) for (const w of set) w.wake?.(null);
    this.waiters.clear();
    if (this.subscriber !== null) await this.subscriber.quit().catch(() => this.subscriber?.disconnect());
  }
}
