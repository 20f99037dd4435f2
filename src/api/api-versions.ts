// API versions by date (issue 48; the list: src/resources/api-version.ts). A request names one with
// the Switchyard-Version header; without it the merchant's pinned version applies (switchyard
// merchants set-version), else the latest. Every answer says which version it is in, and every
// merchant event carries the merchant's pinned version. A new version appends to the list, and the
// serializers branch on res.locals.apiVersion where a shape changed (docs/changelog.md).

import type { NextFunction, Request, Response } from 'express';
import { API_VERSIONS, isApiVersion, LATEST_API_VERSION } from '../resources/api-version.ts';
import type { ApiVersion } from '../resources/api-version.ts';
import { ApiProblem } from './problems.ts';

export const VERSION_HEADER = 'Switchyard-Version';

/** The version a request is answered in: its header, else the merchant's pinned one, else the latest. */
export function requestedVersion(header: string | undefined, pinned: string | null): ApiVersion | ApiProblem {
  if (header !== undefined) {
    const v = header.trim();
    if (!isApiVersion(v)) {
      const message = `${VERSION_HEADER} ${JSON.stringify(v.slice(0, 40))} is not an API version; known: ${API_VERSIONS.join(', ')}`;
      return new ApiProblem('validation_error', message, [{ path: VERSION_HEADER, message }]);
    }
    return v;
  }
  return pinned !== null && isApiVersion(pinned) ? pinned : LATEST_API_VERSION;
}

/**
 * Before authentication: every answer (a 401 included) carries the version, the request's when it
 * names a known one, else the latest; after authentication `pinnedVersion` refines it.
 */
export function answerVersion() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const v = requestedVersion(req.get(VERSION_HEADER), null);
    res.set(VERSION_HEADER, v instanceof ApiProblem ? LATEST_API_VERSION : v);
    if (v instanceof ApiProblem) throw v;
    next();
  };
}

/** After authentication: the merchant's pinned version, unless the request names one. */
export function pinnedVersion() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const v = requestedVersion(req.get(VERSION_HEADER), (res.locals['merchantApiVersion'] as string | null | undefined) ?? null);
    if (v instanceof ApiProblem) throw v;
    res.locals['apiVersion'] = v;
    res.set(VERSION_HEADER, v);
    next();
  };
}
