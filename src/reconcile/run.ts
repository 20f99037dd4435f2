// Reconciliation, the I/O half: for each connector account, read the provider's records for the
// window, load our side, compare (compare.ts), apply the safe findings through transition() with
// origin 'reconcile', and store every finding once (dedupe_key), auto-applied ones as resolved.
// Then the account's settlement rows for the window are imported into the ledger (once per row).

import { and, eq, gte, inArray, lt, or, sql } from 'drizzle-orm';
import type { Connector, NormalizedEvent, ReconciliationWindow } from '../connectors/contract.ts';
import { newId } from '../core/ids.ts';
import type { Payment } from '../core/payment.ts';
import type { StepEnvFactory } from '../jobs/step-env.ts';
import { importSettlement } from '../ledger/settlement.ts';
import type { SettlementImport } from '../ledger/settlement.ts';
import type { Db } from '../store/db.ts';
import { loadAggregate } from '../store/payment-load.ts';
import { discrepancies, disputes, inboundEvents, paymentAttempts } from '../store/schema.ts';
import { transition } from '../store/transition.ts';
import { compare, dedupeKey, DISCREPANCY_CATEGORIES } from './compare.ts';
import type { DiscrepancyCategory, Finding, UnappliedInboxRow } from './compare.ts';

export interface ReconcileDeps {
  readonly db: Db;
  readonly connectors: ReadonlyMap<string, Connector>;
  readonly envs: StepEnvFactory;
  readonly now: () => Date;
  /** Called after each connector account (done of total); the CLI draws its progress line from it. */
  readonly onProgress?: (account: string, done: number, total: number) => void;
  /** Called after a transition committed (the runtime kicks its relay); the relay sweep covers a miss. */
  readonly onApplied?: () => void;
}

export interface ReconcileOptions {
  readonly window: ReconciliationWindow;
  /** Only this account; every configured account otherwise. */
  readonly connector?: string;
  /** A pending inbox row younger than this is still being processed, not "failed to apply". Default 10 min. */
  readonly inboxGraceMs?: number;
}

export interface ReconcileSummary {
  readonly window: { readonly from: string; readonly to: string };
  readonly checked: number;
  readonly discrepancies: number;
  readonly by_category: Record<DiscrepancyCategory, number>;
  readonly auto_resolved: number;
  /** Discrepancies stored by this run (a re-run of the same window stores none). */
  readonly new: number;
  /** Settlement rows read, posted by this run, and naming none of our attempts, over all accounts. */
  readonly settlement: SettlementImport;
}

export class UnknownConnectorError extends Error {
  override readonly name = 'UnknownConnectorError';
}

async function ourPayments(db: Db, account: string, w: ReconciliationWindow): Promise<Payment[]> {
  const rows = await db
    .selectDistinct({ paymentId: paymentAttempts.paymentId })
    .from(paymentAttempts)
    .where(and(eq(paymentAttempts.connector, account), gte(paymentAttempts.createdAt, w.from), lt(paymentAttempts.createdAt, w.to)));
  const out: Payment[] = [];
  for (const r of rows) {
    const p = await loadAggregate(db, r.paymentId);
    if (p !== null) out.push(p);
  }
  return out;
}

async function knownDisputes(db: Db, paymentIds: readonly string[]): Promise<Map<string, string[]>> {
  const map = new Map<string, string[]>();
  if (paymentIds.length === 0) return map;
  const rows = await db.select({ paymentId: disputes.paymentId, ref: disputes.providerRef }).from(disputes).where(inArray(disputes.paymentId, [...paymentIds]));
  for (const r of rows) map.set(r.paymentId, [...(map.get(r.paymentId) ?? []), r.ref]);
  return map;
}

async function unappliedInbox(db: Db, account: string, w: ReconciliationWindow, pendingBefore: Date): Promise<UnappliedInboxRow[]> {
  const rows = await db
    .select()
    .from(inboundEvents)
    .where(
      and(
        eq(inboundEvents.connector, account),
        eq(inboundEvents.verified, true),
        gte(inboundEvents.receivedAt, w.from),
        lt(inboundEvents.receivedAt, w.to),
        or(eq(inboundEvents.outcome, 'failed'), and(eq(inboundEvents.outcome, 'pending'), lt(inboundEvents.receivedAt, pendingBefore))),
      ),
    );
  return rows.map((r) => {
    const e = r.event as NormalizedEvent | null;
    return { id: r.id, paymentId: r.paymentId, attemptId: e?.attemptId ?? null, providerRef: e?.providerRef ?? null, rawType: e?.rawType ?? 'event', outcome: r.outcome, reason: r.reason };
  });
}

/** Applies a safe finding; null when step() did not take it (then it stays open for an operator). */
async function applyFinding(deps: ReconcileDeps, f: Finding, payments: ReadonlyMap<string, Payment>): Promise<string | null> {
  const p = f.paymentId === null ? undefined : payments.get(f.paymentId);
  if (f.apply === undefined || p === undefined) return null;
  const env = await deps.envs.forSnapshot(deps.db, p.routing.snapshot);
  const r = await transition(deps.db, p.id, f.apply.input, 'reconcile', env, {
    attemptId: f.apply.attemptId,
    rawProvider: { reconcile: f.detail },
    now: deps.now,
    ...(deps.onApplied === undefined ? {} : { onCommitted: deps.onApplied }),
  });
  return r.kind === 'applied' ? `applied by reconciliation: ${r.from} -> ${r.to}` : null;
}

/** Stores a finding unless the same (category, payment, provider ref, aspect) is already stored; true when new. */
async function store(db: Db, account: string, f: Finding, resolution: string | null, now: Date): Promise<boolean> {
  const rows = await db
    .insert(discrepancies)
    .values({
      id: newId('discrepancy', now.getTime()), paymentId: f.paymentId, attemptId: f.attemptId, kind: f.category, category: f.category, detail: f.detail,
      connector: account, providerRef: f.providerRef, dedupeKey: dedupeKey(f), createdAt: now,
      ...(resolution === null ? { owner: 'operations', status: 'open' } : { owner: 'reconcile', status: 'resolved', resolution, resolvedAt: now }),
    })
    .onConflictDoNothing({ target: discrepancies.dedupeKey })
    .returning({ id: discrepancies.id });
  return rows.length > 0;
}

export async function reconcile(deps: ReconcileDeps, opts: ReconcileOptions): Promise<ReconcileSummary> {
  const accounts = opts.connector === undefined ? [...deps.connectors.keys()] : [opts.connector];
  const byCategory = Object.fromEntries(DISCREPANCY_CATEGORIES.map((c) => [c, 0])) as Record<DiscrepancyCategory, number>;
  let checked = 0;
  let found = 0;
  let autoResolved = 0;
  let stored = 0;
  const settlement = { lines: 0, posted: 0, unmatched: 0 };
  for (const [i, account] of accounts.entries()) {
    const connector = deps.connectors.get(account);
    if (connector === undefined) throw new UnknownConnectorError(`no connector account "${account}" (configured: ${[...deps.connectors.keys()].join(', ')})`);
    const now = deps.now();
    const records = await connector.fetchReconciliationRecords(opts.window);
    const payments = await ourPayments(deps.db, account, opts.window);
    const result = compare({
      account, records, payments,
      disputes: await knownDisputes(deps.db, payments.map((p) => p.id)),
      unapplied: await unappliedInbox(deps.db, account, opts.window, new Date(now.getTime() - (opts.inboxGraceMs ?? 10 * 60_000))),
      visibleBefore: new Date(now.getTime() - connector.reconciliationDelayMs),
    });
    const byId = new Map(payments.map((p) => [p.id, p]));
    checked += result.checked;
    for (const f of result.findings) {
      found++;
      byCategory[f.category]++;
      const resolution = await applyFinding(deps, f, byId);
      if (resolution !== null) autoResolved++;
      if (await store(deps.db, account, f, resolution, deps.now())) stored++;
    }
    const imported = await importSettlement(deps.db, account, connector, opts.window, deps.now());
    settlement.lines += imported.lines;
    settlement.posted += imported.posted;
    settlement.unmatched += imported.unmatched;
    deps.onProgress?.(account, i + 1, accounts.length);
  }
  return { window: { from: opts.window.from.toISOString(), to: opts.window.to.toISOString() }, checked, discrepancies: found, by_category: byCategory, auto_resolved: autoResolved, new: stored, settlement };
}

/** Open discrepancies found by reconciliation, oldest first (for operators and tests). */
export function openDiscrepancies(db: Db, limit = 500) {
  return db.select().from(discrepancies).where(and(eq(discrepancies.status, 'open'), sql`category IS NOT NULL`)).orderBy(discrepancies.createdAt).limit(limit);
}
