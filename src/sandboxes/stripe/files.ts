// Stripe's Files API for dispute evidence: POST /v1/files (multipart/form-data, `purpose` and
// `file`, sent to files.stripe.com — stripe-node sends it to the configured host when one is set),
// GET /v1/files/:id. The sandbox keeps what the file is (purpose, type, size, a SHA-256 of its
// bytes), not its bytes: nothing in the sandbox reads a file back. Its type is what the bytes are
// (file-type reads their signature), whatever the part's declared Content-Type says.

import { createHash } from 'node:crypto';
import Busboy from 'busboy';
import { fileTypeFromBuffer } from 'file-type';
import type { OperationContext } from './context.ts';
import { invalidParam, missingParam, resourceMissing } from './errors.ts';
import type { FormParams } from './form-encoding.ts';
import { stripeId } from './ids.ts';
import type { StripeObject } from './objects.ts';
import { assertKnownParams, readString } from './params.ts';
import type { FileRecord } from './state.ts';

/** Purposes the sandbox takes, with the types Stripe accepts for each (docs.stripe.com/file-upload). */
const PURPOSE_TYPES: Readonly<Record<string, readonly string[]>> = {
  dispute_evidence: ['pdf', 'jpg', 'png'],
};

/** Stripe's size limit for a dispute evidence file (5 MB; docs.stripe.com/file-upload, not checked against live). */
export const STRIPE_EVIDENCE_FILE_LIMIT = 5 * 1024 * 1024;

const EXT: Readonly<Record<string, string>> = { pdf: 'pdf', jpg: 'jpg', png: 'png' };

/**
 * The multipart body as parameters: the text fields as they are, the `file` part as
 * `{filename, size, sha256, type}` (type from its bytes: pdf, jpg, png, or "unknown"), so the
 * idempotency fingerprint covers the file without keeping it.
 */
export async function multipartParams(rawBody: Buffer, contentType: string): Promise<FormParams> {
  const params: FormParams = {};
  const files: { field: string; filename: string; data: Buffer }[] = [];
  await new Promise<void>((resolve, reject) => {
    let bb: Busboy.Busboy;
    try {
      bb = Busboy({ headers: { 'content-type': contentType }, limits: { files: 1, fields: 20 } });
    } catch (err) {
      reject(invalidParam('body', `malformed multipart body: ${(err as Error).message}`));
      return;
    }
    bb.on('field', (name, value) => {
      params[name] = value;
    });
    bb.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => files.push({ field, filename: info.filename ?? '', data: Buffer.concat(chunks) }));
    });
    bb.on('error', (err) => reject(invalidParam('body', `malformed multipart body: ${(err as Error).message}`)));
    bb.on('close', () => resolve());
    bb.end(rawBody);
  });
  for (const f of files) {
    const detected = await fileTypeFromBuffer(f.data);
    params[f.field] = {
      filename: f.filename, size: String(f.data.length), sha256: createHash('sha256').update(f.data).digest('hex'),
      type: detected === undefined ? 'unknown' : (EXT[detected.ext] ?? detected.ext),
    };
  }
  return params;
}

export function createFile(ctx: OperationContext, params: FormParams): StripeObject {
  assertKnownParams(params, new Set(['purpose', 'file', 'file_link_data', 'expand']));
  const purpose = readString(params, 'purpose');
  if (purpose === undefined) throw missingParam('purpose');
  const allowed = PURPOSE_TYPES[purpose];
  if (allowed === undefined) throw invalidParam('purpose', `Invalid purpose: ${purpose}. The sandbox takes: ${Object.keys(PURPOSE_TYPES).join(', ')}.`);
  const file = params['file'];
  if (file === undefined || typeof file === 'string' || Array.isArray(file)) throw missingParam('file');
  const text = (name: string): string => (typeof file[name] === 'string' ? file[name] : '');
  const size = Number(text('size'));
  const type = text('type');
  if (size === 0) throw invalidParam('file', 'The file is empty.');
  if (size > STRIPE_EVIDENCE_FILE_LIMIT) throw invalidParam('file', `The file is ${size} bytes; files for purpose ${purpose} may be at most ${STRIPE_EVIDENCE_FILE_LIMIT} bytes.`);
  if (!allowed.includes(type)) throw invalidParam('file', `The file's content is not one of the types allowed for purpose ${purpose} (${allowed.join(', ')}).`);
  const record: FileRecord = { id: stripeId('file'), created: ctx.now, purpose, type, size, filename: text('filename'), sha256: text('sha256') };
  ctx.state.files.set(record.id, record);
  return renderFile(record);
}

export function retrieveFile(ctx: OperationContext, id: string): StripeObject {
  const file = ctx.state.files.get(id);
  if (file === undefined) throw resourceMissing('file', id);
  return renderFile(file);
}

export function renderFile(f: FileRecord): StripeObject {
  return {
    id: f.id, object: 'file', created: f.created, expires_at: null, filename: f.filename,
    links: { object: 'list', data: [], has_more: false, url: `/v1/file_links?file=${f.id}` },
    purpose: f.purpose, size: f.size, title: null, type: f.type, url: `https://files.stripe.com/v1/files/${f.id}/contents`,
  };
}
