// Delivers a sandbox account's webhook events the way providers do: asynchronously, signed at send
// time over the exact bytes sent, retried on non-2xx with a short bounded backoff, and — on
// demand — delayed, duplicated or reordered so receivers are tested against real-world delivery.
//
// Events are rows in the sandbox database, written by the transaction that emitted them. Of all
// the processes running a sandbox for the account, the one holding the account's dispatch lease
// delivers them, one at a time in id order, to its own target: each event is sent once (plus the
// duplicates asked for), not once per process. A process that dies holding the lease loses it after
// LEASE_MS; the next holder sends what was left (at least once, as providers do).

import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebhookSettings } from './control.ts';
import type { SandboxDatabase } from './database.ts';

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

/** An event as stored: Stripe keeps the serialized event, Adyen its notification items. */
export interface StoredEvent {
  readonly eventId: string;
  readonly type: string;
  readonly body: string | null;
  readonly items: readonly unknown[] | null;
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
  readonly db: SandboxDatabase;
  readonly account: string;
  readonly target?: WebhookTarget;
  /** Tries for a delivery the receiver refuses (4xx). Default 5. */
  readonly maxAttempts?: number;
  /**
   * Tries for a delivery that got no answer or a 5xx — the receiver down or failing, which providers
   * keep retrying for days. Default: maxAttempts. With the doubling backoff, 10 tries span ~25 s.
   */
  readonly transientAttempts?: number;
  readonly retryBaseMs?: number;
  /** Source of randomness for duplicates; injectable so tests can be exact. */
  readonly random?: () => number;
  /** Events sent in one request, from the account's provider settings (Adyen batching); default 1. */
  readonly batchSize?: (settings: Readonly<Record<string, unknown>>) => number;
  /** The bytes one request carries for these events (default: the single event's stored body). */
  readonly render?: (events: readonly StoredEvent[]) => OutgoingEvent;
}

const SEND_TIMEOUT_MS = 5_000;
const LEASE_MS = 10_000;
const POLL_MS = 250;
const CLAIM_LIMIT = 50;

interface ClaimedEvent {
  id: string;
  event_id: string;
  type: string;
  body: string | null;
  items: unknown[] | null;
  due_in_ms: number;
}

function defaultRender(events: readonly StoredEvent[]): OutgoingEvent {
  const event = events[0]!;
  return { id: event.eventId, type: event.type, body: event.body ?? '' };
}

export class WebhookDispatcher {
  private target: WebhookTarget | undefined;
  private readonly owner = `${process.pid}:${randomBytes(6).toString('hex')}`;
  private closed = false;
  private running: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private readonly unlisten: () => void;

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.target = options.target;
    this.unlisten = options.db.onEvents(options.account, () => this.wake?.());
    this.ensureRunning();
  }

  /** Validates, then stores the settings on the account: every process's deliveries follow them. */
  async configure(settings: Partial<WebhookSettings>): Promise<void> {
    if (settings.duplicate !== undefined && !(settings.duplicate >= 0 && settings.duplicate <= 1)) {
      throw new RangeError(`duplicate must be a probability in [0, 1], got ${settings.duplicate}`);
    }
    if (settings.delayMs !== undefined && !(Number.isInteger(settings.delayMs) && settings.delayMs >= 0)) {
      throw new RangeError(`delayMs must be a non-negative integer, got ${settings.delayMs}`);
    }
    await this.options.db.pool.query('UPDATE sandbox_accounts SET webhook_settings = webhook_settings || $2::jsonb WHERE account = $1', [
      this.options.account,
      JSON.stringify(settings),
    ]);
  }

  setTarget(target: WebhookTarget | undefined): void {
    this.target = target;
    this.ensureRunning();
    this.wake?.();
  }

  /** Resolves when every event stored so far for the account was delivered or given up on (at once when this process has no target). */
  async idle(): Promise<void> {
    while (this.target !== undefined && !this.closed) {
      const { rows } = await this.options.db.pool.query<{ pending: boolean }>(
        'SELECT EXISTS (SELECT 1 FROM sandbox_events WHERE account = $1 AND done_at IS NULL) AS pending',
        [this.options.account],
      );
      if (rows[0]?.pending !== true) return;
      await sleep(10);
    }
  }

  /** Every delivery attempt for the account, oldest first (whichever process made it). */
  async deliveries(): Promise<DeliveryRecord[]> {
    const { rows } = await this.options.db.pool.query<{ event_id: string; type: string; attempt: number; status: number | null; at_ms: string }>(
      'SELECT event_id, type, attempt, status, at_ms FROM sandbox_deliveries WHERE account = $1 ORDER BY id',
      [this.options.account],
    );
    return rows.map((r) => ({ eventId: r.event_id, type: r.type, attempt: r.attempt, status: r.status, at: Number(r.at_ms) }));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unlisten();
    this.wake?.();
    await this.running;
    await this.options.db.pool
      .query('UPDATE sandbox_accounts SET dispatch_owner = NULL, dispatch_until = NULL WHERE account = $1 AND dispatch_owner = $2', [this.options.account, this.owner])
      .catch(() => undefined);
  }

  private ensureRunning(): void {
    if (this.running !== null || this.closed || this.target === undefined) return;
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  }

  private async pause(ms: number): Promise<void> {
    if (this.closed) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
    this.wake = null;
  }

  private async loop(): Promise<void> {
    while (!this.closed && this.target !== undefined) {
      let waitMs = POLL_MS;
      try {
        waitMs = await this.dispatchDue();
      } catch {
        // The sandbox database is away: try again after a pause.
      }
      if (waitMs > 0) await this.pause(waitMs);
    }
  }

  /** Takes (or keeps) the lease, sends what is due in order; returns how long to wait before looking again. */
  private async dispatchDue(): Promise<number> {
    const { rows } = await this.options.db.pool.query<{ webhook_settings: Partial<WebhookSettings>; settings: Record<string, unknown>; events: ClaimedEvent[] }>({
      name: 'sbx_dispatch_claim',
      text: `WITH lease AS (
               UPDATE sandbox_accounts SET dispatch_owner = $2, dispatch_until = now() + $3::bigint * interval '1 millisecond'
               WHERE account = $1 AND (dispatch_owner = $2 OR dispatch_owner IS NULL OR dispatch_until < now())
               RETURNING webhook_settings, settings)
             SELECT l.webhook_settings, l.settings,
                    (SELECT coalesce(json_agg(e ORDER BY e.id), '[]'::json) FROM (
                       SELECT id, event_id, type, body, items, greatest(0, ceil(extract(epoch FROM due_at - now()) * 1000))::int AS due_in_ms
                       FROM sandbox_events WHERE account = $1 AND done_at IS NULL ORDER BY id LIMIT $4) e) AS events
             FROM lease l`,
      values: [this.options.account, this.owner, LEASE_MS, CLAIM_LIMIT],
    });
    const claimed = rows[0];
    if (claimed === undefined) return POLL_MS; // another process holds the lease
    const due: ClaimedEvent[] = [];
    for (const e of claimed.events) {
      if (e.due_in_ms > 0) break; // keep publication order: nothing overtakes an event not due yet
      due.push(e);
    }
    if (due.length === 0) return claimed.events.length === 0 ? POLL_MS : Math.min(POLL_MS, claimed.events[0]!.due_in_ms);
    const settings: WebhookSettings = { enabled: true, duplicate: 0, reorder: false, delayMs: 0, ...claimed.webhook_settings };
    if (settings.reorder) due.reverse();
    const size = Math.max(1, this.options.batchSize?.(claimed.settings) ?? 1);
    for (let i = 0; i < due.length && !this.closed; i += size) {
      const group = due.slice(i, i + size);
      await this.deliverGroup(group, settings);
    }
    return 0;
  }

  private async deliverGroup(group: readonly ClaimedEvent[], settings: WebhookSettings): Promise<void> {
    const stored = group.map((e): StoredEvent => ({ eventId: e.event_id, type: e.type, body: e.body, items: e.items }));
    const outgoing = (this.options.render ?? defaultRender)(stored);
    const random = this.options.random ?? Math.random;
    const copies = random() < settings.duplicate ? 2 : 1;
    const records: DeliveryRecord[] = [];
    let last: number | null = null;
    for (let copy = 0; copy < copies; copy++) last = await this.deliver(outgoing, records);
    await this.options.db.pool.query({
      name: 'sbx_dispatch_done',
      text: `WITH done AS (
               UPDATE sandbox_events SET done_at = now(), attempts = attempts + $3, last_status = $4 WHERE id = ANY($2::bigint[]) RETURNING 1),
             recorded AS (
               INSERT INTO sandbox_deliveries (account, event_id, type, attempt, status, at_ms)
               SELECT $1, d.v->>'event_id', d.v->>'type', (d.v->>'attempt')::int, (d.v->>'status')::int, (d.v->>'at_ms')::bigint
               FROM jsonb_array_elements($5::jsonb) WITH ORDINALITY AS d(v, n) ORDER BY d.n RETURNING 1)
             UPDATE sandbox_accounts SET dispatch_until = now() + $7::bigint * interval '1 millisecond' WHERE account = $1 AND dispatch_owner = $6`,
      values: [
        this.options.account, group.map((e) => e.id), records.length, last,
        JSON.stringify(records.map((r) => ({ event_id: r.eventId, type: r.type, attempt: r.attempt, status: r.status, at_ms: r.at }))),
        this.owner, LEASE_MS,
      ],
    });
  }

  /** Sends one copy with bounded retries (a refusal's budget, or the longer one of a receiver down or failing); returns the last status. */
  private async deliver(event: OutgoingEvent, records: DeliveryRecord[]): Promise<number | null> {
    const refusedAttempts = this.options.maxAttempts ?? 5;
    const transientAttempts = this.options.transientAttempts ?? refusedAttempts;
    const retryBaseMs = this.options.retryBaseMs ?? 50;
    let status: number | null = null;
    for (let attempt = 1; !this.closed; attempt++) {
      const target = this.target;
      if (target === undefined) return status;
      if (attempt > 1) await this.renewLease();
      status = null;
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
      records.push({ eventId: event.id, type: event.type, attempt, status, at: Date.now() });
      if (status !== null && status >= 200 && status < 300) return status;
      const budget = status === null || status >= 500 ? transientAttempts : refusedAttempts;
      if (attempt >= budget) return status;
      await sleep(retryBaseMs * 2 ** (attempt - 1));
    }
    return status;
  }

  private async renewLease(): Promise<void> {
    await this.options.db.pool
      .query(`UPDATE sandbox_accounts SET dispatch_until = now() + $3::bigint * interval '1 millisecond' WHERE account = $1 AND dispatch_owner = $2`, [
        this.options.account, this.owner, LEASE_MS,
      ])
      .catch(() => undefined);
  }
}
