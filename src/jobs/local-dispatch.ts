// Dispatch at commit: the process that commits an outbox row runs it right away, through the same
// function a BullMQ worker uses (processOutboxRow: exclusive claim, isCallStillWanted, the
// execution-time retention check, breaker, call, transition). The relay and BullMQ stay the
// durable path for every row this does not finish: one due later (backoff, breaker wait), one its
// account's budget has no slot for now, one beyond this process's own capacity, and any row of a
// process that died between its commit and its dispatch (the relay's sweep publishes it).
//
// Why: a row's trip through the relay (stamp, publish) and BullMQ (pickup, scripts) cost ~15 ms and
// several round trips per hop, twice per authorization, on the path the shopper waits for.

import type { AccountBudget } from './account-budget.ts';
import { returnToRelay, takeForLocalRun } from './outbox-claims.ts';
import { processOutboxRow } from './outbox-processor.ts';
import type { ProcessorDeps, ProcessResult } from './outbox-processor.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

/** Kinds run at commit. Webhook deliveries have their own dispatcher; merchant events need none. */
export const LOCAL_KINDS = ['provider_call', 'timer'] as const;

export interface LocalDispatchOptions {
  /** The relay's publish of the ids this process does not run. */
  readonly relay: (ids?: readonly number[]) => void;
  readonly budget?: AccountBudget;
  /** Rows this process runs at once (beyond them, BullMQ's workers take over). Default 32. */
  readonly maxInFlight?: number;
  /** False: every row goes through the relay, as before dispatch at commit (the bench's "old" path, tests). */
  readonly enabled?: boolean;
  readonly log?: (line: string) => void;
  readonly onProcessed?: (outboxId: number, result: ProcessResult) => void;
}

export class LocalDispatcher {
  private inFlight = 0;
  private stopped = false;
  private readonly running = new Set<Promise<void>>();
  private readonly maxInFlight: number;
  private readonly log: (line: string) => void;

  constructor(
    private readonly deps: ProcessorDeps,
    private readonly o: LocalDispatchOptions,
  ) {
    this.maxInFlight = o.maxInFlight ?? 32;
    this.log = o.log ?? ((l) => console.error(l));
  }

  /** After a commit: runs what it can of these new rows here, hands the rest to the relay. */
  offer(ids?: readonly number[]): void {
    if (ids === undefined || ids.length === 0 || this.stopped || this.o.enabled === false) {
      this.o.relay(ids);
      return;
    }
    const job = this.dispatch(ids).catch((err: unknown) => {
      this.log(`dispatch at commit failed (the relay takes the rows): ${safeErrorText(err)}`);
      this.o.relay(ids);
    });
    this.running.add(job);
    void job.finally(() => this.running.delete(job));
  }

  private async dispatch(ids: readonly number[]): Promise<void> {
    const now = this.deps.now?.() ?? new Date();
    const room = this.maxInFlight - this.inFlight;
    const taken = await takeForLocalRun(this.deps.db, ids, LOCAL_KINDS, now, room);
    this.inFlight += taken.length;
    // The relay publishes what was not taken (its stamp skips the rows taken here).
    const takenIds = new Set(taken.map((t) => t.id));
    const rest = ids.filter((id) => !takenIds.has(id));
    if (rest.length > 0) this.o.relay(rest);
    const back: number[] = [];
    const runs: Promise<void>[] = [];
    for (const row of taken) {
      let release: (() => Promise<void>) | null = null;
      if (row.kind === 'provider_call' && row.connector !== null && this.o.budget !== undefined) {
        const slot = await this.o.budget.tryTake(row.connector).catch(() => ({ ok: false as const, reason: 'concurrency' as const }));
        if (!slot.ok) {
          back.push(row.id);
          this.inFlight -= 1;
          continue;
        }
        release = slot.release;
      }
      runs.push(this.run(row.id, release, now));
    }
    if (back.length > 0) {
      await returnToRelay(this.deps.db, back, now);
      this.o.relay(back);
    }
    await Promise.all(runs);
  }

  private async run(id: number, release: (() => Promise<void>) | null, stamp: Date): Promise<void> {
    try {
      const result = await processOutboxRow(this.deps, id, `local-${id}`, release === null ? undefined : { kind: 'held', release });
      this.o.onProcessed?.(id, result);
    } catch (err) {
      // processOutboxRow gave the claim back: the relay publishes the row, a worker retries it.
      this.log(`dispatch at commit: row ${id} failed, handed to the workers: ${safeErrorText(err)}`);
      await returnToRelay(this.deps.db, [id], stamp).catch(() => undefined);
      this.o.relay([id]);
    } finally {
      this.inFlight -= 1;
    }
  }

  /** Rows being run here now. */
  get active(): number {
    return this.inFlight;
  }

  /** Takes no new rows; waits for the ones running (they finish and commit, or give their claim back). */
  async stop(): Promise<void> {
    this.stopped = true;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
