// How a merchant answers a Stripe dispute: POST /v1/disputes/:id (evidence, staged or submitted)
// and POST /v1/disputes/:id/close (accept it); and how the issuer later decides a submitted one
// (decideDispute, driven from the control API). Submitting moves the dispute to under_review
// (warning_under_review for an inquiry) with charge.dispute.updated; closing a chargeback loses it
// and an inquiry ends warning_closed, with charge.dispute.closed. As in Stripe's test mode, evidence
// submitted with uncategorized_text `winning_evidence` / `losing_evidence` is decided at once.

import type { OperationContext } from './context.ts';
import { invalidParam, resourceMissing, stateError, unknownParam } from './errors.ts';
import type { FormParams } from './form-encoding.ts';
import { renderDispute } from './objects.ts';
import type { StripeObject } from './objects.ts';
import { assertKnownParams, readBoolean, readMetadata } from './params.ts';
import { advanceDispute } from './refunds.ts';
import type { DisputeRecord } from './state.ts';

/** The evidence fields of stripe@23.1.0 (DisputeUpdateParams.Evidence) that take a file id (purpose dispute_evidence). */
export const STRIPE_EVIDENCE_FILE_FIELDS: readonly string[] = [
  'cancellation_policy', 'customer_communication', 'customer_signature', 'duplicate_charge_documentation', 'receipt',
  'refund_policy', 'service_documentation', 'shipping_documentation', 'uncategorized_file',
];

/** The evidence fields that take text. */
export const STRIPE_EVIDENCE_TEXT_FIELDS: readonly string[] = [
  'access_activity_log', 'billing_address', 'cancellation_policy_disclosure', 'cancellation_rebuttal', 'customer_email_address',
  'customer_name', 'customer_purchase_ip', 'duplicate_charge_explanation', 'duplicate_charge_id', 'product_description',
  'refund_policy_disclosure', 'refund_refusal_explanation', 'service_date', 'shipping_address', 'shipping_carrier',
  'shipping_date', 'shipping_tracking_number', 'uncategorized_text',
];

/** "The combined character count of all fields is limited to 150,000" (DisputeUpdateParams.evidence). */
const MAX_EVIDENCE_CHARACTERS = 150_000;

const OPEN_FOR_EVIDENCE: Readonly<Record<string, string>> = { needs_response: 'under_review', warning_needs_response: 'warning_under_review' };

function findDispute(ctx: OperationContext, id: string): DisputeRecord {
  const dispute = ctx.state.disputes.get(id);
  if (dispute === undefined) throw resourceMissing('dispute', id);
  return dispute;
}

function readEvidence(ctx: OperationContext, params: FormParams): Record<string, string> {
  const raw = params['evidence'];
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalidParam('evidence', 'Invalid hash: evidence must be an object.');
  const out: Record<string, string> = {};
  let characters = 0;
  for (const [field, value] of Object.entries(raw)) {
    const param = `evidence[${field}]`;
    if (!STRIPE_EVIDENCE_FILE_FIELDS.includes(field) && !STRIPE_EVIDENCE_TEXT_FIELDS.includes(field)) throw unknownParam(param);
    if (typeof value !== 'string') throw invalidParam(param, 'Invalid string.');
    if (STRIPE_EVIDENCE_FILE_FIELDS.includes(field)) {
      const file = ctx.state.files.get(value);
      if (file === undefined) throw invalidParam(param, `No such file upload: '${value}'`, 'resource_missing');
      if (file.purpose !== 'dispute_evidence') throw invalidParam(param, `The file ${value} was not uploaded with purpose dispute_evidence.`);
    } else {
      characters += value.length;
    }
    out[field] = value;
  }
  if (characters > MAX_EVIDENCE_CHARACTERS) throw invalidParam('evidence', `The combined character count of the evidence (${characters}) is more than ${MAX_EVIDENCE_CHARACTERS}.`);
  return out;
}

/** POST /v1/disputes/:id — evidence merged over what was staged; submit (default true) sends it to the bank. */
export function updateDispute(ctx: OperationContext, id: string, params: FormParams): StripeObject {
  assertKnownParams(params, new Set(['evidence', 'submit', 'metadata', 'expand']));
  const dispute = findDispute(ctx, id);
  const evidence = readEvidence(ctx, params);
  const submit = readBoolean(params, 'submit') ?? true;
  readMetadata(params, 'metadata');
  const next = OPEN_FOR_EVIDENCE[dispute.status];
  if (next === undefined) {
    throw stateError('dispute_not_updatable', `This dispute is ${dispute.status}: its evidence can no longer be updated${(dispute.submissionCount ?? 0) > 0 ? ' (it was already submitted)' : ''}.`);
  }
  const previous: StripeObject = { evidence: renderDispute(dispute, ctx.state)['evidence'] };
  dispute.evidence = { ...dispute.evidence, ...evidence };
  if (!submit) {
    ctx.emit('charge.dispute.updated', renderDispute(dispute, ctx.state), previous);
    return renderDispute(dispute, ctx.state);
  }
  dispute.submissionCount = (dispute.submissionCount ?? 0) + 1;
  previous['status'] = dispute.status;
  dispute.status = next;
  ctx.emit('charge.dispute.updated', renderDispute(dispute, ctx.state), previous);
  // Stripe's test mode: these texts decide a chargeback right after it is submitted.
  const text = dispute.evidence['uncategorized_text'];
  if (next === 'under_review' && (text === 'winning_evidence' || text === 'losing_evidence')) advanceDispute(ctx, id, text === 'winning_evidence' ? 'won' : 'lost');
  return renderDispute(dispute, ctx.state);
}

/** POST /v1/disputes/:id/close — the merchant accepts: a chargeback is lost, an inquiry closed. */
export function closeOpenDispute(ctx: OperationContext, id: string, params: FormParams): StripeObject {
  assertKnownParams(params, new Set(['expand']));
  const dispute = findDispute(ctx, id);
  if (dispute.status === 'needs_response' || dispute.status === 'under_review') return advanceDispute(ctx, id, 'lost');
  if (dispute.status === 'warning_needs_response' || dispute.status === 'warning_under_review') return advanceDispute(ctx, id, 'warning_closed');
  throw stateError('dispute_already_closed', `This dispute is already closed (${dispute.status}).`);
}

/** The issuer's decision on submitted evidence (the control API's knob): won or lost, with Stripe's own events. */
export function decideDispute(ctx: OperationContext, id: string, outcome: 'won' | 'lost'): StripeObject {
  const dispute = findDispute(ctx, id);
  if (dispute.status !== 'under_review') throw new RangeError(`dispute ${id} is ${dispute.status}: only a chargeback whose evidence was submitted (under_review) is decided`);
  return advanceDispute(ctx, id, outcome);
}
