// schema.ts mirrors migrations/: both must name the same tables, columns, types, nullability and indexes.

import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYMENT_STATES, TERMINAL_STATES } from '../../../src/core/states.ts';
import * as schema from '../../../src/store/schema.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';

const drizzleTables = (Object.values(schema) as unknown[]).filter((v): v is PgTable => v instanceof PgTable).map((t) => getTableConfig(t));

/** information_schema spells types its own way; map drizzle's SQL types onto it. */
function normalizeType(sqlType: string): string {
  const t = sqlType.toLowerCase();
  if (t === 'timestamp with time zone') return 'timestamptz';
  if (t === 'bigserial') return 'bigint';
  if (t === 'serial') return 'integer';
  if (t.endsWith('[]')) return 'array';
  return t;
}

function columnType(dataType: string): string {
  if (dataType === 'timestamp with time zone') return 'timestamptz';
  if (dataType === 'ARRAY') return 'array';
  return dataType;
}

describe('drizzle schema vs migrated database', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('store_schema');
  });
  afterAll(async () => {
    await t.drop();
  });

  it('has the same tables and columns with the same types and nullability', async () => {
    const r = await t.pool.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
      `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    const db = r.rows.map((c) => `${c.table_name}.${c.column_name} ${columnType(c.data_type)}${c.is_nullable === 'YES' ? ' null' : ''}`).sort();
    const ts = drizzleTables
      .flatMap((tbl) => tbl.columns.map((c) => `${tbl.name}.${c.name} ${normalizeType(c.getSQLType())}${c.notNull ? '' : ' null'}`))
      .sort();
    expect(ts).toEqual(db);
  });

  it('leaves exactly the terminal states of core out of the in-flight index', async () => {
    const r = await t.pool.query<{ def: string }>(`SELECT indexdef AS def FROM pg_indexes WHERE indexname = 'payments_in_flight_idx'`);
    const def = r.rows[0]?.def ?? '';
    const excluded = PAYMENT_STATES.filter((s) => def.includes(`'${s}'`));
    expect(excluded.sort()).toEqual([...TERMINAL_STATES].sort());
  });

  it('declares the same indexes (by name)', async () => {
    const r = await t.pool.query<{ indexname: string }>(
      `SELECT i.indexname FROM pg_indexes i
        WHERE i.schemaname = 'public'
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    );
    const db = r.rows.map((x) => x.indexname).sort();
    const ts = drizzleTables.flatMap((tbl) => tbl.indexes.map((i) => i.config.name ?? '?')).sort();
    expect(ts).toEqual(db);
  });
});
