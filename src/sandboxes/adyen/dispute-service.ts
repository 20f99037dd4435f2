// Adyen's Disputes API (DisputeService v30, what @adyen/api-library's DisputesApi calls under
// /ca/services/DisputeService/v30): retrieveApplicableDefenseReasons, supplyDefenseDocument,
// defendDispute and acceptDispute, and the issuer's later decision on a defended dispute (the
// control API's knob). Refusals are HTTP 200 with `disputeServiceResult: {success: false,
// errorMessage}`, as the API's result object carries them; a wrong merchant account is 403.
//
// Which defense reasons apply depends on the scheme and the chargeback reason; live answers them
// per dispute. The sandbox's list (below) is its own, for a Visa fraud chargeback (10.4), with
// Adyen's requirement levels (Required, OneOrMore, Optional): the gateway must take the codes from
// the answer, never from this table.

import { invalidField, notAllowed, requiredField } from './errors.ts';
import type { AdyenOperationContext, JsonObject } from './context.ts';
import { isObject, requiredString } from './context.ts';
import { runDisputeSteps } from './disputes.ts';
import type { AdyenDisputeRecord, PaymentRecord } from './state.ts';

type Requirement = 'Required' | 'OneOrMore' | 'Optional';

/** defenseReasonCode -> its document types and how much each is required. */
export const SANDBOX_DEFENSE_REASONS: Readonly<Record<string, Readonly<Record<string, Requirement>>>> = {
  GoodsOrServicesProvided: { TIDorInvoice: 'Required', WrittenCorrespondence: 'Optional' },
  SupplyDefenseMaterial: { DefenseMaterial: 'OneOrMore', TIDorInvoice: 'OneOrMore' },
};

/** Content types a defense document may have (JPEG, PDF, PNG; TIFF too at Adyen, not taken here). */
const CONTENT_TYPES: Readonly<Record<string, string>> = { 'application/pdf': 'pdf', 'image/jpeg': 'jpg', 'image/png': 'png' };

/** The sandbox's bound on one document's decoded size (live's limit is not confirmed here). */
export const ADYEN_DOCUMENT_LIMIT = 4 * 1024 * 1024;

type Answer = { status: number; body: Record<string, unknown> };
const ok = (extra: Record<string, unknown> = {}): Answer => ({ status: 200, body: { ...extra, disputeServiceResult: { success: true } } });
const refused = (errorMessage: string): Answer => ({ status: 200, body: { disputeServiceResult: { success: false, errorMessage } } });

export const DISPUTE_SERVICE_PREFIX = '/ca/services/DisputeService/v30/';
export type DisputeServiceOp = 'retrieveApplicableDefenseReasons' | 'supplyDefenseDocument' | 'defendDispute' | 'acceptDispute';
const OPS: readonly string[] = ['retrieveApplicableDefenseReasons', 'supplyDefenseDocument', 'defendDispute', 'acceptDispute'];

export function disputeServiceOp(method: string, path: string): DisputeServiceOp | null {
  if (method !== 'POST' || !path.startsWith(DISPUTE_SERVICE_PREFIX)) return null;
  const op = path.slice(DISPUTE_SERVICE_PREFIX.length);
  return OPS.includes(op) ? (op as DisputeServiceOp) : null;
}

/** The dispute a request names (the sandbox loads its payment by this alias). */
export function disputeReferenceOf(body: JsonObject): string | null {
  return typeof body['disputePspReference'] === 'string' ? body['disputePspReference'] : null;
}

function find(ctx: AdyenOperationContext, psp: string): { payment: PaymentRecord; dispute: AdyenDisputeRecord } | null {
  for (const payment of ctx.state.payments.values()) {
    const dispute = (payment.disputes ?? []).find((d) => d.pspReference === psp);
    if (dispute !== undefined) return { payment, dispute };
  }
  return null;
}

/** A chargeback the merchant can still act on: funds withdrawn, not final, not defended or accepted. */
function openToDefend(d: AdyenDisputeRecord): string | null {
  if (d.final) return `dispute ${d.pspReference} is closed`;
  if (d.accepted === true) return `dispute ${d.pspReference} was accepted`;
  if (d.defendedWith != null) return `dispute ${d.pspReference} was already defended`;
  if (!d.withdrawn) return `dispute ${d.pspReference} is not a chargeback that can be defended`;
  return null;
}

function reasonsOf(d: AdyenDisputeRecord): Record<string, unknown>[] {
  const supplied = new Set((d.documents ?? []).map((x) => x.type));
  return Object.entries(SANDBOX_DEFENSE_REASONS).map(([code, types]) => ({
    defenseDocumentTypes: Object.entries(types).map(([type, level]) => ({ available: supplied.has(type), defenseDocumentTypeCode: type, requirementLevel: level })),
    defenseReasonCode: code,
    satisfied: satisfied(types, supplied),
  }));
}

function satisfied(types: Readonly<Record<string, Requirement>>, supplied: ReadonlySet<string>): boolean {
  const entries = Object.entries(types);
  const required = entries.filter(([, l]) => l === 'Required').every(([t]) => supplied.has(t));
  const oneOrMore = entries.filter(([, l]) => l === 'OneOrMore');
  return required && (oneOrMore.length === 0 || oneOrMore.some(([t]) => supplied.has(t)));
}

/**
 * One Disputes API request. `detected[i]` is what the i-th supplied document's bytes are (pdf, jpg,
 * png, or null), read before the request's transaction (file-type is asynchronous).
 */
export function disputeService(ctx: AdyenOperationContext, op: DisputeServiceOp, body: JsonObject, detected: readonly (string | null)[]): Answer {
  const account = requiredString(body, 'merchantAccountCode');
  if (account !== ctx.merchantAccount) throw notAllowed(`merchant account ${account} is not linked to this API credential`);
  const psp = requiredString(body, 'disputePspReference', 64);
  const found = find(ctx, psp);
  if (found === null) return refused(`Could not find dispute ${psp}`);
  const { payment, dispute } = found;
  switch (op) {
    case 'retrieveApplicableDefenseReasons':
      return ok({ defenseReasons: openToDefend(dispute) === null ? reasonsOf(dispute) : [] });
    case 'supplyDefenseDocument': {
      const closed = openToDefend(dispute);
      if (closed !== null) return refused(closed);
      const documents = body['defenseDocuments'];
      if (!Array.isArray(documents) || documents.length === 0) throw requiredField('defenseDocuments');
      const known = new Set(Object.values(SANDBOX_DEFENSE_REASONS).flatMap((t) => Object.keys(t)));
      const kept: { type: string; contentType: string; size: number }[] = [];
      for (const [i, raw] of documents.entries()) {
        if (!isObject(raw)) throw invalidField(`defenseDocuments[${i}]`, 'must be an object');
        const type = requiredString(raw, 'defenseDocumentTypeCode');
        const contentType = requiredString(raw, 'contentType');
        const content = raw['content'];
        if (typeof content !== 'string' || content === '') throw requiredField(`defenseDocuments[${i}].content`);
        if (!known.has(type)) return refused(`Invalid defense document type code: ${type}`);
        const kind = CONTENT_TYPES[contentType];
        if (kind === undefined) return refused(`Unsupported content type: ${contentType}`);
        if (!/^[A-Za-z0-9+/]+={0,2}$/.test(content)) return refused(`Document ${i} is not valid base64`);
        const size = Buffer.byteLength(content, 'base64');
        if (size > ADYEN_DOCUMENT_LIMIT) return refused(`Document ${i} is ${size} bytes; at most ${ADYEN_DOCUMENT_LIMIT}`);
        if (detected[i] !== kind) return refused(`Document ${i} is not a ${contentType} file`);
        kept.push({ type, contentType, size });
      }
      // A document of a type supplied before replaces it.
      const replaced = new Set(kept.map((k) => k.type));
      dispute.documents = [...(dispute.documents ?? []).filter((x) => !replaced.has(x.type)), ...kept];
      return ok();
    }
    case 'defendDispute': {
      const closed = openToDefend(dispute);
      if (closed !== null) return refused(closed);
      const code = requiredString(body, 'defenseReasonCode');
      const types = SANDBOX_DEFENSE_REASONS[code];
      if (types === undefined) return refused(`Invalid defense reason code: ${code}`);
      if (!satisfied(types, new Set((dispute.documents ?? []).map((x) => x.type)))) return refused(`The defense documents required for ${code} were not supplied`);
      dispute.defendedWith = code;
      return ok();
    }
    case 'acceptDispute': {
      if (dispute.final) return refused(`dispute ${psp} is closed`);
      if (dispute.accepted === true || dispute.defendedWith != null) return refused(`dispute ${psp} was already ${dispute.accepted === true ? 'accepted' : 'defended'}`);
      dispute.accepted = true;
      // The merchant gave up its defense: the period is over, and a chargeback is lost.
      runDisputeSteps(ctx, payment.pspReference, psp, [{ eventCode: 'DISPUTE_DEFENSE_PERIOD_ENDED', disputeStatus: 'Accepted' }]);
      return ok();
    }
  }
}

/**
 * The issuer's answer to a defended chargeback (the control API's knob): won — the chargeback is
 * reversed and the issuer's time to respond runs out (CHARGEBACK_REVERSED, then
 * ISSUER_RESPONSE_TIMEFRAME_EXPIRED Won); lost — reversed, then charged back a second time
 * (SECOND_CHARGEBACK Lost).
 */
export function decideDefendedDispute(ctx: AdyenOperationContext, psp: string, outcome: 'won' | 'lost'): void {
  const found = find(ctx, psp);
  if (found === null) throw new RangeError(`no dispute ${psp}`);
  if (found.dispute.defendedWith == null || found.dispute.final) throw new RangeError(`dispute ${psp} is not a defended, open chargeback: only one is decided`);
  const steps = outcome === 'won'
    ? [{ eventCode: 'CHARGEBACK_REVERSED' }, { eventCode: 'ISSUER_RESPONSE_TIMEFRAME_EXPIRED' }]
    : [{ eventCode: 'CHARGEBACK_REVERSED' }, { eventCode: 'SECOND_CHARGEBACK' }];
  runDisputeSteps(ctx, found.payment.pspReference, psp, steps);
}
