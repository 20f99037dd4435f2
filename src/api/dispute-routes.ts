// Disputes: list and read them, see what the provider accepts as a defense, send evidence, accept.
// The provider's events decide a dispute's status and money (src/webhooks/inbound/disputes.ts);
// these routes answer it (src/app/dispute-service.ts).

import express from 'express';
import type { Router } from 'express';
import { acceptDispute, disputeDefenseOptions, DisputeActionError, sendDisputeEvidence } from '../app/dispute-service.ts';
import { findDispute, listDisputes } from '../store/dispute-queries.ts';
import type { DisputeRow } from '../store/dispute-queries.ts';
import type { ApiContext } from './api-context.ts';
import { acceptBody, evidenceBody } from './dispute-schemas.ts';
import { pageRequest, parseQuery, readPage } from './list-params.ts';
import { disputeListParams } from './list-queries.ts';
import type { DefenseReasonsResource, DisputeResource } from './dispute-schemas.ts';
import { encodeResult, livemodeScopeOf, merchantIdOf, notFound, sendEncoded } from './http.ts';
import { idempotentPost } from './idempotent-post.ts';
import { ApiProblem } from './problems.ts';
import { pageResource } from './serializers.ts';

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

export function disputeResource(d: DisputeRow): DisputeResource {
  return {
    id: d.id, object: 'dispute', payment_id: d.paymentId, connector: d.connector, status: d.status as DisputeResource['status'], amount: d.amount, currency: d.currency,
    withdrawn: d.withdrawn, reason: d.reason, evidence_due_by: iso(d.evidenceDueBy),
    evidence: { sent_at: iso(d.evidenceSentAt), submitted_at: iso(d.evidenceSubmittedAt), defense_reason: d.defenseReason },
    accepted_at: iso(d.acceptedAt), provider_reference: d.providerRef, provider_status: d.providerStatus,
    created_at: d.createdAt.toISOString(), updated_at: d.updatedAt.toISOString(),
  };
}

/** A dispute action's failure as the merchant's problem. */
function problemOf(err: unknown): unknown {
  if (!(err instanceof DisputeActionError)) return err;
  const f = err.failure;
  switch (f.kind) {
    case 'not_found':
      return new ApiProblem('not_found', f.message);
    case 'invalid':
      return new ApiProblem('validation_error', `${f.field}: ${f.message}`, [{ path: f.field, message: f.message }]);
    case 'not_open':
      return new ApiProblem('dispute_not_open', f.message);
    case 'refused':
      return new ApiProblem('dispute_action_refused', f.message);
    case 'unavailable':
      // Not stored with the key: a retry with the same Idempotency-Key repeats the same provider calls under the same keys.
      return new ApiProblem('service_unavailable', `${f.message}; retry with the same Idempotency-Key`, undefined, 2);
  }
}

async function answering<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw problemOf(err);
  }
}

export function disputeRoutes(ctx: ApiContext): Router {
  const router = express.Router();
  const db = ctx.rt.database.db;

  /** A dispute of the other mode's payment is not found for this key (a payment's mode never changes). */
  const inKeysMode = async (merchantId: string, id: string, livemode: boolean | null): Promise<void> => {
    if ((await findDispute(db, merchantId, id, livemode)) === null) throw notFound('dispute', id);
  };

  router.get('/v1/disputes', async (req, res) => {
    const page = pageRequest(parseQuery(disputeListParams, req.query));
    const found = await readPage('dispute', () => listDisputes(db, merchantIdOf(res), livemodeScopeOf(res), page));
    sendEncoded(res, encodeResult({ status: 200, body: pageResource(found.data.map(disputeResource), found.hasMore, page) }));
  });

  router.get('/v1/disputes/:id', async (req, res) => {
    const d = await findDispute(db, merchantIdOf(res), req.params.id, livemodeScopeOf(res));
    if (d === null) throw notFound('dispute', req.params.id);
    sendEncoded(res, encodeResult({ status: 200, body: disputeResource(d) }));
  });

  router.get('/v1/disputes/:id/defense_reasons', async (req, res) => {
    await inKeysMode(merchantIdOf(res), req.params.id, livemodeScopeOf(res));
    const { row, connectorType, options } = await answering(() => disputeDefenseOptions(ctx.rt, merchantIdOf(res), req.params.id));
    const body: DefenseReasonsResource = {
      object: 'dispute_defense_options', dispute_id: row.id, connector_type: connectorType === 'adyen' ? 'adyen' : 'stripe',
      reasons: options.reasons.map((r) => ({ code: r.code, satisfied: r.satisfied, document_types: r.documentTypes.map((t) => ({ code: t.code, requirement: t.requirement, supplied: t.supplied })) })),
      fields: [...options.textFields],
      file_types: options.fileTypes.length > 0 ? [...options.fileTypes] : [...new Set(options.reasons.flatMap((r) => r.documentTypes.map((t) => t.code)))],
    };
    sendEncoded(res, encodeResult({ status: 200, body }));
  });

  router.post('/v1/disputes/:id/evidence', idempotentPost(ctx.idempotency, evidenceBody, async ({ merchantId, body, params, claim, livemode }) => {
    await inKeysMode(merchantId, params['id'] ?? '', livemode);
    const row = await answering(() => sendDisputeEvidence(ctx.rt, merchantId, params['id'] ?? '', {
      defenseReason: body.defense_reason ?? null, fields: body.fields ?? {}, files: body.files ?? [], submit: body.submit,
    }, claim.key));
    return { status: 200, body: disputeResource(row) };
  }));

  router.post('/v1/disputes/:id/accept', idempotentPost(ctx.idempotency, acceptBody, async ({ merchantId, params, claim, livemode }) => {
    await inKeysMode(merchantId, params['id'] ?? '', livemode);
    const row = await answering(() => acceptDispute(ctx.rt, merchantId, params['id'] ?? '', claim.key));
    return { status: 200, body: disputeResource(row) };
  }));

  return router;
}
