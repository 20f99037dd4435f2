// PostgreSQL cannot store U+0000 in text or jsonb, and stores text only as UTF-8 (an unpaired
// surrogate has no UTF-8 form; jsonb refuses its \ud800 escape). Such input anywhere — the path,
// the query, a JSON or form body, a provider's raw webhook — would reach the database and fail there
// as a 500 whose log quoted the statement's parameters (a customer's return: page URL, PaRes, return
// URL). It is refused up front with a 400 naming where it was, on every route, before anything is
// read or written. Invalid bytes and malformed percent-escapes are refused the same way: what they
// decode to is not text the gateway can keep.

import type { NextFunction, Request, Response } from 'express';
import { ApiProblem } from './problems.ts';

const MAX_DEPTH = 64;
const NUL_MESSAGE = 'NUL characters (\\u0000) are not allowed';
const SURROGATE_MESSAGE = 'not valid UTF-8 text (an unpaired surrogate)';
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/** Why this string cannot be stored, or null. */
export function unstorableReason(s: string): string | null {
  if (s.includes('\0')) return NUL_MESSAGE;
  return UNPAIRED_SURROGATE.test(s) ? SURROGATE_MESSAGE : null;
}

export interface UnstorableAt {
  readonly path: string;
  readonly message: string;
}

const shown = (k: string): string => (k === '' ? '""' : k.replace(/\0/g, '\\u0000').replace(/\p{Cs}/gu, '\\ufffd'));

/** The first key or string value that cannot be stored, with where it is ("(body)" for the whole), or null. */
export function unstorablePath(value: unknown, path: readonly string[] = [], depth = 0): UnstorableAt | null {
  const here = (): string => (path.length === 0 ? '(body)' : path.map(shown).join('.'));
  if (typeof value === 'string') {
    const message = unstorableReason(value);
    return message === null ? null : { path: here(), message };
  }
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return null;
  for (const [k, v] of Object.entries(value)) {
    const message = unstorableReason(k);
    if (message !== null) return { path: [...path, k].map(shown).join('.'), message };
    const inner = unstorablePath(v, [...path, k], depth + 1);
    if (inner !== null) return inner;
  }
  return null;
}

function refusal(at: UnstorableAt): ApiProblem {
  return new ApiProblem('validation_error', `${at.path}: ${at.message}`, [at]);
}

/** A percent-encoded component, decoded, or why it cannot be (`+` is a space in queries and forms). */
function decodedComponent(raw: string, plusIsSpace: boolean): { ok: true; text: string } | { ok: false; message: string } {
  try {
    const text = decodeURIComponent(plusIsSpace ? raw.replace(/\+/g, ' ') : raw);
    const message = unstorableReason(text);
    return message === null ? { ok: true, text } : { ok: false, message };
  } catch {
    return { ok: false, message: 'a malformed percent-escape, or bytes that are not UTF-8' };
  }
}

/** The first name or value of `a=b&c=d` text that does not decode to storable text, or null. */
export function unstorableInForm(text: string, where: string): UnstorableAt | null {
  for (const pair of text.split('&')) {
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const name = decodedComponent(rawName, true);
    if (!name.ok) return { path: where, message: `a parameter name holds ${name.message}` };
    const value = decodedComponent(eq === -1 ? '' : pair.slice(eq + 1), true);
    // Named only when the name is plain: a hostile name is not echoed.
    if (!value.ok) return { path: /^[\w.[\]-]{1,40}$/.test(name.text) ? `${where}.${name.text}` : where, message: value.message };
  }
  return null;
}

/** The request target (path and query), checked before any route: a bad one never reaches a handler. */
export function unstorableInTarget(target: string): UnstorableAt | null {
  // Node's parser already refuses raw control and non-ASCII bytes; anything else is percent-encoded.
  if (!/^[\x21-\x7e]*$/.test(target)) return { path: '(path)', message: 'the request target must be printable ASCII (percent-encode the rest)' };
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  for (const segment of path.split('/')) {
    const decoded = decodedComponent(segment, false);
    if (!decoded.ok) return { path: '(path)', message: `a path segment holds ${decoded.message}` };
  }
  return q === -1 ? null : unstorableInForm(target.slice(q + 1), 'query');
}

/** First on every route: a path or query that cannot be decoded to storable text is a 400. */
export function refuseUnstorableTarget() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const at = unstorableInTarget(req.originalUrl);
    if (at !== null) throw refusal(at);
    next();
  };
}

/** After a JSON or form parser: the parsed body's keys and strings. */
export function refuseUnstorableText() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const at = unstorablePath(req.body);
    if (at !== null) throw refusal(at);
    next();
  };
}

/** What body-parser's `verify` throws: a 400 it passes on, mapped to a validation_error by the app's error handler. */
export class UnstorableBodyError extends Error {
  override readonly name = 'UnstorableBodyError';
  readonly status = 400;
  readonly expose = true;
  readonly type = 'entity.unstorable';
  constructor(readonly at: UnstorableAt) {
    super(`${at.path}: ${at.message}`);
  }

  toProblem(): ApiProblem {
    return refusal(this.at);
  }
}

/** The body as text, or why it is not text (a byte sequence invalid in its charset, or a charset this check cannot read). */
function decodeStrictly(buf: Buffer, encoding: string | null): { ok: true; text: string } | { ok: false; message: string } {
  const charset = encoding ?? 'utf-8';
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(charset, { fatal: true });
  } catch {
    return { ok: false, message: `the ${charset} charset is not accepted: send UTF-8` };
  }
  try {
    return { ok: true, text: decoder.decode(buf) };
  } catch {
    return { ok: false, message: `not valid ${charset} text` };
  }
}

/**
 * body-parser's `verify` for the bodies the app reads: the bytes must be text in their charset
 * (UTF-8 unless stated) without NUL. What escapes decode to (\u0000 in JSON, %00 in a form) is
 * refuseUnstorableText()'s, after the parser.
 */
export function verifyStorableBody(_req: Request, _res: Response, buf: Buffer, encoding: string | null): void {
  const decoded = decodeStrictly(buf, encoding);
  if (!decoded.ok) throw new UnstorableBodyError({ path: '(body)', message: decoded.message });
  const message = unstorableReason(decoded.text);
  if (message !== null) throw new UnstorableBodyError({ path: '(body)', message });
}

/** The same for a form, whose UTF-8 escapes must decode to storable text too (the parser would keep `%C3%28` as it is). */
export function verifyStorableForm(req: Request, res: Response, buf: Buffer, encoding: string | null): void {
  verifyStorableBody(req, res, buf, encoding);
  if ((encoding ?? 'utf-8') !== 'utf-8') return;
  const at = unstorableInForm(buf.toString('utf8'), '(body)');
  if (at !== null) throw new UnstorableBodyError(at);
}

/**
 * The same for a provider's raw webhook body, which no parser of ours reads before it is stored:
 * UTF-8 bytes without NUL, and, when it is JSON, no escape to an unstorable string (its normalized
 * event is stored as jsonb).
 */
export function verifyStorableRawBody(req: Request, res: Response, buf: Buffer): void {
  if (typeof req.is('application/x-www-form-urlencoded') === 'string') verifyStorableForm(req, res, buf, null);
  else verifyStorableBody(req, res, buf, null);
  const text = buf.toString('utf8');
  if (!/^\s*[[{]/.test(text)) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return; // not JSON after all: its connector refuses it, and nothing is stored
  }
  const at = unstorablePath(parsed);
  if (at !== null) throw new UnstorableBodyError(at);
}
