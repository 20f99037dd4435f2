// Disputes and files (issue 48): what the API takes and answers, as zod schemas (validated with,
// and the OpenAPI document generated from). Evidence text is refused when it holds a card number,
// like every free text the gateway takes.

import { z } from 'zod';
import { DISPUTE_STATUSES } from '../core/disputes.ts';
import { isId } from '../core/ids.ts';
import { withoutCardNumber } from './request-schemas.ts';

const timestamp = z.string().meta({ format: 'date-time' });

/** The largest file POST /v1/files takes: 4 MB (providers' own limits are at least this: Stripe 5 MB). */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;
export const FILE_TYPES = ['pdf', 'jpeg', 'png'] as const;
export type FileType = (typeof FILE_TYPES)[number];
export const CONTENT_TYPE_OF: Readonly<Record<FileType, string>> = { pdf: 'application/pdf', jpeg: 'image/jpeg', png: 'image/png' };

export const disputeResource = z
  .strictObject({
    id: z.string(),
    object: z.literal('dispute'),
    payment_id: z.string(),
    connector: z.string().meta({ description: 'The connector account the disputed payment was captured on.' }),
    status: z.enum(DISPUTE_STATUSES).meta({
      description: "Where the dispute is, by the provider's events: opened (nothing withdrawn yet: an inquiry, a notice), funds_withdrawn, funds_reinstated (back, may be withdrawn again), won, lost, closed (ended without moving money).",
    }),
    amount: z.int().meta({ description: 'Disputed amount, minor units.' }),
    currency: z.string(),
    withdrawn: z.int().meta({ description: 'What the provider holds back for it now, minor units.' }),
    reason: z.string().nullable().meta({ description: "The provider's reason (Stripe's dispute reason, Adyen's reason text)." }),
    evidence_due_by: timestamp.nullable().meta({ description: 'When the time to answer ends, as the provider said it (null: it did not say).' }),
    evidence: z.strictObject({
      sent_at: timestamp.nullable().meta({ description: 'When evidence was last sent to the provider (staged or submitted).' }),
      submitted_at: timestamp.nullable().meta({ description: 'When it was submitted (final: no more evidence is taken).' }),
      defense_reason: z.string().nullable().meta({ description: 'The defense reason it was submitted with (Adyen).' }),
    }),
    accepted_at: timestamp.nullable().meta({ description: 'When you accepted it (POST /v1/disputes/{id}/accept).' }),
    provider_reference: z.string(),
    provider_status: z.string().nullable().meta({ description: "The provider's own name for where it is (Stripe's status, Adyen's eventCode/disputeStatus)." }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Dispute' });
export type DisputeResource = z.output<typeof disputeResource>;

export const disputeList = z
  .strictObject({ object: z.literal('list'), data: z.array(disputeResource), has_more: z.boolean(), next_cursor: z.string().nullable() })
  .meta({ id: 'DisputeList' });

export const fileResource = z
  .strictObject({
    id: z.string(),
    object: z.literal('file'),
    purpose: z.literal('dispute_evidence'),
    type: z.enum(FILE_TYPES).meta({ description: 'What the bytes are (read from them, not from the declared type).' }),
    size: z.int().meta({ description: 'Bytes.' }),
    filename: z.string().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'File' });
export type FileResource = z.output<typeof fileResource>;

/** POST /v1/files after its multipart body is read (file-routes.ts): the idempotency fingerprint covers these, the bytes by their SHA-256. */
export const fileUploadBody = z.strictObject({
  purpose: z.literal('dispute_evidence', { error: 'purpose must be dispute_evidence' }),
  file: z.strictObject({ sha256: z.string(), size: z.int(), filename: z.string().nullable(), type: z.enum(FILE_TYPES) }),
});

export const defenseReasonsResource = z
  .strictObject({
    object: z.literal('dispute_defense_options'),
    dispute_id: z.string(),
    connector_type: z.enum(['stripe', 'adyen']),
    reasons: z.array(z.strictObject({
      code: z.string(),
      satisfied: z.boolean().meta({ description: 'The provider holds enough documents for this reason already.' }),
      document_types: z.array(z.strictObject({
        code: z.string(),
        requirement: z.string().meta({ description: "Adyen's level: Required, OneOrMore, Optional or AlternativeRequired." }),
        supplied: z.boolean(),
      })),
    })).meta({ description: 'Adyen: the defense reasons it accepts for this dispute, each with its document types (a file is given as one of them). Stripe: none.' }),
    fields: z.array(z.string()).meta({ description: 'Stripe: the evidence fields that take text (`fields`). Adyen: none.' }),
    file_types: z.array(z.string()).meta({ description: 'Stripe: the evidence fields that take a file (`files[].type`). Adyen: the document types of the reason chosen.' }),
  })
  .meta({ id: 'DisputeDefenseOptions' });
export type DefenseReasonsResource = z.output<typeof defenseReasonsResource>;

const evidenceText = withoutCardNumber(z.string().min(1).max(20_000));

export const evidenceBody = z
  .strictObject({
    defense_reason: z.string().min(1).max(100).optional().meta({ description: 'Adyen: one of the codes GET /v1/disputes/{id}/defense_reasons lists (required with submit). Stripe: not taken.' }),
    fields: z.record(z.string().min(1).max(100), evidenceText).optional().meta({ description: 'Stripe: evidence text by field name (customer_name, product_description, uncategorized_text, …). Adyen: not taken.' }),
    files: z.array(z.strictObject({
      file: z.string().refine((s) => isId('file', s), { message: 'must be a file id (file_…)' }),
      type: z.string().min(1).max(100).meta({ description: "Stripe: the evidence field (receipt, shipping_documentation, uncategorized_file, …). Adyen: the defense document type code." }),
    })).max(10).optional(),
    submit: z.boolean().meta({ description: 'true: submit it to the bank (final). false: send it to be kept with the dispute (Stripe stages it; Adyen keeps the documents) without defending yet.' }),
  })
  .meta({ id: 'DisputeEvidenceRequest' });
export type EvidenceBody = z.output<typeof evidenceBody>;

export const acceptBody = z.strictObject({}).meta({ id: 'DisputeAcceptRequest' });
