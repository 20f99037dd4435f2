// What a hot reload cannot apply. A process builds each connector account once, at start: its
// connector (credentials, endpoint, timeouts, decline table), its in-process sandbox, its breaker,
// its fleet-wide budget and call queue, and its webhook intake. Starting those for an account that
// arrives by reload — and swapping them for one that changed — would mean rebuilding what in-flight
// calls and queued jobs hold, so a reload that adds or changes an account is refused, naming each
// account and what differs, and the old config keeps serving until a restart. Removing an account
// is applied: routing stops choosing it, and its connector stays up for the payments already on it.

import { canonicalJson } from './snapshot.ts';
import type { SwitchyardConfig } from './config-schema.ts';
import type { ConfigProblem } from './config-loader.ts';

const RESTART = 'needs a restart (connector accounts, with their breakers, budgets, queues and webhook intake, start with the process)';

function changedFields(started: Readonly<Record<string, unknown>>, next: Readonly<Record<string, unknown>>): string[] {
  const keys = [...new Set([...Object.keys(started), ...Object.keys(next)])].sort();
  // Field names only: the values may be secrets.
  return keys.filter((k) => canonicalJson(started[k]) !== canonicalJson(next[k]));
}

/** Problems for every account (and decline table) in `next` that differs from what the process started with. */
export function restartNeeds(started: SwitchyardConfig, next: SwitchyardConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [name, account] of Object.entries(next.connectors)) {
    const was = Object.hasOwn(started.connectors, name) ? started.connectors[name] : undefined;
    if (was === undefined) {
      problems.push({ path: `connectors.${name}`, message: `new connector account ${name} ${RESTART}` });
      continue;
    }
    // A written `mode` changes nothing the process built: it is checked against what the account is
    // (account-modes.ts), which only the other fields decide. Writing it down is a reload.
    const { mode: _was, ...wasBuilt } = was;
    const { mode: _next, ...nextBuilt } = account;
    const fields = changedFields(wasBuilt, nextBuilt);
    if (fields.length > 0) problems.push({ path: `connectors.${name}`, message: `connector account ${name} changed (${fields.join(', ')}): ${RESTART}` });
  }
  // Decline tables are built into the connectors at start, per type: only types some account uses matter.
  const types = new Set(Object.values(next.connectors).map((c) => c.type));
  for (const type of [...types].sort()) {
    const fields = changedFields(started.declines[type] ?? {}, next.declines[type] ?? {});
    if (fields.length > 0) problems.push({ path: `declines.${type}`, message: `decline table for ${type} changed (${fields.join(', ')}): ${RESTART}` });
  }
  return problems;
}
