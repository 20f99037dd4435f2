// `switchyard discrepancies list [--status open|resolved|all] [--category C] [--json]` and
// `switchyard discrepancies resolve <id> --note TEXT [--reason R]`: what reconciliation (and the
// state machine) found, for an operator to work through; a resolution is recorded under the
// operator's name (SWITCHYARD_OPERATOR_TOKEN) in the audit trail. Bad input is one line and exit code 1.

import { isId } from '../core/ids.ts';
import { DISCREPANCY_CATEGORIES } from '../reconcile/compare.ts';
import type { DiscrepancyCategory } from '../reconcile/compare.ts';
import { CLOSING_REASONS, countDiscrepancies, listDiscrepancies, resolveDiscrepancy } from '../reconcile/discrepancies.ts';
import type { ClosingReason, DiscrepancyRow, StatusFilter } from '../reconcile/discrepancies.ts';
import { recordAudit } from '../ops/audit.ts';
import { cliOperator } from '../ops/operators.ts';
import { withDb } from './cli-database.ts';
import { CliInputError } from './cli-input-error.ts';

const STATUSES: readonly string[] = ['open', 'resolved', 'all'];


export interface ListInput {
  readonly status?: string;
  readonly category?: string;
  readonly limit?: string;
  readonly json?: boolean;
}

function parseList(o: ListInput): { status: StatusFilter; category?: DiscrepancyCategory; limit: number } {
  const status = o.status ?? 'open';
  if (!STATUSES.includes(status)) throw new CliInputError(`--status "${status}" is not one of ${STATUSES.join(', ')}`);
  if (o.category !== undefined && !(DISCREPANCY_CATEGORIES as readonly string[]).includes(o.category)) {
    throw new CliInputError(`--category "${o.category}" is not one of ${DISCREPANCY_CATEGORIES.join(', ')}`);
  }
  const limit = o.limit === undefined ? 100 : Number(o.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new CliInputError(`--limit "${o.limit}" is not a whole number from 1 to 10000`);
  return { status: status as StatusFilter, limit, ...(o.category === undefined ? {} : { category: o.category as DiscrepancyCategory }) };
}

function view(r: DiscrepancyRow) {
  return {
    id: r.id, category: r.category, kind: r.kind, status: r.status, owner: r.owner, connector: r.connector, payment_id: r.paymentId, attempt_id: r.attemptId,
    provider_ref: r.providerRef, detail: r.detail, resolution: r.resolution, created_at: r.createdAt.toISOString(), resolved_at: r.resolvedAt?.toISOString() ?? null,
    amounts: r.amounts, history: r.history, updated_at: r.updatedAt?.toISOString() ?? null, reopens: r.reopens,
  };
}

/** The detail, what it reopens (a resolved finding whose provider side changed since), how it was resolved. */
function detailOf(r: DiscrepancyRow): string {
  const reopens = r.reopens === null ? '' : ` (reopens ${r.reopens})`;
  const changes = r.history.length === 0 ? '' : ` [changed ${r.history.length}×]`;
  return `${r.detail}${reopens}${changes}${r.status === 'resolved' ? ` — resolved: ${r.resolution ?? ''}` : ''}`;
}

export async function discrepanciesListCommand(databaseUrl: string, input: ListInput): Promise<string> {
  const o = parseList(input);
  return withDb(databaseUrl, async (db) => {
    const rows = await listDiscrepancies(db, o);
    const count = await countDiscrepancies(db, o);
    if (input.json === true) return JSON.stringify({ count, discrepancies: rows.map(view) });
    const what = `${o.status === 'all' ? '' : `${o.status} `}discrepanc${count === 1 ? 'y' : 'ies'}${o.category === undefined ? '' : ` in ${o.category}`}`;
    if (count === 0) return `no ${what}`;
    const lines = rows.map((r) =>
      [r.id, r.category ?? r.kind, r.status, r.owner, r.connector ?? '-', r.paymentId ?? '-', r.providerRef ?? '-', r.createdAt.toISOString(), detailOf(r)].join('\t'),
    );
    return [`${count} ${what}${rows.length < count ? ` (newest ${rows.length} shown)` : ''}`, ...lines].join('\n');
  });
}

export interface ResolveInput {
  readonly note: string;
  readonly reason?: string;
}

export async function discrepanciesResolveCommand(databaseUrl: string, id: string, input: ResolveInput, now: () => Date = () => new Date(), env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const given: string = id; // isId() narrows id itself to never when it fails
  if (!isId('discrepancy', id)) throw new CliInputError(`"${given}" is not a discrepancy id (dsc_…; see switchyard discrepancies list)`);
  const note = input.note.trim();
  if (note === '' || note.length > 2000) throw new CliInputError('--note must say what was done (1 to 2000 characters)');
  const reason = input.reason?.trim();
  if (reason !== undefined && !(CLOSING_REASONS as readonly string[]).includes(reason)) throw new CliInputError(`--reason "${reason}" is not one of ${CLOSING_REASONS.join(', ')}`);
  const operator = cliOperator(env).name;
  return withDb(databaseUrl, async (db) => {
    const at = now();
    const r = await resolveDiscrepancy(db, id, {
      note, operator, now: at, ...(reason === undefined ? {} : { reason: reason as ClosingReason }),
      alsoInTransaction: (tx, row, evidence) => recordAudit(tx, {
        operator, action: 'discrepancy.resolve', target: id, before: { status: 'open', kind: row.kind, category: row.category, detail: row.detail },
        after: { status: 'resolved', reason: reason ?? null, provider_evidence: evidence }, note, at,
      }).then(() => undefined),
    });
    if (!r.ok && r.reason === 'not_found') throw new CliInputError(`no discrepancy ${id}`);
    if (!r.ok && r.reason === 'needs_reason') {
      const seen = r.evidence === null ? 'no attempt is recorded for it' : `attempt ${r.evidence.attemptId} is ${r.evidence.attemptStatus}, not released`;
      throw new CliInputError(`discrepancy ${id} (${r.row.kind}) is about customer money the provider has not confirmed returned (${seen}): give --reason (${CLOSING_REASONS.join(', ')}) with the note`);
    }
    if (!r.ok) throw new CliInputError(`discrepancy ${id} is already resolved (${r.row.resolvedAt?.toISOString() ?? '?'}, by ${r.row.owner}): ${r.row.resolution ?? ''}`);
    const why = r.evidence?.agrees === true ? ' (the provider confirmed the release)' : reason === undefined ? '' : ` (${reason})`;
    return `discrepancy ${id} resolved by ${operator}${why}: ${note}`;
  });
}
