// After the faults stop: wait (bounded) until nothing of the run is in flight — every payment
// resting, no capture or refund pending, no outbox row or provider event waiting.

import pg from 'pg';

export interface InFlight {
  readonly payments: number;
  readonly modifications: number;
  readonly outbox: number;
  readonly inbound: number;
}

const RESTING = ['authorized', 'captured', 'voided', 'declined', 'expired', 'failed', 'needs_review'];

export async function inFlight(client: pg.Client, merchantIds: readonly string[]): Promise<InFlight> {
  const r = await client.query<{ payments: string; modifications: string; outbox: string; inbound: string }>(
    `WITH run AS (SELECT id, state FROM payments WHERE merchant_id = ANY($1)),
          parked AS (SELECT payment_id FROM discrepancies WHERE status = 'open' AND payment_id IS NOT NULL)
     SELECT (SELECT count(*) FROM run WHERE state <> ALL($2)) AS payments,
            (SELECT count(*) FROM captures WHERE payment_id IN (SELECT id FROM run) AND status IN ('requested', 'pending') AND payment_id NOT IN (SELECT payment_id FROM parked))
          + (SELECT count(*) FROM refunds WHERE payment_id IN (SELECT id FROM run) AND status IN ('requested', 'pending') AND payment_id NOT IN (SELECT payment_id FROM parked))
          -- A release the provider has not confirmed yet (an accepted cancel or refund waits for its event).
          + (SELECT count(*) FROM payment_attempts WHERE payment_id IN (SELECT id FROM run) AND status = 'releasing' AND payment_id NOT IN (SELECT payment_id FROM parked)) AS modifications,
            (SELECT count(*) FROM outbox WHERE payment_id IN (SELECT id FROM run) AND status = 'pending' AND run_at <= now()) AS outbox,
            (SELECT count(*) FROM inbound_events WHERE outcome = 'pending') AS inbound`,
    [merchantIds, RESTING],
  );
  const row = r.rows[0]!;
  return { payments: Number(row.payments), modifications: Number(row.modifications), outbox: Number(row.outbox), inbound: Number(row.inbound) };
}

export const total = (f: InFlight): number => f.payments + f.modifications + f.outbox + f.inbound;

/** Polls until nothing is in flight twice in a row, or the bound passes; returns what is left. */
export async function waitForQuiescence(databaseUrl: string, merchantIds: readonly string[], boundMs: number, onPoll?: (f: InFlight) => void): Promise<InFlight> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'chaos-harness' });
  await client.connect();
  try {
    const deadline = Date.now() + boundMs;
    let quietPolls = 0;
    for (;;) {
      const f = await inFlight(client, merchantIds);
      onPoll?.(f);
      quietPolls = total(f) === 0 ? quietPolls + 1 : 0;
      if (quietPolls >= 2 || Date.now() > deadline) return f;
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await client.end();
  }
}
