// How a failed Adyen library call becomes a CallOutcome. The table is normative: docs/connectors.md
// copies it and the conformance kit drives every row against the sandbox. The library's network
// failures are `ApiException`s (not Error subclasses, statusCode 500 by default), so they are told
// apart by message and by the socket record, never by that status.

import type { CallOutcome } from '../../core/outcome.ts';
import { assertNever } from '../../core/states.ts';
import type { ErrorClassificationRow, FailureSituation } from '../contract.ts';
import type { TransportRecord } from './transport.ts';

export const ADYEN_ERROR_CLASSIFICATION: readonly ErrorClassificationRow[] = Object.freeze([
  { situation: 'connection_refused', signal: 'ApiException "connect ECONNREFUSED" / ENOTFOUND / EAI_AGAIN / TLS failure, before the TLS handshake completed', outcome: 'not_sent', reason: 'connection_refused' },
  { situation: 'validation', signal: 'HttpClientException 400 / 422 (errorCode other than 704)', outcome: 'not_sent', reason: 'validation' },
  { situation: 'authentication', signal: 'HttpClientException 401', outcome: 'not_sent', reason: 'authentication' },
  { situation: 'permission', signal: 'HttpClientException 403', outcome: 'not_sent', reason: 'permission' },
  { situation: 'rate_limited', signal: 'HttpClientException 429', outcome: 'not_sent', reason: 'rate_limited' },
  { situation: 'card_declined', signal: 'HTTP 200 resultCode Refused / Error / Cancelled, by refusalReasonCode through the decline table', outcome: 'declined', reason: 'decline_table' },
  // Adyen documents no payload comparison: a reused key replays the first answer, which the integrity check catches.
  { situation: 'idempotency_mismatch', signal: 'same key, other fields: Adyen replays the first response; its amount differs from the one asked', outcome: 'unknown', reason: 'integrity_mismatch', alert: true },
  { situation: 'in_progress', signal: 'HttpClientException 409 or 422 with errorCode 704 (transient-error: true)', outcome: 'unknown', reason: 'in_progress' },
  { situation: 'server_error', signal: 'HttpClientException 5xx', outcome: 'unknown', reason: 'server_error' },
  { situation: 'connection_reset', signal: 'ApiException "socket hang up" / ECONNRESET / EPIPE without a timeout', outcome: 'unknown', reason: 'connection_reset' },
  { situation: 'timeout', signal: 'ApiException "socket hang up" after the connectionTimeoutMillis idle timeout fired', outcome: 'unknown', reason: 'timeout' },
  { situation: 'truncated_body', signal: 'Error "aborted" / "The connection was terminated while the message was still being sent" after a status line', outcome: 'unknown', reason: 'truncated_body' },
  { situation: 'unparseable', signal: 'a 2xx body that is not the operation\'s JSON, or a non-JSON non-5xx error body', outcome: 'unknown', reason: 'unparseable' },
  // Never a synchronous answer (modifications answer 201 received): the notification says it (webhook.ts, modification-reasons.ts).
  { situation: 'already_done', signal: 'CAPTURE / CANCELLATION notification success=false whose reason is one of the listed "already captured / cancelled" texts (Adyen documents no code)', outcome: 'unknown', reason: 'already_done' },
] satisfies ErrorClassificationRow[]);

/** Messages Node gives for failures before a connection exists or before TLS is up: no request byte left. */
const NEVER_CONNECTED = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|certificate|self[- ]signed|unable to verify|wrong version number|SSL routines|Hostname\/IP does not match|ERR_TLS|before secure TLS connection/i;
const HANG_UP = /socket hang up|ECONNRESET|EPIPE/i;
const TRUNCATED = /^aborted$|terminated while the message was still being sent/i;

function field(o: unknown, k: string): unknown {
  return typeof o === 'object' && o !== null && k in o ? (o as Record<string, unknown>)[k] : undefined;
}

function text(o: unknown, k: string): string {
  const v = field(o, k);
  return typeof v === 'string' ? v : '';
}

/** Which row a failed call falls in, or null when the failure is not one the library produces. */
export function failureSituation(error: unknown, transport: TransportRecord): FailureSituation | null {
  const name = text(error, 'name');
  const message = text(error, 'message');
  if (name === 'HttpClientException') {
    const status = field(error, 'statusCode');
    const errorCode = text(error, 'errorCode');
    if (errorCode === '704') return 'in_progress';
    if (typeof status !== 'number') return 'unparseable';
    if (status >= 500) return 'server_error';
    // A 4xx whose body was not Adyen's JSON came from something in between: not proof of anything.
    if (field(error, 'apiError') === undefined) return 'unparseable';
    if (status === 401) return 'authentication';
    if (status === 403) return 'permission';
    if (status === 429) return 'rate_limited';
    if (status === 400 || status === 404 || status === 422) return 'validation';
    return 'unparseable';
  }
  if (name === 'ApiException') {
    if (message === 'Invalid X-API-Key was used') return 'authentication'; // refused locally, before any socket
    if (transport.timedOut) return 'timeout';
    if (NEVER_CONNECTED.test(message) && !transport.secureConnected && transport.responseStatus === null) return 'connection_refused';
    if (HANG_UP.test(message)) return 'connection_reset';
    return null;
  }
  if (error instanceof Error) {
    if (transport.responseStatus !== null && (TRUNCATED.test(message) || HANG_UP.test(message))) return 'truncated_body';
    // A non-2xx body with `errors` surfaces as Error(body): Adyen refused the request's content.
    if (transport.responseStatus !== null && transport.responseStatus >= 400 && transport.responseStatus < 500 && message.includes('"errors"')) return 'validation';
    if (transport.responseStatus !== null) return 'unparseable';
    if (transport.timedOut) return 'timeout';
    if (HANG_UP.test(message)) return 'connection_reset';
  }
  return null;
}

function describe(error: unknown): string {
  const name = text(error, 'name') || 'Error';
  const message = text(error, 'message') || String(error);
  const code = text(error, 'errorCode');
  return `${name}${code !== '' ? ` ${code}` : ''}: ${message}`;
}

function rowFor(situation: FailureSituation): ErrorClassificationRow {
  const row = ADYEN_ERROR_CLASSIFICATION.find((r) => r.situation === situation);
  if (row === undefined) throw new Error(`no classification row for ${situation}`);
  return row;
}

/** Turns a failed library call into an outcome, following the table. Declines are HTTP 200 values, never failures. */
export function outcomeForFailure(error: unknown, transport: TransportRecord, providerRef?: string): CallOutcome {
  const ref = providerRef !== undefined ? { providerRef } : {};
  const situation = failureSituation(error, transport);
  if (situation === null) return { kind: 'unknown', reason: 'unexpected', ...ref, detail: describe(error) };
  const row = rowFor(situation);
  switch (row.outcome) {
    case 'declined':
      return { kind: 'unknown', reason: 'unexpected', ...ref, detail: `a decline surfaced as an error: ${describe(error)}` };
    case 'not_sent':
      return { kind: 'not_sent', reason: row.reason, ...ref, detail: describe(error) };
    case 'unknown':
      return { kind: 'unknown', reason: row.reason, ...ref, detail: describe(error), ...(row.alert === true && { alert: true }) };
    default:
      return assertNever(row, 'classification row');
  }
}
