// Wakes the API's waits (waitForPayment) when a payment changes, instead of polling it every
// 25 ms. In this process the store tells us after each COMMIT (watchPaymentCommits); other
// processes (role api next to role worker) hear it over Redis pub/sub. Both are hints: a waiter
// re-reads the payment from Postgres when woken, and still re-reads on a slow fallback interval,
// so a lost message (Redis down, a restart) only makes an answer slower, never wrong.

import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Db } from '../store/db.ts';
import { watchPaymentCommits } from '../store/transition.ts';

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

/** One waiter's view: `next()` resolves when the payment may have changed (or after the fallback interval). */
export interface PaymentWatch {
  next(maxMs: number): Promise<void>;
  close(): void;
}

interface Waiter {
  dirty: boolean;
  wake: (() => void) | null;
}

export class PaymentWaits {
  readonly fallbackMs: number;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly token = randomBytes(6).toString('hex');
  private readonly channel: string;
  private readonly unwatch: () => void;
  private readonly publisher: Redis | null;
  private readonly subscriber: Redis | null;

  constructor(db: Db, opts: PaymentWaitsOptions = {}) {
    this.fallbackMs = opts.fallbackMs ?? 250;
    this.channel = opts.channel ?? 'sy:payment-changed';
    this.publisher = opts.publisher ?? null;
    this.subscriber = opts.subscriber ?? null;
    const log = opts.log ?? (() => undefined);
    this.unwatch = watchPaymentCommits(db, (id) => {
      this.wake(id);
      // Fire and forget: a lost publish costs a remote waiter one fallback interval.
      this.publisher?.publish(this.channel, `${this.token} ${id}`).catch(() => undefined);
    });
    if (this.subscriber !== null) {
      this.subscriber.on('message', (channel: string, message: string) => {
        if (channel !== this.channel) return;
        const space = message.indexOf(' ');
        if (space < 0 || message.slice(0, space) === this.token) return; // our own commit: already woken
        this.wake(message.slice(space + 1));
      });
      this.subscriber.subscribe(this.channel).catch((e: unknown) => log(`payment waits: subscribe failed (waits fall back to polling): ${(e as Error).message}`));
    }
  }

  /** Start watching BEFORE the first read, so a change between that read and the wait is not missed. */
  watch(paymentId: string): PaymentWatch {
    const w: Waiter = { dirty: false, wake: null };
    let set = this.waiters.get(paymentId);
    if (set === undefined) {
      set = new Set();
      this.waiters.set(paymentId, set);
    }
    set.add(w);
    return {
      next: (maxMs) => {
        if (w.dirty) {
          w.dirty = false;
          return Promise.resolve();
        }
        return new Promise<void>((resolve) => {
          const timer = setTimeout(done, Math.max(0, Math.min(maxMs, this.fallbackMs)));
          function done(): void {
            clearTimeout(timer);
            w.wake = null;
            w.dirty = false;
            resolve();
          }
          w.wake = done;
        });
      },
      close: () => {
        w.wake?.();
        const s = this.waiters.get(paymentId);
        s?.delete(w);
        if (s?.size === 0) this.waiters.delete(paymentId);
      },
    };
  }

  private wake(paymentId: string): void {
    const set = this.waiters.get(paymentId);
    if (set === undefined) return;
    for (const w of set) {
      if (w.wake !== null) w.wake();
      else w.dirty = true;
    }
  }

  async close(): Promise<void> {
    this.unwatch();
    for (const set of this.waiters.values()) for (const w of set) w.wake?.();
    this.waiters.clear();
    if (this.subscriber !== null) await this.subscriber.quit().catch(() => this.subscriber?.disconnect());
  }
}
