// `switchyard audit list [--since D] [--operator NAME] [--target ID] [--limit N] [--json]`: the
// operator audit trail, newest first (src/ops/audit.ts).

import { listAudit } from '../ops/audit.ts';
import { parseDuration } from '../routing/duration.ts';
import { withDb } from './cli-database.ts';
import { CliInputError } from './cli-input-error.ts';

export interface AuditListInput {
  readonly since?: string;
  readonly operator?: string;
  readonly target?: string;
  readonly limit?: string;
  readonly json?: boolean;
}

const brief = (v: unknown): string => (v === null || v === undefined ? '-' : JSON.stringify(v));

export async function auditListCommand(databaseUrl: string, o: AuditListInput, now: () => Date = () => new Date()): Promise<string> {
  const sinceMs = o.since === undefined ? null : parseDuration(o.since);
  if (sinceMs === null && o.since !== undefined) throw new CliInputError(`--since "${o.since}" is not a duration such as 90m, 24h or 7d`);
  const limit = o.limit === undefined ? 200 : Number(o.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new CliInputError(`--limit "${o.limit}" is not a whole number from 1 to 10000`);
  if (o.operator !== undefined && !/^[a-z][a-z0-9._-]{0,39}$/.test(o.operator)) throw new CliInputError(`--operator "${o.operator}" is not an operator name`);
  return withDb(databaseUrl, async (db) => {
    const rows = await listAudit(db, {
      limit, ...(sinceMs === null ? {} : { since: new Date(now().getTime() - sinceMs) }),
      ...(o.operator === undefined ? {} : { operator: o.operator }), ...(o.target === undefined ? {} : { target: o.target }),
    });
    if (o.json === true) return JSON.stringify({ audit: rows.map((r) => ({ ...r, at: r.at.toISOString() })) });
    if (rows.length === 0) return 'no operator actions recorded for this filter';
    return [`${rows.length} operator action(s), newest first`, ...rows.map((r) => [r.at.toISOString(), r.operator, r.action, r.target, brief(r.before), brief(r.after), r.note ?? ''].join('\t'))].join('\n');
  });
}
