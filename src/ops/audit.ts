// The operator audit trail: one append-only row per operator action (migration 0018 refuses
// UPDATE, DELETE and TRUNCATE). Actions that change something write their row in the same
// transaction as the change wherever the change has one, so an action and its record commit
// together or not at all. A merchant's own key actions through the API (issue 47) are recorded here
// too, under the key that made them.

import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../store/db.ts';

export const AUDIT_ACTIONS = [
  'payment.resolve',
  'payment.resolve_override',
  'discrepancy.resolve',
  'dead_letter.replay',
  'webhook.redeliver',
  'merchant.rotate_key',
  'merchant.rotate_publishable_key',
  'merchant.set_origins', 'merchant.set_version',
  'merchant.allow_raw_cards',
  'merchant.revoke_raw_cards',
  'merchant.create',
  'api_key.create',
  'api_key.roll',
  'api_key.revoke',
  'operator.sign_in',
  'operator.sign_out',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  /** The operator's name; for a key action made through the merchant API, the key that made it (key_…). */
  readonly operator: string;
  readonly action: AuditAction;
  /** What was acted on: a payment, discrepancy, outbox row (`outbox:<id>`), event, merchant or session. */
  readonly target: string;
  readonly before?: unknown;
  readonly after?: unknown;
  readonly note?: string | null;
  readonly at?: Date;
}

export interface AuditRow {
  readonly id: number;
  readonly at: Date;
  readonly operator: string;
  readonly action: string;
  readonly target: string;
  readonly before: unknown;
  readonly after: unknown;
  readonly note: string | null;
}

const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

export async function recordAudit(db: DbOrTx, e: AuditEntry): Promise<number> {
  const r = await db.execute<{ id: string }>(sql`
    INSERT INTO operator_audit (at, operator, action, target, before, after, note)
    VALUES (${(e.at ?? new Date()).toISOString()}::timestamptz, ${e.operator}, ${e.action}, ${e.target}, ${json(e.before)}::jsonb, ${json(e.after)}::jsonb, ${e.note ?? null})
    RETURNING id`);
  return Number(r.rows[0]!.id);
}

export interface AuditFilter {
  readonly since?: Date;
  readonly operator?: string;
  /** A target id, or a prefix ending in `*` (`pay_*`, `outbox:*`). */
  readonly target?: string;
  readonly limit?: number;
}

/** Newest first. */
export async function listAudit(db: DbOrTx, f: AuditFilter = {}): Promise<AuditRow[]> {
  const target = f.target ?? null;
  const prefix = target !== null && target.endsWith('*') ? `${target.slice(0, -1).replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const r = await db.execute<{ id: string; at: string | Date; operator: string; action: string; target: string; before: unknown; after: unknown; note: string | null }>(sql`
    SELECT id, at, operator, action, target, before, after, note FROM operator_audit
     WHERE (${f.since?.toISOString() ?? null}::timestamptz IS NULL OR at >= ${f.since?.toISOString() ?? null}::timestamptz)
       AND (${f.operator ?? null}::text IS NULL OR operator = ${f.operator ?? null})
       AND (${target}::text IS NULL OR (${prefix}::text IS NULL AND target = ${target}) OR (${prefix}::text IS NOT NULL AND target LIKE ${prefix}))
     ORDER BY at DESC, id DESC LIMIT ${f.limit ?? 200}`);
  return r.rows.map((x) => ({ id: Number(x.id), at: new Date(x.at), operator: x.operator, action: x.action, target: x.target, before: x.before, after: x.after, note: x.note }));
}
