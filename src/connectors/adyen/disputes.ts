// Answering disputes at Adyen through the official library's DisputesApi (DisputeService v30):
// the defense reasons Adyen gives for the dispute, supplyDefenseDocument per file and, on submit,
// defendDispute with the reason; acceptDispute. Adyen answers a refusal inside a 200
// (`disputeServiceResult.success: false`); a 4xx is a refusal too; anything else is unknown.
// Every call carries an idempotency key of its own, derived from the request's (a retry repeats
// the same calls under the same keys).

import { DisputeCallError } from '../contract.ts';
import type { DisputeDefenseOptions, DisputeEvidenceRequest, DisputeOperations } from '../contract.ts';
import type { AdyenClient } from './library.ts';
import { DisputesAPI } from './library.ts';
import { recordTransport } from './transport.ts';

interface ServiceResult {
  readonly disputeServiceResult?: { readonly success?: boolean; readonly errorMessage?: string };
}

function failure(error: unknown): DisputeCallError {
  const status = (error as { statusCode?: unknown }).statusCode;
  const message = error instanceof Error ? error.message : String(error);
  // 4xx but 408/409/429: Adyen refused the request as it is; the rest (5xx, resets, timeouts) may have done it.
  if (typeof status === 'number' && status >= 400 && status < 500 && ![408, 409, 429].includes(status)) return new DisputeCallError(true, `Adyen refused it (HTTP ${status}): ${message}`);
  return new DisputeCallError(false, `Adyen did not answer: ${message}`);
}

async function call<T extends ServiceResult>(what: string, run: () => Promise<T>): Promise<T> {
  const result = await recordTransport(run);
  if (!result.ok) throw failure(result.error);
  const service = result.value.disputeServiceResult;
  if (service?.success !== true) throw new DisputeCallError(true, `Adyen refused ${what}: ${service?.errorMessage ?? 'no reason given'}`);
  return result.value;
}

export function adyenDisputeOperations(client: AdyenClient, merchantAccountCode: string): DisputeOperations {
  const api = new DisputesAPI(client).DisputesApi;
  return {
    async defenseOptions(disputePspReference): Promise<DisputeDefenseOptions> {
      const answer = await call('the defense reasons', () => api.retrieveApplicableDefenseReasons({ disputePspReference, merchantAccountCode }));
      return {
        reasons: (answer.defenseReasons ?? []).map((r) => ({
          code: r.defenseReasonCode,
          satisfied: r.satisfied,
          documentTypes: (r.defenseDocumentTypes ?? []).map((t) => ({ code: t.defenseDocumentTypeCode, requirement: t.requirementLevel, supplied: t.available })),
        })),
        textFields: [],
        fileTypes: [],
      };
    },
    async submitEvidence(req: DisputeEvidenceRequest): Promise<void> {
      const disputePspReference = req.disputeRef;
      for (const [i, f] of req.files.entries()) {
        const defenseDocuments = [{ content: f.bytes.toString('base64'), contentType: f.contentType, defenseDocumentTypeCode: f.type }];
        await call(`the document ${f.fileId}`, () => api.supplyDefenseDocument({ defenseDocuments, disputePspReference, merchantAccountCode }, { idempotencyKey: `${req.idempotencyKey}-d${i}` }));
      }
      if (!req.submit) return;
      if (req.defenseReason === null) throw new DisputeCallError(true, 'Adyen defends a dispute with a defense reason');
      const defenseReasonCode = req.defenseReason;
      await call('the defense', () => api.defendDispute({ defenseReasonCode, disputePspReference, merchantAccountCode }, { idempotencyKey: `${req.idempotencyKey}-defend` }));
    },
    async accept(disputePspReference, idempotencyKey): Promise<void> {
      await call('the acceptance', () => api.acceptDispute({ disputePspReference, merchantAccountCode }, { idempotencyKey }));
    },
  };
}
