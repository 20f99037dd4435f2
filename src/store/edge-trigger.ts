// Renders the payments.state guard from core's edge table, so the database and step() share one
// source of truth. The migration runner installs it after the numbered migrations and replaces
// it whenever the table changes (detected by the fingerprint stored in the function's comment).

import { createHash } from 'node:crypto';
import { LEGAL_EDGES, PAYMENT_STATES, legalEdgeList } from '../core/states.ts';
import type { PaymentState } from '../core/states.ts';

export const EDGE_GUARD_FUNCTION = 'switchyard_payment_state_guard';
export const EDGE_GUARD_TRIGGERS = ['payments_state_insert_guard', 'payments_state_update_guard'] as const;

function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

function textArray(values: readonly string[]): string {
  return `ARRAY[${values.map(literal).join(', ')}]::text[]`;
}

/** States a payment row may be inserted in: created, or one edge away from it (newPayment moves it at once). */
export function insertableStates(): PaymentState[] {
  return ['created', ...LEGAL_EDGES.created];
}

/** Stable fingerprint of everything the guard encodes; stored as the function comment. */
export function edgeGuardFingerprint(): string {
  const content = JSON.stringify({ states: PAYMENT_STATES, edges: legalEdgeList(), insertable: insertableStates() });
  return `sha256:${createHash('sha256').update(content).digest('hex')}`;
}

/** The SQL that installs (or replaces) the guard function and its two triggers. */
export function renderEdgeGuardSql(): string {
  const edges = legalEdgeList().map(([from, to]) => `${from}>${to}`);
  return `
CREATE OR REPLACE FUNCTION ${EDGE_GUARD_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $guard$
BEGIN
  IF NOT (NEW.state = ANY (${textArray(PAYMENT_STATES)})) THEN
    RAISE EXCEPTION 'unknown payment state %', NEW.state
      USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_legal_edge';
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NOT (NEW.state = ANY (${textArray(insertableStates())})) THEN
      RAISE EXCEPTION 'a payment cannot be created in state %', NEW.state
        USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_legal_edge';
    END IF;
  ELSIF NOT (OLD.state || '>' || NEW.state = ANY (${textArray(edges)})) THEN
    RAISE EXCEPTION 'illegal payment state change from % to % (payment %)', OLD.state, NEW.state, OLD.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_legal_edge';
  END IF;
  RETURN NEW;
END
$guard$;
COMMENT ON FUNCTION ${EDGE_GUARD_FUNCTION}() IS ${literal(`generated from src/core/states.ts ${edgeGuardFingerprint()}`)};
CREATE OR REPLACE TRIGGER ${EDGE_GUARD_TRIGGERS[0]} BEFORE INSERT ON payments
  FOR EACH ROW EXECUTE FUNCTION ${EDGE_GUARD_FUNCTION}();
CREATE OR REPLACE TRIGGER ${EDGE_GUARD_TRIGGERS[1]} BEFORE UPDATE OF state ON payments
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION ${EDGE_GUARD_FUNCTION}();
`;
}

/** Reads the installed fingerprint and how many of the guard's triggers exist on payments. */
export const INSTALLED_GUARD_SQL = `
SELECT (SELECT obj_description(p.oid, 'pg_proc')
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE p.proname = '${EDGE_GUARD_FUNCTION}' AND n.nspname = current_schema()) AS comment,
       (SELECT count(*)::int FROM pg_trigger
         WHERE tgrelid = to_regclass('payments') AND NOT tgisinternal
           AND tgname = ANY (${textArray(EDGE_GUARD_TRIGGERS)})) AS triggers`;

/** True when the installed guard encodes exactly the current edge table, so nothing needs replacing. */
export function isGuardCurrent(row: { comment: string | null; triggers: number } | undefined): boolean {
  return row !== undefined && row.triggers === EDGE_GUARD_TRIGGERS.length && typeof row.comment === 'string' && row.comment.endsWith(edgeGuardFingerprint());
}
