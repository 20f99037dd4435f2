// Invariant customer_deadline while the run settles: no payment waits for its customer
// (requires_action, its attempt awaiting the customer) past expires_at without a fence in progress
// (the attempt fencing, or a fence call in the outbox). Polled from the first payment to quiescence,
// with a grace for the expiry timer to be picked up (a worker killed, a Redis restart): the rule is
// that the deadline fires, not that it fires to the millisecond. After quiescence, checkInvariants
// allows none at all past the deadline.

import pg from 'pg';
import type { OverdueSighting } from './invariants.ts';

/** How long past expires_at an expiry timer may take to start the fence before a sighting counts. */
export const EXPIRY_GRACE_MS = 30_000;

export async function overdueCustomers(client: pg.Client, merchantIds: readonly string[], graceMs = EXPIRY_GRACE_MS): Promise<OverdueSighting[]> {
  const r = await client.query<{ payment_id: string; attempt_no: number; expires_at: string; late_s: string }>(
    `SELECT p.id AS payment_id, a.no AS attempt_no, a.authentication->>'expiresAt' AS expires_at,
            round(extract(epoch FROM now() - (a.authentication->>'expiresAt')::timestamptz)) AS late_s
       FROM payments p JOIN payment_attempts a ON a.payment_id = p.id
      WHERE p.merchant_id = ANY($1) AND p.state = 'requires_action'
        AND a.status = 'authenticating' AND a.authentication->>'stage' = 'awaiting_customer'
        AND (a.authentication->>'expiresAt')::timestamptz < now() - make_interval(secs => $2::double precision / 1000)
        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.payment_id = p.id AND o.kind = 'provider_call' AND o.payload->>'op' = 'fence' AND o.payload->>'attemptId' = a.id)`,
    [merchantIds, graceMs],
  );
  return r.rows.map((row) => ({
    paymentId: row.payment_id,
    detail: `attempt ${row.attempt_no} waited for its customer ${row.late_s} s past expires_at ${row.expires_at} with no fence in progress`,
  }));
}

/** Polls every `everyMs` until stopped; keeps the first sighting per payment. */
export class CustomerDeadlineWatch {
  private readonly seen = new Map<string, OverdueSighting>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private client: pg.Client | null = null;
  private stopped = false;

  constructor(private readonly databaseUrl: string, private readonly merchantIds: readonly string[], private readonly everyMs = 2_000) {}

  async start(): Promise<void> {
    this.client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'chaos-harness' });
    // pg_terminate faults end this connection too: a lost poll is retried on a new one.
    this.client.on('error', () => undefined);
    await this.client.connect();
    this.timer = setInterval(() => {
      this.running = this.running.then(() => this.poll());
    }, this.everyMs);
  }

  private async poll(): Promise<void> {
    try {
      if (this.client === null) {
        this.client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'chaos-harness' });
        this.client.on('error', () => undefined);
        await this.client.connect();
      }
      for (const s of await overdueCustomers(this.client, this.merchantIds)) if (!this.seen.has(s.paymentId)) this.seen.set(s.paymentId, s);
    } catch {
      await this.client?.end().catch(() => undefined);
      this.client = null;
    }
  }

  /** Stops polling after one last look; returns the sightings. */
  async stop(): Promise<OverdueSighting[]> {
    if (this.timer !== null) clearInterval(this.timer);
    if (this.stopped) return [...this.seen.values()];
    this.stopped = true;
    await this.running;
    await this.poll();
    await this.client?.end().catch(() => undefined);
    this.client = null;
    return [...this.seen.values()];
  }
}
