// An error as text that is safe to log or store. drizzle's DrizzleQueryError reads
// "Failed query: <statement>\nparams: <values>", and the values are whatever the statement
// carried: a customer's return (the provider page URL, PaRes, the return URL), a webhook's raw
// body, a payment's fields. So a query error is told by the driver's cause (its message and
// SQLSTATE), never by its own message; a wrapper that quoted that message is cut where it starts.
// The rest goes through redact() like every log line.

import { DrizzleQueryError } from 'drizzle-orm';
import { redact } from '../api/log-redaction.ts';
import { errorChain } from '../store/connection-loss.ts';

const QUOTED_QUERY = /Failed query:[\s\S]*/;
const MAX_PART = 300;

function isQueryError(e: unknown): boolean {
  return e instanceof DrizzleQueryError || (e instanceof Error && e.message.startsWith('Failed query:'));
}

function oneLine(text: string): string {
  const flat = text.replace(QUOTED_QUERY, 'a database query failed').replace(/\s+/g, ' ').trim();
  return flat.length > MAX_PART ? `${flat.slice(0, MAX_PART)}…` : flat;
}

function describe(e: unknown): string {
  if (!(e instanceof Error)) return oneLine(typeof e === 'string' ? e : `thrown ${typeof e}`);
  // A refused connect to a host with several addresses: the message is empty, the reasons are inside.
  if (e instanceof AggregateError && e.message === '' && e.errors.length > 0) return describe(e.errors[0]);
  // node-postgres names its errors "error"; drizzle's and most others are plain "Error": neither says anything.
  const name = e.name === 'Error' || e.name === 'error' ? '' : `${e.name}: `;
  const code = (e as { code?: unknown }).code;
  const sqlState = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? ` (SQLSTATE ${code})` : typeof code === 'string' && /^E[A-Z_]+$/.test(code) ? ` (${code})` : '';
  return `${name}${oneLine(e.message)}${sqlState}`;
}

/** One line: the error and what it wraps, outermost first; a query error stands as "database query failed". */
export function safeErrorText(err: unknown): string {
  const parts: string[] = [];
  for (const e of errorChain(err)) {
    const part = isQueryError(e) ? 'database query failed' : describe(e);
    // A wrapper often repeats its cause's words ("infrastructure: <cause>"): said once is enough.
    if (part !== '' && !parts.some((p) => p.endsWith(part))) parts.push(part);
  }
  return redact(parts.join(': ') || 'unknown error');
}
