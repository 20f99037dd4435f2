// Everything the invariants are checked against, read after quiescence: the gateway's rows for
// the run's merchants, and the sandboxes' own ledgers (the providers' ground truth).

import pg from 'pg';
import { Queue } from 'bullmq';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Redis } from 'ioredis';
import { checkLedger } from '../src/ledger/check.ts';
import { callQueueName, outboxJobId, TIMER_QUEUE } from '../src/jobs/queues.ts';
import { webhookQueueFor } from '../src/webhooks/webhook-jobs.ts';
import * as schema from '../src/store/schema.ts';
import { controlFetch } from './control-fetch.ts';

export interface PaymentRow {
  readonly id: string;
  readonly state: string;
  readonly amount: number;
  readonly currency: string;
  readonly amount_authorized: number;
  readonly amount_captured: number;
  readonly amount_refunded: number;
}

export interface AttemptRow {
  readonly id: string;
  readonly payment_id: string;
  readonly no: number;
  readonly connector: string;
  readonly status: string;
  readonly proof: string | null;
  /** Set for an attempt whose approval the payment did not keep (a late or partial approval): its release. */
  readonly release: { readonly no: number; readonly round: number; readonly status: string; readonly kind: string } | null;
  /** Customer authentication on this attempt (issue 27), as the gateway keeps it; null when none was asked for. */
  readonly authentication: { readonly stage: string; readonly expiresAt: string | null; readonly returnedAt: string | null } | null;
}

/** A capture the gateway booked (ledger transaction of kind capture) for an attempt. */
export interface LedgerCaptureRow {
  readonly payment_id: string;
  readonly attempt_id: string | null;
  readonly amount: number;
  readonly created_at: Date;
}

export interface ModificationRow {
  readonly id: string;
  readonly payment_id: string;
  readonly no: number;
  readonly amount: number;
  readonly status: string;
  readonly provider_ref: string | null;
  readonly created_at: Date;
  readonly updated_at: Date;
}

export interface TransitionRow {
  readonly id: number;
  readonly payment_id: string;
  readonly from_state: string;
  readonly to_state: string;
  readonly outcome: 'applied' | 'ignored';
  readonly origin: string;
  readonly version: number;
  readonly input: {
    type: string;
    fact?: { fact: string; captureId?: string; refundId?: string; providerRef?: string };
    ref?: { op: string; captureId?: string; refundId?: string };
    outcome?: { kind: string; providerRef?: string };
  };
  readonly raw_provider: { providerEventId?: string; modificationRef?: string | null } | null;
}

export interface OutboxRow {
  readonly id: number;
  /** Null for a webhook job's row (an inbound event's, a merchant event's) written during the run. */
  readonly payment_id: string | null;
  readonly kind: string;
  readonly status: string;
  readonly last_error: string | null;
  /** A timer not yet due (hold expiry, max lifetime): pending by design. */
  readonly future: boolean;
  /** Seconds since the relay (or a process running it at commit) last stamped it; null: never published. */
  readonly published_s_ago: number | null;
  /** A due pending row's BullMQ job as read after quiescence; null: not looked up (done, not due, or a row no queue carries). */
  readonly job: { readonly state: string; readonly failedReason: string | null } | null;
}

/** Where the gateway's queues live: the run's private Redis and the processes' key prefix. */
export interface RunQueues {
  readonly redisUrl: string;
  readonly prefix: string;
}

export interface InboundRow {
  readonly connector: string;
  readonly provider_event_id: string | null;
  readonly verified: boolean;
  readonly outcome: string;
  readonly payment_id: string | null;
}

export interface SandboxEntry {
  readonly account: string;
  readonly id: string;
  readonly reference: string;
  readonly payment_id?: string;
  readonly status: string;
  readonly authorized: number;
  readonly captured: number;
  readonly refunded: number;
  readonly cancelled: boolean;
  /** The provider's own record of customer authentication, where the sandbox keeps one. */
  readonly authentication?: { readonly asked_at: string; readonly completed_at: string | null; readonly outcome: 'completed' | 'failed' | null };
}

export interface RunData {
  readonly payments: readonly PaymentRow[];
  readonly attempts: readonly AttemptRow[];
  readonly captures: readonly ModificationRow[];
  readonly refunds: readonly ModificationRow[];
  readonly transitions: readonly TransitionRow[];
  readonly ledgerCaptures: readonly LedgerCaptureRow[];
  /** When the data was read (the database's clock): deadlines are judged against it. */
  readonly readAt: Date;
  readonly outbox: readonly OutboxRow[];
  readonly inbound: readonly InboundRow[];
  readonly sandbox: readonly SandboxEntry[];
  /** Payments with an open discrepancy: parked for reconciliation or an operator. */
  readonly openDiscrepancies: ReadonlySet<string>;
  /** The kinds of each payment's open discrepancies, oldest first. */
  readonly openDiscrepancyKinds: ReadonlyMap<string, readonly string[]>;
  /** For each payment in needs_review: the reason of the transition that last took it there. */
  readonly reviewReasons: ReadonlyMap<string, string>;
  /** Ledger problems (unbalanced transactions, payments whose books disagree) for the run's payments. */
  readonly ledgerProblems: readonly { readonly id: string; readonly detail: string }[];
}

const num = <T extends Record<string, unknown>>(rows: T[], fields: (keyof T)[]): T[] =>
  rows.map((r) => {
    const out = { ...r };
    for (const f of fields) (out as Record<string, unknown>)[f as string] = Number(r[f]);
    return out;
  });

/** The BullMQ queue that carries an outbox row (null: none does, e.g. deliveries taken from PostgreSQL). */
function queueOf(kind: string, connector: string | null): string | null {
  if (kind === 'timer') return TIMER_QUEUE;
  if (kind === 'provider_call') return connector === null ? null : callQueueName(connector);
  return kind === 'event_delivery' ? null : webhookQueueFor(kind);
}

/** Each due pending row's job: its state in BullMQ, and why it failed if it did. */
async function jobsOf(rows: readonly (OutboxRow & { connector: string | null })[], where: RunQueues): Promise<Map<number, OutboxRow['job']>> {
  const out = new Map<number, OutboxRow['job']>();
  const pending = rows.filter((r) => r.status === 'pending' && !r.future);
  if (pending.length === 0) return out;
  const connection = new Redis(where.redisUrl, { maxRetriesPerRequest: 2 });
  const queues = new Map<string, Queue>();
  try {
    for (const r of pending) {
      const name = queueOf(r.kind, r.connector);
      if (name === null) continue;
      let q = queues.get(name);
      if (q === undefined) queues.set(name, (q = new Queue(name, { connection, prefix: where.prefix })));
      const state = await q.getJobState(outboxJobId(r.id));
      const failedReason = state === 'failed' ? ((await q.getJob(outboxJobId(r.id)))?.failedReason ?? null) : null;
      out.set(r.id, { state, failedReason });
    }
  } finally {
    await Promise.all([...queues.values()].map((q) => q.close()));
    connection.disconnect();
  }
  return out;
}

/**
 * `since`: when the run began — webhook jobs' rows (no payment) written from then on are the run's.
 * `queues`: where to read the jobs of rows still pending (absent: not read).
 */
export async function loadRunData(databaseUrl: string, merchantIds: readonly string[], controlUrl: string, accounts: readonly string[], since?: Date, queues?: RunQueues): Promise<RunData> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'chaos-harness' });
  await client.connect();
  try {
    const q = async <T extends Record<string, unknown>>(text: string): Promise<T[]> => (await client.query<T>(text, [merchantIds])).rows;
    const ofRun = 'payment_id IN (SELECT id FROM payments WHERE merchant_id = ANY($1))';
    const payments = num(
      await q<PaymentRow & Record<string, unknown>>('SELECT id, state, amount, currency, amount_authorized, amount_captured, amount_refunded FROM payments WHERE merchant_id = ANY($1)'),
      ['amount', 'amount_authorized', 'amount_captured', 'amount_refunded'],
    );
    const attempts = await q<AttemptRow & Record<string, unknown>>(`SELECT id, payment_id, no, connector, status, proof, release_op AS release, authentication FROM payment_attempts WHERE ${ofRun}`);
    const ledgerCaptures = num(
      await q<LedgerCaptureRow & Record<string, unknown>>(`SELECT t.payment_id, t.attempt_id, t.created_at, (SELECT max(e.amount) FROM ledger_entries e WHERE e.transaction_id = t.id) AS amount
         FROM ledger_transactions t WHERE t.kind = 'capture' AND t.${ofRun}`),
      ['amount'],
    );
    const readAt = (await client.query<{ now: Date }>('SELECT now() AS now')).rows[0]!.now;
    const mod = (table: string) => q<ModificationRow & Record<string, unknown>>(`SELECT id, payment_id, no, amount, status, provider_ref, created_at, updated_at FROM ${table} WHERE ${ofRun}`);
    const captures = num(await mod('captures'), ['amount']);
    const refunds = num(await mod('refunds'), ['amount']);
    const transitions = num(
      await q<TransitionRow & Record<string, unknown>>(`SELECT id, payment_id, from_state, to_state, outcome, origin, version, input, raw_provider FROM payment_transitions WHERE ${ofRun} ORDER BY id`),
      ['id'],
    );
    const rows = num(
      (await client.query<OutboxRow & { connector: string | null } & Record<string, unknown>>(
        `SELECT id, payment_id, kind, connector, status, last_error, run_at > now() AS future, extract(epoch FROM now() - published_at)::float8 AS published_s_ago, NULL AS job FROM outbox
          WHERE ${ofRun} OR (payment_id IS NULL AND kind IN ('inbound_event', 'merchant_event') AND $2::timestamptz IS NOT NULL AND created_at >= $2::timestamptz)`,
        [merchantIds, since ?? null],
      )).rows,
      ['id'],
    );
    const jobs = queues === undefined ? new Map<number, OutboxRow['job']>() : await jobsOf(rows, queues);
    const outbox: OutboxRow[] = rows.map(({ connector: _connector, ...r }) => ({ ...r, published_s_ago: r.published_s_ago === null ? null : Number(r.published_s_ago), job: jobs.get(r.id) ?? null }));
    const open = await q<{ payment_id: string; kind: string }>(`SELECT payment_id, kind FROM discrepancies WHERE status = 'open' AND ${ofRun} ORDER BY created_at, id`);
    const openDiscrepancies = new Set(open.map((r) => r.payment_id));
    const openDiscrepancyKinds = new Map<string, string[]>();
    for (const r of open) openDiscrepancyKinds.set(r.payment_id, [...(openDiscrepancyKinds.get(r.payment_id) ?? []), r.kind]);
    const reviewReasons = new Map(
      (await q<{ payment_id: string; reason: string }>(`SELECT DISTINCT ON (t.payment_id) t.payment_id, t.reason FROM payment_transitions t JOIN payments p ON p.id = t.payment_id
          WHERE p.state = 'needs_review' AND t.to_state = 'needs_review' AND t.from_state <> 'needs_review' AND t.outcome = 'applied' AND t.${ofRun} ORDER BY t.payment_id, t.id DESC`)).map((r) => [r.payment_id, r.reason] as const),
    );
    const inbound = (await client.query<InboundRow & Record<string, unknown>>('SELECT connector, provider_event_id, verified, outcome, payment_id FROM inbound_events')).rows;

    const sandbox: SandboxEntry[] = [];
    for (const account of accounts) {
      const res = await controlFetch(`${controlUrl}/_sandbox/${account}/ledger`);
      const body = (await res.json()) as { payments: Omit<SandboxEntry, 'account'>[] };
      for (const e of body.payments) sandbox.push({ ...e, account });
    }

    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2, application_name: 'chaos-harness' });
    let ledgerProblems: { id: string; detail: string }[] = [];
    try {
      const ids = new Set(payments.map((p) => p.id));
      const result = await checkLedger(drizzle(pool, { schema }));
      ledgerProblems = result.problems.filter((p) => p.kind === 'unbalanced_transaction' || ids.has(p.id)).map((p) => ({ id: p.id, detail: `${p.kind}: ${p.detail}` }));
    } finally {
      await pool.end();
    }
    return { payments, attempts, captures, refunds, transitions, ledgerCaptures, readAt, outbox, inbound, sandbox, ledgerProblems, openDiscrepancies, openDiscrepancyKinds, reviewReasons };
  } finally {
    await client.end();
  }
}
