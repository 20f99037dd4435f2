// Answering disputes at Stripe through the official SDK: each evidence file uploaded to the Files
// API (purpose dispute_evidence), then disputes.update({evidence, submit}); disputes.close to
// accept. Stripe has no defense reasons: its evidence is fields, text or file (stripe@23.1.0
// DisputeUpdateParams.Evidence). Every call carries an idempotency key of its own, derived from the
// request's, so a retry repeats the same calls and Stripe replays their answers.

import type Stripe from 'stripe';
import { DisputeCallError } from '../contract.ts';
import type { DisputeDefenseOptions, DisputeEvidenceRequest, DisputeOperations } from '../contract.ts';

/** Evidence fields that take a file id (the type a merchant gives each file as). */
export const STRIPE_EVIDENCE_FILE_FIELDS = [
  'cancellation_policy', 'customer_communication', 'customer_signature', 'duplicate_charge_documentation', 'receipt',
  'refund_policy', 'service_documentation', 'shipping_documentation', 'uncategorized_file',
] as const;

/** Evidence fields that take text. */
export const STRIPE_EVIDENCE_TEXT_FIELDS = [
  'access_activity_log', 'billing_address', 'cancellation_policy_disclosure', 'cancellation_rebuttal', 'customer_email_address',
  'customer_name', 'customer_purchase_ip', 'duplicate_charge_explanation', 'duplicate_charge_id', 'product_description',
  'refund_policy_disclosure', 'refund_refusal_explanation', 'service_date', 'shipping_address', 'shipping_carrier',
  'shipping_date', 'shipping_tracking_number', 'uncategorized_text',
] as const;

function failure(error: unknown): DisputeCallError {
  const e = error as { statusCode?: unknown; message?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(error);
  const status = e.statusCode;
  // 4xx but 409 (the key still running) and 429: Stripe refused the request as it is.
  if (typeof status === 'number' && status >= 400 && status < 500 && status !== 409 && status !== 429) return new DisputeCallError(true, `Stripe refused it (HTTP ${status}): ${message}`);
  return new DisputeCallError(false, `Stripe did not answer: ${message}`);
}

async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw failure(error);
  }
}

export function stripeDisputeOperations(stripe: Stripe): DisputeOperations {
  return {
    defenseOptions(): Promise<DisputeDefenseOptions> {
      return Promise.resolve({ reasons: [], textFields: [...STRIPE_EVIDENCE_TEXT_FIELDS], fileTypes: [...STRIPE_EVIDENCE_FILE_FIELDS] });
    },
    async submitEvidence(req: DisputeEvidenceRequest): Promise<void> {
      const evidence: Record<string, string> = { ...req.fields };
      for (const [i, f] of req.files.entries()) {
        const uploaded = await call(() => stripe.files.create(
          { purpose: 'dispute_evidence', file: { data: f.bytes, name: `${f.fileId}.${f.contentType.split('/')[1] ?? 'bin'}`, type: f.contentType } },
          { idempotencyKey: `${req.idempotencyKey}-f${i}` },
        ));
        evidence[f.type] = uploaded.id;
      }
      await call(() => stripe.disputes.update(req.disputeRef, { evidence: evidence, submit: req.submit }, { idempotencyKey: `${req.idempotencyKey}-update` }));
    },
    async accept(disputeRef, idempotencyKey): Promise<void> {
      await call(() => stripe.disputes.close(disputeRef, {}, { idempotencyKey }));
    },
  };
}
