// Files a merchant uploads as dispute evidence: POST /v1/files (multipart/form-data: `purpose` =
// dispute_evidence and one `file`, at most 4 MB, a PDF, JPEG or PNG by its content — file-type
// reads the bytes' signature; the part's declared Content-Type is not trusted) and GET
// /v1/files/{id} (its metadata). The bytes are kept in the gateway's database (files.content)
// and sent to the dispute's provider with the evidence. Mounted before the /v1 JSON parser.

import { createHash } from 'node:crypto';
import Busboy from 'busboy';
import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { fileTypeFromBuffer } from 'file-type';
import { newId } from '../core/ids.ts';
import { findFileMeta, insertFile } from '../store/dispute-queries.ts';
import type { FileMeta } from '../store/dispute-queries.ts';
import type { ApiContext } from './api-context.ts';
import { fileUploadBody, MAX_FILE_BYTES } from './dispute-schemas.ts';
import type { FileResource, FileType } from './dispute-schemas.ts';
import { encodeResult, merchantIdOf, notFound, sendEncoded } from './http.ts';
import { idempotentPost } from './idempotent-post.ts';
import { ApiProblem } from './problems.ts';

/** Room for the form's other parts and boundaries around the file. */
const ENVELOPE_BYTES = 64 * 1024;
const TYPE_OF_EXT: Readonly<Record<string, FileType>> = { pdf: 'pdf', jpg: 'jpeg', png: 'png' };

function fieldProblem(path: string, message: string): ApiProblem {
  return new ApiProblem('validation_error', `${path}: ${message}`, [{ path, message }]);
}

/** A filename PostgreSQL can store and a person can read, or null. */
function storableName(name: string | undefined): string | null {
  // Control characters (NUL included) and lone surrogates are bytes PostgreSQL's text cannot take.
  if (name === undefined || name === '' || /\p{Cc}|\p{Cs}/u.test(name)) return null;
  return name.slice(0, 255);
}

interface Upload {
  readonly fields: Record<string, string>;
  readonly file: { readonly bytes: Buffer; readonly filename: string | null } | null;
  readonly tooBig: boolean;
}

function readMultipart(req: Request): Promise<Upload> {
  return new Promise((resolve, reject) => {
    let bb: Busboy.Busboy;
    try {
      bb = Busboy({ headers: req.headers, limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 4, fieldSize: 1024, parts: 5 } });
    } catch {
      reject(fieldProblem('file', 'POST /v1/files takes multipart/form-data with the fields purpose and file'));
      return;
    }
    const fields: Record<string, string> = {};
    let file: Upload['file'] = null;
    let tooBig = false;
    bb.on('field', (name, value) => {
      fields[name] = value;
    });
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => {
        tooBig = true;
      });
      stream.on('close', () => {
        if (name === 'file') file = { bytes: Buffer.concat(chunks), filename: storableName(info.filename) };
      });
    });
    bb.on('error', () => reject(fieldProblem('file', 'the multipart body is malformed')));
    bb.on('close', () => resolve({ fields, file, tooBig }));
    req.pipe(bb);
  });
}

/**
 * Reads the upload into `req.body` as what the idempotency fingerprint covers (purpose; the file
 * by its SHA-256, size, name and type) and keeps the bytes for the handler. Every refusal is a
 * validation problem: nothing is stored.
 */
async function parseUpload(req: Request, res: Response, next: NextFunction): Promise<void> {
  if (!/^multipart\/form-data/i.test(req.get('content-type') ?? '')) throw fieldProblem('file', 'POST /v1/files takes multipart/form-data with the fields purpose and file');
  const declared = Number(req.get('content-length') ?? '0');
  if (declared > MAX_FILE_BYTES + ENVELOPE_BYTES) {
    // Refused before reading: the connection is closed rather than drained.
    res.set('Connection', 'close');
    throw fieldProblem('file', `the file is larger than ${MAX_FILE_BYTES} bytes (4 MB)`);
  }
  const upload = await readMultipart(req);
  if (upload.tooBig) throw fieldProblem('file', `the file is larger than ${MAX_FILE_BYTES} bytes (4 MB)`);
  if (upload.file === null || upload.file.bytes.length === 0) throw fieldProblem('file', 'a non-empty file part named "file" is required');
  const detected = await fileTypeFromBuffer(upload.file.bytes);
  const type = detected === undefined ? undefined : TYPE_OF_EXT[detected.ext];
  if (type === undefined) throw fieldProblem('file', `the file's content is not a PDF, JPEG or PNG${detected === undefined ? '' : ` (it is ${detected.mime})`}`);
  req.body = {
    ...upload.fields,
    file: { sha256: createHash('sha256').update(upload.file.bytes).digest('hex'), size: upload.file.bytes.length, filename: upload.file.filename, type },
  };
  res.locals['fileBytes'] = upload.file.bytes;
  next();
}

export function fileResource(f: FileMeta): FileResource {
  return { id: f.id, object: 'file', purpose: 'dispute_evidence', type: f.type as FileType, size: f.size, filename: f.filename, created_at: f.createdAt.toISOString() };
}

export function fileRoutes(ctx: ApiContext): Router {
  const router = express.Router();
  const db = ctx.rt.database.db;

  // The handler is made per request: it closes over the bytes parseUpload kept (the idempotent
  // execution sees the parsed body only).
  router.post('/v1/files', parseUpload, (req, res, next) => idempotentPost(ctx.idempotency, fileUploadBody, async ({ merchantId, body, claim }) => {
    const bytes = res.locals['fileBytes'] as Buffer;
    // Fixed by the key: a retry after a crash writes the same row once.
    const id = newId('file', claim.createdAt.getTime(), createHash('sha256').update(`${merchantId}\u0000${claim.key}`).digest());
    const createdAt = ctx.rt.now();
    await insertFile(db, { id, merchantId, purpose: body.purpose, type: body.file.type, size: body.file.size, sha256: body.file.sha256, filename: body.file.filename, content: bytes, createdAt });
    const meta = await findFileMeta(db, merchantId, id);
    return { status: 201, body: fileResource(meta!) };
  })(req, res, next));

  router.get('/v1/files/:id', async (req, res) => {
    const f = await findFileMeta(db, merchantIdOf(res), req.params.id);
    if (f === null) throw notFound('file', req.params.id);
    sendEncoded(res, encodeResult({ status: 200, body: fileResource(f) }));
  });

  return router;
}
