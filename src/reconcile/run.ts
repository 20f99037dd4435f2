// Reconciliation, the I/O half: for each connector account, read the provider's records for the
// window, load our side, compare (compare.ts), apply the safe findings through transition() with
// origin 'reconcile', and store every finding under its dedupe key (one open row per key; see
// storeFinding), auto-applied ones as resolved.
// Then the account's settlement rows for the window are imported into the ledger (once per row).

import { and, desc, eq, gte, inArray, lt, or, sql } from 'drizzle-orm';
import type { Connector, NormalizedEvent, ReconciliationRecord, ReconciliationWindow } from '../connectors/contract.ts';
import { newId } from '../core/ids.ts';
import type { Payment } from '../core/payment.ts';
import type { StepEnvFactory } from '../jobs/step-env.ts';
import { importSettlement } from '../ledger/settlement.ts';
import type { SettlementImport } from '../ledger/settlement.ts';
import type { Db } from '../store/db.ts';
import { loadAggregate } from '../store/payment-load.ts';
import { discrepancies, disputes, inboundEvents } from '../store/schema.ts';
import type { DiscrepancyAmounts, DiscrepancyFacts } from '../store/schema.ts';
import { transition } from '../store/transition.ts';
import { compare, dedupeKey, DISCREPANCY_CATEGORIES } from './compare.ts';
import { missingReports, recordsFromStoredReports, syncProviderReports } from './provider-reports.ts';
import type { DiscrepancyCategory, Finding, UnappliedInboxRow } from './compare.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

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
  /** Discrepancy rows stored by this run, reopened ones included (a re-run of an unchanged window stores none). */
  readonly new: number;
  /** Of `new`, rows that reopen a resolved finding whose provider side changed since. */
  readonly reopened: number;
  /** Open rows whose detail or amounts this run changed (the previous state is in their history). */
  readonly updated: number;
  /** Settlement rows read, posted by this run, and naming none of our attempts, over all accounts. */
  readonly settlement: SettlementImport;
  /** Findings this run could not apply or store (one payment's error never stops the run): each is left for the next run. */
  readonly errors: readonly ReconcileError[];
}

export interface ReconcileError {
  readonly account: string;
  readonly paymentId: string | null;
  readonly category: DiscrepancyCategory;
  readonly error: string;
}

export class UnknownConnectorError extends Error {
  override readonly name = 'UnknownConnectorError';
}

/** Payment states with something in flight (the provider may have moved on without telling us). */
const IN_FLIGHT_STATES = ['authorizing', 'auth_unknown', 'requires_action', 'capturing', 'voiding', 'needs_review'];

/**
 * Our side of the window, whatever the payments' creation dates: every payment with an attempt on
 * this account that was created in the window, changed in or since it, has a payment, capture or
 * refund in flight, or that one of the provider's records (activity in the window) names.
 */
async function ourPayments(db: Db, account: string, w: ReconciliationWindow, records: readonly ReconciliationRecord[]): Promise<Payment[]> {
  const refs = [...new Set(records.map((r) => r.providerRef))];
  const attemptIds = [...new Set(records.flatMap((r) => (r.attemptId === null ? [] : [r.attemptId])))];
  const list = (xs: readonly string[]) => sql`(SELECT jsonb_array_elements_text(${JSON.stringify(xs)}::jsonb))`;
  const { rows } = await db.execute<{ payment_id: string }>(sql`
    SELECT DISTINCT a.payment_id FROM payment_attempts a JOIN payments p ON p.id = a.payment_id
    WHERE a.connector = ${account} AND (
      (a.created_at >= ${w.from} AND a.created_at < ${w.to})
      OR p.updated_at >= ${w.from}
      OR p.state IN ${list(IN_FLIGHT_STATES)}
      OR EXISTS (SELECT 1 FROM captures c WHERE c.payment_id = p.id AND c.status IN ('requested', 'pending'))
      OR EXISTS (SELECT 1 FROM refunds r WHERE r.payment_id = p.id AND r.status IN ('requested', 'pending'))
      OR a.provider_ref IN ${list(refs)}
      OR a.id IN ${list(attemptIds)})
    ORDER BY a.payment_id`);
  const out: Payment[] = [];
  for (const r of rows) {
    const p = await loadAggregate(db, r.payment_id);
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

function canonical(facts: DiscrepancyFacts | undefined | null): string {
  if (facts === undefined || facts === null) return 'null';
  return JSON.stringify(Object.keys(facts).sort().map((k) => [k, facts[k]]));
}

const sameAmounts = (a: DiscrepancyAmounts | null, b: DiscrepancyAmounts): boolean => a !== null && canonical(a.provider) === canonical(b.provider) && canonical(a.ours) === canonical(b.ours);

export type StoreOutcome = 'inserted' | 'reopened' | 'updated' | 'unchanged';

/**
 * One open row per dedupe key (category, payment, provider reference, aspect). Found again while
 * open: its detail and amounts are updated when they changed, the state they replace appended to
 * its history. Found again after it was resolved: nothing, unless the provider's side (amounts,
 * status) differs from what was recorded at resolution — then a new open row reopens it, linked
 * to the resolved one. Auto-applied findings are stored (or close their open row) as resolved.
 */
export async function storeFinding(db: Db, account: string, f: Finding, resolution: string | null, now: Date): Promise<StoreOutcome> {
  const key = dedupeKey(f);
  const amounts: DiscrepancyAmounts = { provider: f.provider, ours: f.ours };
  return db.transaction(async (tx) => {
    // Two runs storing the same key take turns (the partial unique index would refuse the second open row anyway).
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`discrepancy:${key}`}, 0))`);
    const [open] = await tx.select().from(discrepancies).where(and(eq(discrepancies.dedupeKey, key), eq(discrepancies.status, 'open')));
    // An auto-applied finding is resolved by reconcile's own resolution row (the status follows from it, migration 0018).
    const resolveAs = async (id: string): Promise<void> => {
      if (resolution !== null) await tx.execute(sql`INSERT INTO discrepancy_resolutions (discrepancy_id, at, operator, note) VALUES (${id}, ${now.toISOString()}::timestamptz, 'reconcile', ${resolution})`);
    };
    if (open !== undefined) {
      if (open.amounts === null && open.detail === f.detail && resolution === null) {
        // Stored before amounts were recorded (migration 0011): recording them changes nothing else.
        await tx.update(discrepancies).set({ amounts }).where(eq(discrepancies.id, open.id));
        return 'unchanged';
      }
      const changed = open.detail !== f.detail || !sameAmounts(open.amounts, amounts);
      if (!changed && resolution === null) return 'unchanged';
      await tx
        .update(discrepancies)
        .set({
          detail: f.detail, amounts, updatedAt: now,
          ...(changed ? { history: sql`${discrepancies.history} || ${JSON.stringify([{ at: now.toISOString(), detail: open.detail, amounts: open.amounts }])}::jsonb` } : {}),
        })
        .where(eq(discrepancies.id, open.id));
      await resolveAs(open.id);
      return 'updated';
    }
    const [last] = await tx.select().from(discrepancies).where(eq(discrepancies.dedupeKey, key)).orderBy(desc(discrepancies.createdAt), desc(discrepancies.id)).limit(1);
    if (last !== undefined) {
      if (last.amounts === null) {
        // Resolved before amounts were recorded (migration 0011): what is seen now stands for what was seen then.
        await tx.update(discrepancies).set({ amounts }).where(eq(discrepancies.id, last.id));
        return 'unchanged';
      }
      if (canonical(last.amounts.provider) === canonical(amounts.provider)) return 'unchanged';
    }
    const rows = await tx
      .insert(discrepancies)
      .values({
        id: newId('discrepancy', now.getTime()), paymentId: f.paymentId, attemptId: f.attemptId, kind: f.category, category: f.category, detail: f.detail,
        connector: account, providerRef: f.providerRef, dedupeKey: key, createdAt: now, amounts, reopens: last?.id ?? null,
        owner: 'operations', status: 'open',
      })
      .onConflictDoNothing()
      .returning({ id: discrepancies.id });
    if (rows.length === 0) return 'unchanged';
    await resolveAs(rows[0]!.id);
    // An auto-applied finding linked to an earlier row is a new resolved row, not a reopened one.
    return last === undefined || resolution !== null ? 'inserted' : 'reopened';
  });
}

export async function reconcile(deps: ReconcileDeps, opts: ReconcileOptions): Promise<ReconcileSummary> {
  const accounts = opts.connector === undefined ? [...deps.connectors.keys()] : [opts.connector];
  const byCategory = Object.fromEntries(DISCREPANCY_CATEGORIES.map((c) => [c, 0])) as Record<DiscrepancyCategory, number>;
  let checked = 0;
  let found = 0;
  let autoResolved = 0;
  let stored = 0;
  let reopened = 0;
  let updated = 0;
  const settlement = { lines: 0, posted: 0, unmatched: 0 };
  const errors: ReconcileError[] = [];
  for (const [i, account] of accounts.entries()) {
    const connector = deps.connectors.get(account);
    if (connector === undefined) throw new UnknownConnectorError(`no connector account "${account}" (configured: ${[...deps.connectors.keys()].join(', ')})`);
    const now = deps.now();
    // Announced reports first: downloaded and imported once, whatever the window.
    const reports = await syncProviderReports(deps.db, account, connector, now);
    // Statuses from the announced daily status reports when the account has any (Adyen), else the connector's own fetch.
    const fromReports = await recordsFromStoredReports(deps.db, account, connector, opts.window);
    const records = fromReports?.records ?? (await connector.fetchReconciliationRecords?.(opts.window)) ?? [];
    const visibleMs = Math.min(now.getTime() - connector.reconciliationDelayMs, fromReports?.coveredUntil.getTime() ?? Number.POSITIVE_INFINITY);
    const payments = await ourPayments(deps.db, account, opts.window, records);
    const result = compare({
      account, records, payments, windowFrom: opts.window.from,
      disputes: await knownDisputes(deps.db, payments.map((p) => p.id)),
      unapplied: await unappliedInbox(deps.db, account, opts.window, new Date(now.getTime() - (opts.inboxGraceMs ?? 10 * 60_000))),
      visibleBefore: new Date(visibleMs),
    });
    const byId = new Map(payments.map((p) => [p.id, p]));
    checked += result.checked;
    for (const f of result.findings) {
      found++;
      byCategory[f.category]++;
      let outcome: StoreOutcome;
      try {
        const resolution = await applyFinding(deps, f, byId);
        if (resolution !== null) autoResolved++;
        outcome = await storeFinding(deps.db, account, f, resolution, deps.now());
      } catch (err) {
        // One payment's error (a bug, a conflict that would not settle) never stops the run: it is
        // reported in the summary, its finding is found again by the next run.
        errors.push({ account, paymentId: f.paymentId, category: f.category, error: safeErrorText(err) });
        continue;
      }
      if (outcome === 'inserted' || outcome === 'reopened') stored++;
      if (outcome === 'reopened') reopened++;
      if (outcome === 'updated') updated++;
    }
    if (connector.reports !== undefined) {
      const reportFindings = await missingReports(deps.db, account, connector, { graceMs: connector.reports.missingGraceMs }, now);
      for (const f of reports.accessRefused === null ? reportFindings : [reports.accessRefused, ...reportFindings]) {
        found++;
        byCategory[f.category]++;
        const outcome = await storeFinding(deps.db, account, f, null, deps.now());
        if (outcome === 'inserted' || outcome === 'reopened') stored++;
        if (outcome === 'reopened') reopened++;
        if (outcome === 'updated') updated++;
      }
    }
    // An account whose reports are announced imports them as they come (syncProviderReports), not by day name.
    const imported = fromReports !== null ? { lines: 0, posted: 0, unmatched: 0 } : await importSettlement(deps.db, account, connector, opts.window, deps.now());
    settlement.lines += imported.lines + reports.lines;
    settlement.posted += imported.posted + reports.posted;
    settlement.unmatched += imported.unmatched + reports.unmatched;
    deps.onProgress?.(account, i + 1, accounts.length);
  }
  return { window: { from: opts.window.from.toISOString(), to: opts.window.to.toISOString() }, checked, discrepancies: found, by_category: byCategory, auto_resolved: autoResolved, new: stored, reopened, updated, settlement, errors };
}

/** Open discrepancies found by reconciliation, oldest first (for operators and tests). */
export function openDiscrepancies(db: Db, limit = 500) {
  return db.select().from(discrepancies).where(and(eq(discrepancies.status, 'open'), sql`category IS NOT NULL`)).orderBy(discrepancies.createdAt).limit(limit);
}
