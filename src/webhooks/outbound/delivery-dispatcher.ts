// The delivery loop of one worker process: `deliveryConcurrency` slots; whenever some are free it
// takes that many due deliveries from PostgreSQL (delivery-take.ts: fleet-wide per-endpoint and
// per-merchant limits, fair by merchant then endpoint) and sends each. A delivery that cannot be
// taken — its endpoint is at its limit — waits as the pending outbox row it already is: nothing
// is written for it and it holds no slot here.
//
// It takes again when a delivery finishes (its slot is free), when this process commits new
// deliveries (poke), and every `deliveryPollMs` (rows committed by other processes, retries
// coming due) — at most once per `deliveryTakeIntervalMs`. While a POST runs, its claim and lease are renewed every third of the lease;
// renewal stops when the attempt ends, so neither outlives it by more than one lease.
// Deliveries do not go through BullMQ (the relay does not publish event_delivery rows).

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { markOutboxDead } from '../../jobs/outbox-claims.ts';
import type { WebhookServices } from '../webhook-services.ts';
import { deliverTaken } from './delivery-worker.ts';
import type { DeliveryResult } from './delivery-worker.ts';
import { giveBack, renewLeases, takeDueDeliveries } from './delivery-take.ts';
import type { TakenDelivery } from './delivery-take.ts';
import { safeErrorText } from '../../observability/safe-error-text.ts';

export interface DispatcherOptions {
  /** Called with every attempt's result (metrics, tests). */
  readonly onDone?: (outboxId: number, result: DeliveryResult | { kind: 'error'; reason: string }) => void;
}

export class DeliveryDispatcher {
  /** Names this process in claims and leases (`<host>:<pid>:<random>`), never a secret. */
  readonly holder = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly running = new Map<number, TakenDelivery>();
  private taking: Promise<void> | null = null;
  private again = false;
  private pollTimer: NodeJS.Timeout | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private delayed: NodeJS.Timeout | null = null;
  private lastTake = 0;
  private stopped = true;
  private readonly finished = new Set<Promise<void>>();

  constructor(
    private readonly s: WebhookServices,
    private readonly opts: DispatcherOptions = {},
  ) {}

  start(): void {
    this.stopped = false;
    const { deliveryPollMs, deliveryLeaseMs } = this.s.settings;
    this.pollTimer = setInterval(() => this.poke(), deliveryPollMs);
    this.pollTimer.unref();
    this.renewTimer = setInterval(() => void this.renew(), Math.max(50, Math.floor(deliveryLeaseMs / 3)));
    this.renewTimer.unref();
    this.poke();
  }

  /**
   * Take soon if slots are free: coalesced (a take running now is followed by one more) and at most
   * one take per `deliveryTakeIntervalMs`, so deliveries finishing one by one do not each run a take
   * (every take runs under the fleet-wide lock; under load, a take per finished delivery queued
   * behind that lock and delayed every endpoint).
   */
  poke(): void {
    if (this.stopped) return;
    if (this.taking !== null) {
      this.again = true;
      return;
    }
    const wait = this.lastTake + this.s.settings.deliveryTakeIntervalMs - Date.now();
    if (wait > 0) {
      this.delayed ??= setTimeout(() => {
        this.delayed = null;
        this.poke();
      }, wait);
      return;
    }
    this.lastTake = Date.now();
    this.taking = this.take().finally(() => {
      this.taking = null;
      if (this.again) {
        this.again = false;
        this.poke();
      }
    });
  }

  private async take(): Promise<void> {
    const { deliveryConcurrency, perEndpointInFlight, perMerchantInFlight, deliveryLeaseMs } = this.s.settings;
    const slots = deliveryConcurrency - this.running.size;
    if (slots <= 0) return;
    let taken: TakenDelivery[];
    try {
      taken = await takeDueDeliveries(this.s.db, this.holder, this.s.now(), { slots, perEndpoint: perEndpointInFlight, perMerchant: perMerchantInFlight, leaseMs: deliveryLeaseMs });
    } catch (err) {
      this.s.log(`webhooks: taking deliveries failed (next poll retries): ${safeErrorText(err)}`);
      return;
    }
    for (const t of taken) this.run(t);
    // A full take may have left more due work behind: take again once this one is done.
    if (taken.length === slots) this.again = true;
  }

  private run(t: TakenDelivery): void {
    this.running.set(t.outboxId, t);
    const done = deliverTaken(this.s, t)
      .then((result) => this.opts.onDone?.(t.outboxId, result))
      .catch(async (err: unknown) => {
        const message = safeErrorText(err);
        this.s.log(`webhooks: delivery outbox row ${t.outboxId} failed (execution ${t.executions}): ${message}`);
        this.opts.onDone?.(t.outboxId, { kind: 'error', reason: message });
        // Infrastructure retries, as BullMQ gave other jobs: backoff, then the dead letter.
        if (t.executions >= this.s.settings.deliveryMaxExecutions) await markOutboxDead(this.s.db, t.outboxId, message).catch(() => undefined);
        const retryAt = new Date(this.s.now().getTime() + Math.min(30_000, 500 * 2 ** Math.max(0, t.executions - 1)));
        await giveBack(this.s.db, t.outboxId, t.token, retryAt, message).catch(() => undefined);
      })
      .finally(() => {
        this.running.delete(t.outboxId);
        this.finished.delete(done);
        this.poke();
      });
    this.finished.add(done);
  }

  private async renew(): Promise<void> {
    if (this.running.size === 0) return;
    try {
      await renewLeases(this.s.db, [...this.running.values()], this.s.now(), this.s.settings.deliveryLeaseMs);
    } catch {
      // A lost connection: the next tick tries again, the lease covers the gap.
    }
  }

  /** Takes nothing more and waits for the deliveries running now (each is bounded by the endpoint timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer !== null) clearInterval(this.pollTimer);
    if (this.renewTimer !== null) clearInterval(this.renewTimer);
    if (this.delayed !== null) clearTimeout(this.delayed);
    if (this.taking !== null) await this.taking;
    await Promise.all([...this.finished]);
  }
}
