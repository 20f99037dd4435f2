// A transition's writes as parts of ONE statement: named data-modifying CTEs that run together
// (PostgreSQL runs every data-modifying WITH part exactly once, referenced or not, all on one
// snapshot). One statement is one round trip instead of one per table; the transaction around it
// still decides (a stale version guard throws and everything rolls back).

import { sql } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { DbOrTx } from './db.ts';

export interface WritePart {
  /** Unique within a statement; parts of one group may reference each other by name. */
  readonly name: string;
  readonly body: SQL;
  /** The part inserts outbox rows and returns their `id`: the relay publishes them after COMMIT. */
  readonly outboxIds?: boolean;
}

/** `WITH a AS (...), b AS (...)` for these parts, or nothing when there are none. */
export function withClause(parts: readonly WritePart[]): SQL {
  if (parts.length === 0) return sql``;
  return sql`WITH ${sql.join(parts.map((p) => sql`${sql.identifier(p.name)} AS (${p.body})`), sql`, `)} `;
}

/** The outbox ids the parts returned, as a bigint[] expression. */
export function outboxIdsOf(parts: readonly WritePart[]): SQL {
  const sources = parts.filter((p) => p.outboxIds === true);
  if (sources.length === 0) return sql`'{}'::bigint[]`;
  const union = sql.join(sources.map((p) => sql`SELECT id FROM ${sql.identifier(p.name)}`), sql` UNION ALL `);
  return sql`coalesce((SELECT array_agg(id ORDER BY id) FROM (${union}) ids), '{}'::bigint[])`;
}

/** Runs the parts as one statement; returns the outbox ids they inserted (ascending). */
export async function runParts(tx: DbOrTx, parts: readonly WritePart[]): Promise<number[]> {
  if (parts.length === 0) return [];
  const r = await tx.execute<{ ids: string[] }>(sql`${withClause(parts)}SELECT ${outboxIdsOf(parts)}::text[] AS ids`);
  return r.rows[0]!.ids.map(Number);
}
