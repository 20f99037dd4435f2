// Prepared statements for the hot path (issue 25 item 4). Building a query with drizzle on every
// call (walking the builder, rendering SQL text, mapping columns) was 8–15 % of the gateway's CPU,
// and PostgreSQL parsed and planned the same text again on every round trip. A statement here is
// built ONCE, with sql.placeholder() for its values, and sent as a named pg statement: each pooled
// connection parses it the first time and afterwards only binds and executes it.
//
// Works on the database and on an open transaction alike: the statement is bound to the caller's
// own connection at each call (the transaction's client, or the pool), so it runs inside the
// caller's transaction exactly as the unprepared query did. Results are decoded by drizzle itself
// (the same PreparedQuery it builds for `.prepare()`), so rows look exactly as before.
//
// Names must be unique per text: pg refuses one name with two texts on a connection.

import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { DbOrTx } from './db.ts';

/** The parts of drizzle's node-postgres prepared query and session this module relies on. */
interface DriverPrepared<R> {
  client: unknown;
  execute(values?: Record<string, unknown>): Promise<R>;
}
interface DriverSession {
  readonly client: unknown;
  prepareQuery(query: { sql: string; params: unknown[] }, fields: undefined, name: string | undefined, arrayMode: boolean): DriverPrepared<unknown>;
}

function sessionOf(db: DbOrTx): DriverSession {
  return (db as unknown as { session: DriverSession }).session;
}

/** The prepared query, run on `db`'s connection (the open transaction's client, or the pool). */
function boundTo<R>(p: DriverPrepared<R>, db: DbOrTx): DriverPrepared<R> {
  const bound = Object.create(p) as DriverPrepared<R>;
  bound.client = sessionOf(db).client;
  return bound;
}

/** A drizzle builder (select, insert, update, delete) with placeholders, built on first use. */
export function preparedQuery<R, V extends Record<string, unknown>>(
  name: string, build: (db: DbOrTx) => { prepare(name: string): DriverPrepared<R> | { execute(values?: Record<string, unknown>): Promise<R> } },
): (db: DbOrTx, values: V) => Promise<R> {
  let prepared: DriverPrepared<R> | null = null;
  return (db, values) => {
    prepared ??= build(db).prepare(name) as DriverPrepared<R>;
    return boundTo(prepared, db).execute(values);
  };
}

const dialect = new PgDialect();

/** Raw SQL with placeholders; resolves to what `db.execute()` resolves to (the driver's result, rows by column name). */
export function preparedSql<Row extends Record<string, unknown>, V extends Record<string, unknown>>(
  name: string, text: SQL,
): (db: DbOrTx, values: V) => Promise<{ rows: Row[]; rowCount: number | null }> {
  const query = dialect.sqlToQuery(text);
  return (db, values) =>
    sessionOf(db).prepareQuery({ sql: query.sql, params: query.params }, undefined, name, false).execute(values) as Promise<{ rows: Row[]; rowCount: number | null }>;
}

/** Distinct statement texts named so far (per process), each with its name. Bounded: see executeByShape. */
const shapes = new Map<string, string>();
const MAX_SHAPES = 256;

/**
 * Runs a statement whose text depends on what it writes (transition()'s one-statement write: the
 * parts present, how many children rows): built by drizzle as before, but sent as a named
 * statement per distinct text, so each connection parses and plans every shape once. Past
 * MAX_SHAPES distinct texts in a process, new ones run unnamed (as before), so neither pg's
 * client nor the server keeps an unbounded set of statements per connection.
 */
export function executeByShape<Row extends Record<string, unknown>>(db: DbOrTx, statement: SQL): Promise<{ rows: Row[]; rowCount: number | null }> {
  const query = dialect.sqlToQuery(statement);
  let name = shapes.get(query.sql);
  if (name === undefined && shapes.size < MAX_SHAPES) {
    name = `sy_shape_${shapes.size + 1}`;
    shapes.set(query.sql, name);
  }
  return sessionOf(db).prepareQuery({ sql: query.sql, params: query.params }, undefined, name, false).execute() as Promise<{ rows: Row[]; rowCount: number | null }>;
}
