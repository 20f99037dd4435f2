// What a merchant can do about a dispute (issue 48), shared by the API: read what the provider
// accepts, send evidence (files and fields, staged or submitted with a defense reason), accept.
//
// These calls are made from the request, not through the payment outbox: they change no payment
// (the outbox's rows are the payment aggregate's effects, decided by step() and judged against its
// version), and their outcome at the provider is told back by the provider's dispute events, which
// already decide the dispute's status and money. What keeps a retry safe is the provider's own
// idempotency: every call carries a key derived from the merchant's Idempotency-Key and the
// dispute, so a retry after a lost answer (or a crash) repeats the same calls under the same keys
// and the provider replays them. Everything is checked before any call: a request that is refused
// here writes nothing and calls nothing.

import { createHash } from 'node:crypto';
import type { Runtime } from './runtime.ts';
import { DisputeCallError } from '../connectors/contract.ts';
import type { Connector, DisputeDefenseOptions, DisputeEvidenceFile, DisputeOperations } from '../connectors/contract.ts';
import { isFinalDispute } from '../core/disputes.ts';
import type { DisputeStatus } from '../core/disputes.ts';
import { findDispute, findFile, recordAccepted, recordEvidenceSent } from '../store/dispute-queries.ts';
import type { DisputeRow } from '../store/dispute-queries.ts';

export type DisputeActionFailure =
  | { readonly kind: 'not_found'; readonly message: string }
  /** A field of the request (dotted path) names something the provider does not take. */
  | { readonly kind: 'invalid'; readonly field: string; readonly message: string }
  | { readonly kind: 'not_open'; readonly message: string }
  | { readonly kind: 'refused'; readonly message: string }
  | { readonly kind: 'unavailable'; readonly message: string };

export class DisputeActionError extends Error {
  override readonly name = 'DisputeActionError';
  constructor(readonly failure: DisputeActionFailure) {
    super(failure.message);
  }
}

export interface EvidenceRequest {
  readonly defenseReason: string | null;
  readonly fields: Readonly<Record<string, string>>;
  readonly files: readonly { readonly file: string; readonly type: string }[];
  readonly submit: boolean;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = { pdf: 'application/pdf', jpeg: 'image/jpeg', png: 'image/png' };

/** The base of the provider keys of one merchant request on one dispute: at most 43 characters (each call adds a suffix; Adyen takes 64). */
export function providerKeyBase(merchantId: string, idempotencyKey: string, disputeId: string): string {
  return `sy-${createHash('sha256').update(`${merchantId}\u0000${idempotencyKey}\u0000${disputeId}`).digest('base64url').slice(0, 40)}`;
}

async function disputeOf(rt: Runtime, merchantId: string, id: string): Promise<{ row: DisputeRow; connector: Connector; ops: DisputeOperations }> {
  const row = await findDispute(rt.database.db, merchantId, id);
  if (row === null) throw new DisputeActionError({ kind: 'not_found', message: `no dispute ${id}` });
  const connector = rt.connectors.get(row.connector);
  if (connector?.disputes === undefined) throw new DisputeActionError({ kind: 'not_open', message: `dispute ${id} is on ${row.connector}, which is not configured to answer disputes` });
  return { row, connector, ops: connector.disputes };
}

/** The merchant can still answer: not decided, not accepted, evidence not submitted. */
function assertOpen(row: DisputeRow): void {
  if (isFinalDispute(row.status as DisputeStatus)) throw new DisputeActionError({ kind: 'not_open', message: `dispute ${row.id} is ${row.status}` });
  if (row.acceptedAt !== null) throw new DisputeActionError({ kind: 'not_open', message: `dispute ${row.id} was accepted` });
  if (row.evidenceSubmittedAt !== null) throw new DisputeActionError({ kind: 'not_open', message: `the evidence of dispute ${row.id} was submitted` });
}

async function providerCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof DisputeCallError)) throw err;
    throw new DisputeActionError(err.refused ? { kind: 'refused', message: err.message } : { kind: 'unavailable', message: err.message });
  }
}

export async function disputeDefenseOptions(rt: Runtime, merchantId: string, id: string): Promise<{ row: DisputeRow; connectorType: string; options: DisputeDefenseOptions }> {
  const { row, connector, ops } = await disputeOf(rt, merchantId, id);
  const options = await providerCall(() => ops.defenseOptions(row.providerRef));
  return { row, connectorType: connector.type, options };
}

function invalid(field: string, message: string): DisputeActionError {
  return new DisputeActionError({ kind: 'invalid', field, message });
}

/** Every name in the request against what the provider takes for this dispute; the first mismatch is named. */
function checkAgainst(options: DisputeDefenseOptions, req: EvidenceRequest): void {
  const seen = new Set<string>();
  for (const [i, f] of req.files.entries()) {
    if (seen.has(f.type)) throw invalid(`files.${i}.type`, `${f.type} is given twice`);
    seen.add(f.type);
  }
  if (options.reasons.length === 0 && options.textFields.length > 0) {
    // Fields, no reasons (Stripe).
    if (req.defenseReason !== null) throw invalid('defense_reason', `unknown defense reason ${req.defenseReason}: this provider takes none (give evidence fields)`);
    for (const key of Object.keys(req.fields)) {
      if (!options.textFields.includes(key)) throw invalid(`fields.${key}`, `unknown evidence field ${key}; one of ${options.textFields.join(', ')}`);
    }
    for (const [i, f] of req.files.entries()) {
      if (!options.fileTypes.includes(f.type)) throw invalid(`files.${i}.type`, `unknown evidence file type ${f.type}; one of ${options.fileTypes.join(', ')}`);
    }
    return;
  }
  // Reasons with document types (Adyen).
  const [firstField] = Object.keys(req.fields);
  if (firstField !== undefined) throw invalid(`fields.${firstField}`, 'this provider takes no evidence fields: give files as the document types of a defense reason');
  const reason = req.defenseReason === null ? null : options.reasons.find((r) => r.code === req.defenseReason);
  if (req.defenseReason !== null && reason === undefined) {
    const known = options.reasons.map((r) => r.code);
    throw invalid('defense_reason', `unknown defense reason ${req.defenseReason}; ${known.length === 0 ? 'the provider accepts none for this dispute now' : `one of ${known.join(', ')}`}`);
  }
  if (req.submit && reason === null) throw invalid('defense_reason', 'a defense reason is required to submit (GET /v1/disputes/{id}/defense_reasons lists them)');
  const types = new Set((reason === null || reason === undefined ? options.reasons : [reason]).flatMap((r) => r.documentTypes.map((t) => t.code)));
  for (const [i, f] of req.files.entries()) {
    if (!types.has(f.type)) throw invalid(`files.${i}.type`, `unknown document type ${f.type}${reason ? ` for ${reason.code}` : ''}; one of ${[...types].join(', ')}`);
  }
}

/**
 * Sends evidence for a dispute: checked against what the provider takes now, then each file and
 * the fields (and the defense, on submit) at the provider, then recorded on the dispute.
 */
export async function sendDisputeEvidence(rt: Runtime, merchantId: string, id: string, req: EvidenceRequest, idempotencyKey: string): Promise<DisputeRow> {
  const { row, ops } = await disputeOf(rt, merchantId, id);
  assertOpen(row);
  const options = await providerCall(() => ops.defenseOptions(row.providerRef));
  checkAgainst(options, req);
  const files: DisputeEvidenceFile[] = [];
  for (const [i, f] of req.files.entries()) {
    const file = await findFile(rt.database.db, merchantId, f.file);
    if (file === null) throw invalid(`files.${i}.file`, `no file ${f.file}`);
    files.push({ fileId: file.id, type: f.type, contentType: CONTENT_TYPES[file.type] ?? 'application/octet-stream', bytes: file.content });
  }
  const key = providerKeyBase(merchantId, idempotencyKey, id);
  await providerCall(() => ops.submitEvidence({ disputeRef: row.providerRef, defenseReason: req.defenseReason, fields: req.fields, files, submit: req.submit, idempotencyKey: key }));
  await recordEvidenceSent(rt.database.db, row.id, rt.now(), req.submit, req.defenseReason);
  return (await findDispute(rt.database.db, merchantId, id))!;
}

/** Accepts a dispute at its provider (it is then lost, or an inquiry closed, by the provider's events), then records it. */
export async function acceptDispute(rt: Runtime, merchantId: string, id: string, idempotencyKey: string): Promise<DisputeRow> {
  const { row, ops } = await disputeOf(rt, merchantId, id);
  assertOpen(row);
  await providerCall(() => ops.accept(row.providerRef, `${providerKeyBase(merchantId, idempotencyKey, id)}-accept`));
  await recordAccepted(rt.database.db, row.id, rt.now());
  return (await findDispute(rt.database.db, merchantId, id))!;
}
