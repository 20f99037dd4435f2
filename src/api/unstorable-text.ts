// PostgreSQL cannot store U+0000 in text or jsonb: a NUL anywhere in a body, or in a path segment
// (`%00`), would reach the database and fail there as a 500. Refused up front instead, as a 400
// naming where it was, before anything is read or written.

import type { NextFunction, Request, Response } from 'express';
import { ApiProblem } from './problems.ts';

const MAX_DEPTH = 64;

/** The path of the first key or string value holding a NUL, or null. */
export function nulPath(value: unknown, path: readonly string[] = [], depth = 0): string | null {
  const here = (): string => (path.length === 0 ? '(body)' : path.map((k) => (k === '' ? '""' : k.replace(/\0/g, '\\u0000'))).join('.'));
  if (typeof value === 'string') return value.includes('\0') ? here() : null;
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return null;
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\0')) return here() === '(body)' ? k.replace(/\0/g, '\\u0000') : `${here()}.${k.replace(/\0/g, '\\u0000')}`;
    const inner = nulPath(v, [...path, k], depth + 1);
    if (inner !== null) return inner;
  }
  return null;
}

function decodedPath(req: Request): string {
  try {
    return decodeURIComponent(req.path);
  } catch {
    return req.path; // malformed escapes are the router's to refuse
  }
}

export function refuseUnstorableText() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (decodedPath(req).includes('\0')) throw new ApiProblem('not_found', 'no such resource (the path holds a NUL character)');
    const at = nulPath(req.body);
    if (at !== null) throw new ApiProblem('validation_error', `${at}: NUL characters (\\u0000) are not allowed`, [{ path: at, message: 'NUL characters (\\u0000) are not allowed' }]);
    next();
  };
}
