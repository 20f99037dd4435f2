// BullMQ workers for the webhook queues (inbound events, merchant-event fan-out) and the
// delivery dispatcher, which takes deliveries from PostgreSQL itself (delivery-dispatcher.ts: a
// queue cannot skip a job whose endpoint is busy without holding a slot or writing a new job).
// As for provider calls, BullMQ retries cover only our own infrastructure failures; a job that
// exhausts them for another reason marks its outbox row dead, and an inbound event goes to the dead
// letter with it. One that exhausts them on infrastructure is run again by the relay's sweep
// (src/jobs/job-failure.ts), which also decides when the write here is lost.

import { Worker } from 'bullmq';
import { sql } from 'drizzle-orm';
import type { ConnectionOptions, Job } from 'bullmq';
import { asJobFailure, isInfrastructureFailure } from '../jobs/job-failure.ts';
import { executionToken, markOutboxDead } from '../jobs/outbox-claims.ts';
import type { Db } from '../store/db.ts';
import type { OutboxJobData } from '../jobs/queues.ts';
import { settleInboundEvent } from './inbound/inbox.ts';
import { processInboundEvent } from './inbound/inbound-processor.ts';
import { DeliveryDispatcher } from './outbound/delivery-dispatcher.ts';
import { fanOutMerchantEvent } from './outbound/event-fanout.ts';
import { DELIVERY_QUEUE, INBOUND_QUEUE, MERCHANT_EVENT_QUEUE } from './webhook-jobs.ts';
import type { InboundJob } from './webhook-jobs.ts';
import type { WebhookServices } from './webhook-services.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

export interface WebhookWorkerOptions {
  readonly connection: ConnectionOptions;
  readonly prefix: string;
  readonly inboundConcurrency?: number;
  /** Called with every processed job (tests, metrics); deliveries as DELIVERY_QUEUE. */
  readonly onProcessed?: (queue: string, outboxId: number, result: unknown) => void;
}

type Handler = (s: WebhookServices, outboxId: number, claimant: string) => Promise<unknown>;

export class WebhookWorkers {
  private readonly workers: Worker<OutboxJobData>[] = [];
  private readonly deliveries: DeliveryDispatcher;

  constructor(
    private readonly services: WebhookServices,
    private readonly opts: WebhookWorkerOptions,
  ) {
    this.add(INBOUND_QUEUE, processInboundEvent, opts.inboundConcurrency ?? 8);
    this.add(MERCHANT_EVENT_QUEUE, fanOutMerchantEvent, 8);
    this.deliveries = new DeliveryDispatcher(services, { onDone: (id, r) => opts.onProcessed?.(DELIVERY_QUEUE, id, r) });
    this.deliveries.start();
  }

  /** New deliveries were committed in this process: take them now rather than at the next poll. */
  pokeDeliveries(): void {
    this.deliveries.poke();
  }

  private add(queue: string, handler: Handler, concurrency: number): void {
    const s = this.services;
    const process = async (job: Job<OutboxJobData>): Promise<unknown> => {
      // Each execution claims with a token of its own: a stalled job's twin carries the same job id.
      let result: unknown;
      try {
        result = await handler(s, job.data.outboxId, executionToken(job.id ?? `job-${job.data.outboxId}`));
      } catch (err) {
        throw asJobFailure(err);
      }
      this.opts.onProcessed?.(queue, job.data.outboxId, result);
      return result;
    };
    const w = new Worker<OutboxJobData>(queue, process, {
      connection: this.opts.connection, prefix: this.opts.prefix, concurrency, stalledInterval: 5_000, maxStalledCount: 1_000,
    });
    w.on('failed', (job, err) => {
      if (job === undefined) return;
      const exhausted = job.attemptsMade >= (job.opts.attempts ?? 1);
      const infrastructure = isInfrastructureFailure(err);
      s.log(`webhooks: ${queue} job ${job.id} failed (try ${job.attemptsMade}): ${safeErrorText(err)}${!exhausted ? '' : infrastructure ? ' — left pending, the relay runs it again' : ' — dead letter'}`);
      if (!exhausted || infrastructure) return;
      // Best effort: if this write is lost, the relay's sweep finds the failed job and decides the same.
      void deadLetterOutboxRow(s.db, s.now(), { id: job.data.outboxId, kind: queue === INBOUND_QUEUE ? 'inbound_event' : 'merchant_event' }, err.message).catch(() => undefined);
    });
    w.on('error', (err) => s.log(`webhooks: ${queue}: ${safeErrorText(err)}`));
    this.workers.push(w);
  }

  async waitUntilReady(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  async close(): Promise<void> {
    await Promise.all([...this.workers.map((w) => w.close()), this.deliveries.stop()]);
  }
}

/**
 * Marks an outbox row dead; an inbound event's row takes its event to the dead letter with it (the
 * event is `failed`, replayable). Used by the workers and by the relay's sweep (runtime.ts).
 */
export async function deadLetterOutboxRow(db: Db, now: Date, row: { readonly id: number; readonly kind: string }, error: string): Promise<void> {
  await markOutboxDead(db, row.id, error);
  if (row.kind !== 'inbound_event') return;
  const rows = await db.execute<{ payload: InboundJob; status: string }>(sql`SELECT payload, status FROM outbox WHERE id = ${row.id}`);
  const inboundId = rows.rows[0]?.status === 'dead' ? rows.rows[0].payload.inboundEventId : undefined;
  if (inboundId !== undefined) await settleInboundEvent(db, inboundId, 'failed', `processing failed: ${error}`, null, now);
}
